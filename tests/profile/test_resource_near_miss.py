"""``devicePlugin.resourceName`` one slip away from a resource every workload requests
(issue #32: ``nvidia.com/gpus`` validated with gpustack's plugin, and pods asking for
``nvidia.com/gpu`` then found no node)."""

from __future__ import annotations

import pytest

from gpustack.profile.rules.common import near_miss

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


def test_the_example_hint_does_not_spread_the_slip() -> None:
    # the example asks for the right resource: the hint names the plugin's typo, never
    # "request one of: nvidia.com/gpus"
    from gpustack.profile.model import Profile
    from gpustack.profile.rules.device_plugin import resource_name_near_miss
    from gpustack.profile.rules.workloads import workload_resource_advertised

    p = Profile.from_dict(
        {
            "metadata": {"name": "p"},
            "devicePlugin": {"implementation": "gpustack", "resourceName": "nvidia.com/gpus"},
            "workloads": {
                "examples": [{"name": "smoke", "image": "x:1", "resourceName": "nvidia.com/gpu"}]
            },
        }
    )
    (slip,) = resource_name_near_miss(p)
    assert slip.path == ("devicePlugin", "resourceName")
    assert "did you mean nvidia.com/gpu?" in (slip.hint or "")
    (example,) = workload_resource_advertised(p)
    assert (
        example.hint == "fix devicePlugin.resourceName 'nvidia.com/gpus', a slip of nvidia.com/gpu"
    )
