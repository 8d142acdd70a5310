"""Rules on ``devicePlugin.sharing``: time-slicing and MPS, as NVIDIA's plugin applies them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from gpustack.profile.derive import (
    advertised_resources,
    shared_name,
    unshared_resources,
)
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile
from gpustack.profile.rules.common import MPS, TS, sharing_kind, sharing_sections


def nvidia_plugin_ignores_rename(p: Profile) -> Iterator[Finding]:
    # NVIDIA's plugin documents `rename` but drops it when it loads its config, so pods would
    # request a name nothing advertises (NVIDIA/k8s-device-plugin#1786); gpustack's honours it.
    if p.device_plugin.implementation != "nvidia":
        return
    for at, shared in sharing_sections(p):
        for i, res in enumerate(shared.resources):
            if not res.rename:
                continue
            kept = f"{res.name}.shared" if shared.rename_by_default else res.name
            yield Finding(
                (*at, "resources", i, "rename"),
                f"NVIDIA's device plugin ignores rename and would advertise {kept}, "
                f"not {res.rename}",
                "remove rename, or set devicePlugin.implementation: gpustack",
            )


def sharing_needs_two_replicas(p: Profile) -> Iterator[Finding]:
    # Time-slicing and MPS alike: NVIDIA's plugin rejects fewer than 2 replicas.
    for at, shared in sharing_sections(p):
        for i, res in enumerate(shared.resources):
            if res.replicas < 2:
                yield Finding(
                    (*at, "resources", i, "replicas"),
                    f"{res.replicas} replica shares nothing",
                    f"set replicas to 2 or more, or remove {sharing_kind(shared)}",
                )


def mps_needs_nvidia_plugin(p: Profile) -> Iterator[Finding]:
    dp = p.device_plugin
    if dp.mps is not None and dp.implementation != "nvidia":
        yield Finding(
            MPS,
            "gpustack's device plugin does not implement MPS sharing",
            "set devicePlugin.implementation: nvidia, or share GPUs with timeSlicing",
        )


def mps_excludes_time_slicing(p: Profile) -> Iterator[Finding]:
    # NVIDIA's plugin applies MPS and silently drops the time-slicing config.
    dp = p.device_plugin
    if dp.mps is not None and dp.time_slicing is not None:
        yield Finding(
            MPS,
            "MPS and time-slicing are mutually exclusive; NVIDIA's plugin would ignore timeSlicing",
            "keep either sharing.mps or sharing.timeSlicing",
        )


def mps_not_with_mig_devices(p: Profile) -> Iterator[Finding]:
    # NVIDIA's plugin shares only whole GPUs with MPS: not with mixed, and not with single on
    # MIG-partitioned GPUs, where nvidia.com/gpu stands for MIG devices.
    dp = p.device_plugin
    if dp.mps is None:
        return
    if dp.mig_strategy == "mixed":
        yield Finding(
            MPS,
            "NVIDIA's device plugin does not support MPS with migStrategy mixed",
            "set migStrategy: none and share whole GPUs, or remove sharing.mps",
        )
    elif dp.mig_strategy == "single" and p.gpus.mig:
        yield Finding(
            MPS,
            "MPS shares whole GPUs, but with migStrategy single and a MIG layout,"
            f" {dp.resource_name} stands for MIG devices",
            "set migStrategy: none on GPUs without MIG, or remove sharing.mps",
        )


def mps_shares_whole_gpus(p: Profile) -> Iterator[Finding]:
    dp = p.device_plugin
    if dp.mps is None:
        return
    seen: set[str] = set()
    for i, res in enumerate(dp.mps.resources):
        if res.name != dp.resource_name:
            yield Finding(
                (*MPS, "resources", i, "name"),
                f"MPS shares only whole GPUs ({dp.resource_name}), not {res.name}",
                f"set name: {dp.resource_name}",
            )
        elif res.name in seen:
            yield Finding(
                (*MPS, "resources", i, "name"),
                f"{res.name} is shared by MPS twice",
                "keep one entry per resource",
            )
        seen.add(res.name)


def time_slicing_resources_unique(p: Profile) -> Iterator[Finding]:
    ts = p.device_plugin.time_slicing
    if ts is None:
        return
    names = Counter(res.name for res in ts.resources)
    plain = unshared_resources(p)
    # Everything the plugin advertises, including shares of MIG resources no layout lists.
    advertised = Counter(advertised_resources(p)) + Counter(
        shared_name(p, res.name) for res in ts.resources if res.name not in plain
    )
    seen: set[str] = set()
    for i, res in enumerate(ts.resources):
        if names[res.name] > 1 and res.name in seen:
            yield Finding(
                (*TS, "resources", i, "name"),
                f"{res.name} is time-sliced twice",
                "keep one entry per resource",
            )
        elif res.rename and advertised[res.rename] > 1:
            yield Finding(
                (*TS, "resources", i, "rename"),
                f"{res.rename} would be advertised twice",
                "give each shared resource a rename no other resource is advertised under",
            )
        seen.add(res.name)


def time_slicing_resources_exist(p: Profile) -> Iterator[Finding]:
    ts = p.device_plugin.time_slicing
    if ts is None:
        return
    plain = unshared_resources(p)
    unknown_mig = p.device_plugin.mig_strategy == "mixed" and not p.gpus.mig
    for i, res in enumerate(ts.resources):
        if res.name in plain or (unknown_mig and res.name.startswith("nvidia.com/mig-")):
            continue
        yield Finding(
            (*TS, "resources", i, "name"),
            f"the device plugin has no resource {res.name} to share",
            f"share one of: {', '.join(plain)}",
        )
