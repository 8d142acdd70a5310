"""Rules on ``devicePlugin``: which implementation and backend, and the names it advertises.

Sharing (time-slicing, MPS) has its own module, :mod:`gpustack.profile.rules.sharing`.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.plugin.config.keys import GPU_RESOURCE, MAX_RESOURCE_NAME
from gpustack.profile.document import JsonPath
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile
from gpustack.profile.rules.common import (
    DP,
    example_path,
    near_miss,
    sharing_sections,
    well_formed,
)


def simulated_needs_gpustack(p: Profile) -> Iterator[Finding]:
    dp = p.device_plugin
    if dp.backend == "simulated" and dp.implementation != "gpustack":
        yield Finding(
            (DP, "backend"),
            "the simulated backend exists only in gpustack's device plugin",
            "set devicePlugin.implementation: gpustack, or backend: nvml",
        )


def nvidia_plugin_resource_name(p: Profile) -> Iterator[Finding]:
    dp = p.device_plugin
    if dp.implementation == "nvidia" and dp.resource_name != GPU_RESOURCE:
        yield Finding(
            (DP, "resourceName"),
            "NVIDIA's device plugin always advertises nvidia.com/gpu",
            "remove resourceName, or use implementation: gpustack",
        )


def resource_name_near_miss(p: Profile) -> Iterator[Finding]:
    """``resourceName: nvidia.com/gpus`` is well formed, so it validated: the plugin then
    advertised a resource no workload asks for, and every pod requesting ``nvidia.com/gpu``
    stayed Pending (issue #32)."""
    name = p.device_plugin.resource_name
    known = near_miss(name) if well_formed(name) else None
    if known is not None:
        yield Finding(
            (DP, "resourceName"),
            f"{name!r} is a slip of {known}, the resource GPU workloads request: pods asking "
            f"for {known} would find no node",
            f"did you mean {known}? a resource of your own needs a name that differs by more, "
            "e.g. nvidia.com/gpu-lab",
        )


def resource_names_well_formed(p: Profile) -> Iterator[Finding]:
    dp = p.device_plugin
    named: list[tuple[JsonPath, str]] = [((DP, "resourceName"), dp.resource_name)]
    for at, shared in sharing_sections(p):
        for i, res in enumerate(shared.resources):
            named.append(((*at, "resources", i, "name"), res.name))
            if res.rename:
                named.append(((*at, "resources", i, "rename"), res.rename))
    for i, ex in enumerate(p.workloads.examples):
        if ex.resource_name:
            named.append((example_path(i, "resourceName"), ex.resource_name))
    for path, name in named:
        if not well_formed(name):
            known = near_miss(name)
            yield Finding(
                path,
                f"{name!r} is not a valid resource name",
                (f"did you mean {known}? " if known else "")
                + "use nvidia.com/<name>: lowercase letters, digits, '-' and '.', at most "
                f"{MAX_RESOURCE_NAME} characters in all, e.g. nvidia.com/gpu.shared",
            )
