"""Cluster states with device taints (KEP-5055) for the doctor's ``devices-tainted`` and
``device-taint-rule`` checks.

Each scenario is :mod:`tests.doctor.dra_states`' healthy DRA cluster (two nodes of 2 x L4, a pod
that got its GPU) with taints added: on the devices of a ResourceSlice, as the DRA driver writes
them (``spec.devices[].taints``, ``resource.k8s.io/v1`` ``Device.taints``), or as a
DeviceTaintRule (``resource.k8s.io/v1beta2``, ``spec.deviceSelector`` and ``spec.taint``; the
types are k8s.io/api ``resource/v1/types.go`` and ``resource/v1beta2/types.go`` as vendored in
openshift/microshift). The keys are those NVIDIA proposes for its health checks
(``gpu.nvidia.com/xid`` with the XID as value, ``gpu.nvidia.com/gpu-lost``;
NVIDIA/k8s-dra-driver-gpu issue #905), which it publishes with effect ``None``. The fixtures
``tests/doctor/fixtures/dra/taint-*.json`` are these states, written by::

    .venv/bin/python -m tests.doctor.taint_states

and a test keeps them equal to what this module builds.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from gpustack import dra_upstream as upstream
from tests.doctor import dra_states

JSON = dict[str, Any]
WHEN = "2026-01-01T00:03:00Z"
XID = {"key": "gpu.nvidia.com/xid", "value": "79", "effect": "None", "timeAdded": WHEN}
LOST = {"key": "gpu.nvidia.com/gpu-lost", "effect": "None", "timeAdded": WHEN}
DRAIN = {"key": "example.com/maintenance", "value": "drain", "effect": "NoSchedule"}


def tainted_slice(node: str, taints: dict[str, list[JSON]]) -> JSON:
    """``node``'s ResourceSlice with ``taints`` (device name -> its taints)."""
    body = dra_states.resource_slice(node)
    for device in body["spec"]["devices"]:
        if device["name"] in taints:
            device["taints"] = copy.deepcopy(taints[device["name"]])
    return body


def taint_rule(rule_name: str, taint: JSON, selector: JSON | None) -> JSON:
    spec: JSON = {"taint": taint}
    if selector is not None:
        spec["deviceSelector"] = selector
    return {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": rule_name},
        "spec": spec,
    }


def _with(*added: JSON, replaced: str | None = None) -> list[JSON]:
    """The healthy DRA cluster, its ResourceSlice of node ``replaced`` left out, plus ``added``."""
    kept = [
        o
        for o in dra_states.healthy()
        if not (o["kind"] == "ResourceSlice" and o["spec"]["nodeName"] == replaced)
    ]
    return [*kept, *added]


def gpu_lost() -> list[JSON]:
    """gpu-1 lost a GPU: NVIDIA's driver taints every GPU of the node."""
    return _with(tainted_slice("gpu-1", {"gpu-0": [LOST], "gpu-1": [LOST]}), replaced="gpu-1")


def xid_evicts() -> list[JSON]:
    """Both GPUs of gpu-2 had a fatal XID, tainted with effect NoExecute (an effect a driver
    may choose)."""
    taint = {**XID, "effect": "NoExecute"}
    return _with(tainted_slice("gpu-2", {"gpu-0": [taint], "gpu-1": [taint]}), replaced="gpu-2")


def one_xid() -> list[JSON]:
    """One GPU of gpu-2 had an XID, the other is fine: the node still has a device."""
    return _with(tainted_slice("gpu-2", {"gpu-0": [XID]}), replaced="gpu-2")


def drain_rule() -> list[JSON]:
    """An administrator drains pool gpu-2 of NVIDIA's driver."""
    selector = {"driver": upstream.GPU_DRIVER, "pool": "gpu-2"}
    return _with(taint_rule("drain-gpu-2", DRAIN, selector))


def informational_rule() -> list[JSON]:
    """A rule of effect None only informs: no finding."""
    return _with(taint_rule("note-gpu-2", {**DRAIN, "effect": "None"}, {"pool": "gpu-2"}))


def claim_kept_out() -> list[JSON]:
    """Every GPU of the driver drained, and a Pending pod whose request tolerates no drain."""
    req = dra_states.request(upstream.GPU_DEVICE_CLASS)
    made = f"{dra_states.POD}-gpu-x7k2q"
    return [
        *dra_states.device_classes(),
        dra_states.resource_slice("gpu-1"),
        dra_states.resource_slice("gpu-2"),
        taint_rule("drain-all-gpus", DRAIN, {"driver": upstream.GPU_DRIVER}),
        dra_states.template("single-gpu", req),
        dra_states.claim(made, req),
        dra_states.pod(dra_states.POD, "single-gpu", made),
        dra_states.unschedulable(dra_states.CANNOT),
    ]


SCENARIOS: dict[str, Callable[[], list[JSON]]] = {
    "taint-gpu-lost": gpu_lost,
    "taint-xid-evicts": xid_evicts,
    "taint-one-xid": one_xid,
    "taint-drain-rule": drain_rule,
    "taint-informational-rule": informational_rule,
    "taint-claim-kept-out": claim_kept_out,
}


def build(scenario: str) -> JSON:
    return dra_states.build(scenario, SCENARIOS)


def text(scenario: str) -> str:
    return dra_states.text(scenario, SCENARIOS)


if __name__ == "__main__":
    dra_states.write(SCENARIOS)
