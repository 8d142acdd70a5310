"""Rules on ``devicePlugin``: which implementation and backend, and the names it advertises.

Sharing (time-slicing, MPS) has its own module, :mod:`gpustack.profile.rules.sharing`.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.plugin.config.keys import GPU_RESOURCE, MAX_RESOURCE_NAME
from gpustack.profile.finding import Finding
from gpustack.profile.loader import JsonPath
from gpustack.profile.model import Profile
from gpustack.profile.rules.common import (
    DP,
    example_path,
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
            yield Finding(
                path,
                f"{name!r} is not a valid resource name",
                "use nvidia.com/<name>: lowercase letters, digits, '-' and '.', at most "
                f"{MAX_RESOURCE_NAME} characters in all, e.g. nvidia.com/gpu.shared",
            )
