"""``devicePlugin.resourceName`` one slip away from a resource every workload requests
(issue #32: ``nvidia.com/gpus`` validated with gpustack's plugin, and pods asking for
``nvidia.com/gpu`` then found no node)."""

from __future__ import annotations

import pytest

from gpustack.profile.rules.device_plugin import near_miss

SLIPS = {
    "nvidia.com/gpus": "nvidia.com/gpu",  # a letter added
    "nvidia.com/gp": "nvidia.com/gpu",  # dropped
    "nvidia.com/gpy": "nvidia.com/gpu",  # changed
    "nvidia.com/gup": "nvidia.com/gpu",  # two swapped
    "nvidia.com/GPU": "nvidia.com/gpu",  # the case
    "nvidia.com/gpu.shard": "nvidia.com/gpu.shared",
    "nvidia.com/gpu_shared": "nvidia.com/gpu.shared",
}
OWN_NAMES = [
    "nvidia.com/gpu",
    "nvidia.com/gpu.shared",
    "nvidia.com/gpu-lab",
    "nvidia.com/gpu-small",
    "nvidia.com/shared",
    "nvidia.com/mig-1g.10gb",
    "nvidia.com/gpu-a",
]


@pytest.mark.parametrize(("name", "known"), SLIPS.items(), ids=SLIPS.keys())
def test_a_slip_of_a_well_known_resource_is_found(name: str, known: str) -> None:
    assert near_miss(name) == known


@pytest.mark.parametrize("name", OWN_NAMES)
def test_names_of_ones_own_are_no_slip(name: str) -> None:
    assert near_miss(name) is None
