"""Preparing a ResourceClaim: which of its devices are ours, and the claim's CDI spec.

Like NVIDIA's GPU kubelet plugin (cmd/gpu-kubelet-plugin/cdi.go), every prepared claim gets one
transient CDI spec of kind ``k8s.<driver>/claim``, file ``k8s.<driver>-claim_<claim uid>`` in
the CDI root, with one device ``<claim uid>-<device name>`` per allocated device; the IDs
returned to the kubelet are ``k8s.<driver>/claim=<claim uid>-<device name>``. Unpreparing
removes the file. Simulated GPUs have no device nodes, so each CDI device sets
``GPUSTACK_SIMULATED_DEVICE_<index>=<uuid>`` (the variable the simulated device plugin's spec
sets, :func:`gpustack.plugin.cdi.simulated_env_name`), and the common edits set
``NVIDIA_VISIBLE_DEVICES=void``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpustack import dra_upstream as upstream
from gpustack.plugin import cdi
from gpustack.plugin.devices import Gpu


class ClaimError(RuntimeError):
    """This claim cannot be prepared; the message goes back to the kubelet for the claim."""


@dataclass(frozen=True)
class PreparedDevice:
    requests: tuple[str, ...]
    pool: str
    device: str
    cdi_id: str


def vendor(driver: str) -> str:
    return upstream.CDI_VENDOR.format(driver=driver)


def spec_file(driver: str, claim_uid: str) -> str:
    transient = claim_uid.replace("/", "_")
    return f"{vendor(driver)}-{upstream.CDI_CLASS}_{transient}.json"


def base_request(name: str) -> str:
    """``gpu/large`` (a subrequest of a prioritized list) → ``gpu``, as the kubelet helper does."""
    return name.split("/", 1)[0]


def our_devices(
    claim: Mapping[str, Any], uid: str, driver: str, pool: str, gpus: Mapping[str, Gpu]
) -> list[tuple[str, str, Gpu]]:
    """(request, device name, GPU) for each result of ``claim`` that this driver and node serve.

    Raises :class:`ClaimError` for a replaced or unallocated claim, or a device this node does
    not have."""
    meta = claim.get("metadata") or {}
    if meta.get("uid") != uid:
        raise ClaimError(
            f"claim {meta.get('namespace')}/{meta.get('name')} got replaced "
            f"(UID {meta.get('uid')}, kubelet asked for {uid})"
        )
    allocation = (claim.get("status") or {}).get("allocation")
    if not allocation:
        raise ClaimError(f"claim {meta.get('namespace')}/{meta.get('name')} is not allocated")
    found: list[tuple[str, str, Gpu]] = []
    for result in (allocation.get("devices") or {}).get("results") or []:
        if result.get("driver") != driver:
            continue
        name = str(result.get("device", ""))
        if result.get("pool") != pool or name not in gpus:
            raise ClaimError(
                f"device {result.get('pool')}/{name} of claim {meta.get('namespace')}/"
                f"{meta.get('name')} is not one of node {pool}'s {driver} devices"
            )
        found.append((str(result.get("request", "")), name, gpus[name]))
    return found


def build_spec(driver: str, uid: str, devices: list[tuple[str, str, Gpu]]) -> dict[str, Any]:
    named: dict[str, dict[str, Any]] = {}
    for _, name, gpu in devices:
        env = f"{cdi.simulated_env_name(str(gpu.index))}={gpu.uuid}"
        named[f"{uid}-{name}"] = {"name": f"{uid}-{name}", "containerEdits": {"env": [env]}}
    spec: dict[str, Any] = {
        "cdiVersion": "",
        "kind": f"{vendor(driver)}/{upstream.CDI_CLASS}",
        "devices": [named[n] for n in sorted(named)],
        "containerEdits": {"env": ["NVIDIA_VISIBLE_DEVICES=void"]},
    }
    spec["cdiVersion"] = cdi.required_version(spec)
    return spec


def prepare(
    cdi_root: str, driver: str, pool: str, uid: str, devices: list[tuple[str, str, Gpu]]
) -> list[PreparedDevice]:
    """Write the claim's spec (none when no device is ours) and return the devices' CDI IDs."""
    if devices:
        cdi.write_spec(cdi_root, build_spec(driver, uid, devices), spec_file(driver, uid))
    kind = f"{vendor(driver)}/{upstream.CDI_CLASS}"
    return [
        PreparedDevice(
            requests=(base_request(request),),
            pool=pool,
            device=name,
            cdi_id=f"{kind}={uid}-{name}",
        )
        for request, name, _ in devices
    ]


def unprepare(cdi_root: str, driver: str, uid: str) -> None:
    """Remove the claim's spec; unpreparing twice (or a claim never prepared) is fine."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(cdi_root, spec_file(driver, uid)))
