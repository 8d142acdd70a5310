"""A node selector of labels every node carries is completed to select GPU nodes (issue 31,
item 2).

A fleet overlay that selected ``topology.kubernetes.io/region: eu-west-1`` replaced the default
``nvidia.com/gpu.present: "true"``, and the driver, toolkit, device plugin and GFD landed on that
region's CPU nodes. A selector that nothing but platform-wide labels make up gets the default's
label added; a label that may name GPU nodes (a node pool, an accelerator, a hostname, a team's
own label) leaves the selector as written, and ``{}`` still selects every node.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpustack.profile import node_label_catalog as catalog
from gpustack.profile.model import Profile

GPU_PRESENT = ("nvidia.com/gpu.present", "true")


def selector(written: dict[str, str]) -> tuple[tuple[str, str], ...]:
    data: dict[str, Any] = {"metadata": {"name": "x"}, "cluster": {"nodeSelector": written}}
    return Profile.from_dict(data).cluster.node_selector


@pytest.mark.parametrize(
    "written",
    [
        {"topology.kubernetes.io/region": "eu-west-1"},
        {"topology.kubernetes.io/region": "eu-west-1", "topology.kubernetes.io/zone": "b"},
        {"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"},
        {"node-role.kubernetes.io/worker": ""},
        {"cloud.google.com/gke-os-distribution": "cos"},
        {"eks.amazonaws.com/capacityType": "ON_DEMAND"},
        {"feature.node.kubernetes.io/system-os_release.ID": "ubuntu"},
    ],
)
def test_a_platform_wide_selector_is_narrowed_to_gpu_nodes(written: dict[str, str]) -> None:
    got = selector(written)
    assert dict(got) == {**written, GPU_PRESENT[0]: GPU_PRESENT[1]}


@pytest.mark.parametrize(
    "written",
    [
        {},
        {"nvidia.com/gpu.present": "true", "topology.kubernetes.io/region": "us-east-1"},
        {"cloud.google.com/gke-accelerator": "nvidia-l4"},
        {"cloud.google.com/gke-nodepool": "gpu-pool", "topology.kubernetes.io/zone": "a"},
        {"eks.amazonaws.com/nodegroup": "gpu"},
        {"node.kubernetes.io/instance-type": "p5.48xlarge"},
        {"kubernetes.io/hostname": "gpu-7"},
        {"team.example.com/pool": "gpu", "topology.kubernetes.io/region": "eu-west-1"},
        {"feature.node.kubernetes.io/pci-10de.present": "true"},
    ],
)
def test_a_selector_that_may_name_gpu_nodes_is_used_as_written(written: dict[str, str]) -> None:
    assert dict(selector(written)) == written


def test_the_default_is_not_doubled() -> None:
    data: dict[str, Any] = {"metadata": {"name": "x"}}
    assert Profile.from_dict(data).cluster.node_selector == (GPU_PRESENT,)


@pytest.mark.parametrize(
    ("key", "wide"),
    [
        ("topology.kubernetes.io/region", True),
        ("kubernetes.io/hostname", False),
        ("cloud.google.com/gke-accelerator", False),
        ("cloud.google.com/gke-nodepool", False),
        ("kubernetes.azure.com/agentpool", False),
        ("kubernetes.azure.com/mode", True),
        ("nvidia.com/gpu.product", False),
    ],
)
def test_platform_wide_labels(key: str, wide: bool) -> None:
    assert catalog.platform_wide(key) is wide
