"""The e2e tier's fake nodes, checked without a control plane (issue 31, item 4).

The tier's nodes must be written from what the real components publish, not from gpustack's
model of a node: a GPU node's capacity comes from the device plugin ConfigMap the folder ships,
read as the plugin that mounts it reads it (:mod:`tests.e2e.advertised`); a GPU pool's nodes
carry its taints, a CPU node never a GPU pool's labels; an OpenShift node runs one of the RHCOS
builds the profile names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gpustack.profile import derive
from tests.e2e import folder as tier
from tests.e2e import gfd
from tests.e2e.advertised import node_gpus, nvidia_plugin
from tests.e2e.folder import Folder, folders

FOLDERS = folders()


def capacities() -> dict[tuple[str, str], dict[str, str]]:
    out = {}
    for path in FOLDERS:
        f = Folder.load(path)
        for node, pool in f.pools().items():
            out[(f.name, node)] = f.gpu_resources(pool)
    return out


def _off_by_one(
    real: Callable[[Any, str], tuple[int, str] | None],
) -> Callable[[Any, str], tuple[int, str] | None]:
    def broken(view: Any, name: str) -> tuple[int, str] | None:
        found = real(view, name)
        return (found[0] + 1, found[1]) if found else found

    return broken


def test_breaking_gpustacks_resource_derivation_does_not_move_the_nodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Job binding was circular: the nodes' capacity came from the derivation that sized the
    Jobs. A wrong count there must not reach the nodes."""
    before = capacities()
    broken = _off_by_one(derive.node_capacity)
    monkeypatch.setattr(derive, "node_capacity", broken)
    monkeypatch.setattr(tier, "node_capacity", broken, raising=False)  # where it was imported
    assert capacities() == before


def test_every_gpu_node_of_a_folder_with_a_plugin_has_capacity() -> None:
    seen = capacities()
    with_plugin = {
        (f.name, node)
        for f in map(Folder.load, FOLDERS)
        for node, pool in f.pools().items()
        if pool != tier.DRA_POOL
        and any(d.startswith("nvidia-device-plugin") for d in f.daemonsets())
    }
    assert with_plugin and all(seen[key] for key in with_plugin), [
        k for k in with_plugin if not seen[k]
    ]


# --- NVIDIA's plugin, as v0.20.0 reads its config ------------------------------------------


def test_time_slicing_renames_by_default_and_multiplies() -> None:
    config = {
        "flags": {"migStrategy": "none"},
        "sharing": {
            "timeSlicing": {
                "renameByDefault": True,
                "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
            }
        },
    }
    assert nvidia_plugin(config, node_gpus(2, {})) == {"nvidia.com/gpu.shared": 8}


def test_time_slicing_without_rename_keeps_the_name() -> None:
    config = {"sharing": {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 3}]}}}
    assert nvidia_plugin(config, node_gpus(2, {})) == {"nvidia.com/gpu": 6}


def test_some_devices_shared_the_rest_whole() -> None:
    config = {
        "sharing": {
            "timeSlicing": {
                "resources": [
                    {"name": "nvidia.com/gpu", "rename": "nvidia.com/gpu.half", "replicas": 2,
                     "devices": 1}
                ]
            }
        }
    }  # fmt: skip
    assert nvidia_plugin(config, node_gpus(4, {})) == {
        "nvidia.com/gpu": 3,
        "nvidia.com/gpu.half": 2,
    }


@pytest.mark.parametrize(
    ("strategy", "want"),
    [
        ("none", {"nvidia.com/gpu": 2}),
        ("single", {"nvidia.com/gpu": 14}),
        ("mixed", {"nvidia.com/mig-1g.10gb": 14}),
    ],
)
def test_mig_strategies(strategy: str, want: dict[str, int]) -> None:
    config = {"flags": {"migStrategy": strategy}}
    assert nvidia_plugin(config, node_gpus(2, {"1g.10gb": 7})) == want


# --- the nodes' labels and taints ----------------------------------------------------------


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Folder]:
    from tests.e2e.variants import VARIANTS, synthesize

    root = tmp_path_factory.mktemp("variants")
    synthesize(root)
    return {
        name: Folder.load(root / "dist" / "clusters" / name, root / "profiles", v.node_labels)
        for name, v in VARIANTS.items()
    }


def test_a_profile_that_looks_like_gke_meets_gke(variants: dict[str, Folder]) -> None:
    f = variants["lab-1gpu-gke-looking"]
    assert f.on_gke()
    assert tier.GKE_GPU_TAINT in f.gpu_node_taints()
    assert "cloud.google.com/gke-accelerator" in f.gpu_node_labels("fresh", None, "gpu-0")
    assert f.cpu_node_labels() == {}  # a CPU node is in no GPU pool
    quota = [o for o in f.of_kind("ResourceQuota")]
    assert quota, "GKE admits no critical pod without the quota"


def test_a_region_selector_keeps_the_stack_off_that_regions_cpu_nodes(
    variants: dict[str, Folder],
) -> None:
    f = variants["lab-1gpu-region"]
    cpu = f.cpu_node_labels()
    assert cpu == {"topology.kubernetes.io/region": "eu-west-1"}
    for d in f.of_kind("DaemonSet"):
        if d["metadata"]["name"] in f.gpu_stack():
            selector = d["spec"]["template"]["spec"].get("nodeSelector") or {}
            assert not selector.items() <= cpu.items(), d["metadata"]["name"]


def test_gke_folders_taint_their_gpu_nodes() -> None:
    f = Folder.load(tier.CLUSTERS / "gke-host-driver")
    assert f.on_gke() and tier.GKE_GPU_TAINT in f.gpu_node_taints()
    assert not Folder.load(tier.CLUSTERS / "lab-1gpu").gpu_node_taints()


def test_an_openshift_node_runs_the_second_build_and_its_driver() -> None:
    f = Folder.load(tier.CLUSTERS / "openshift-crio-hooks")
    first, second = f.rhcos_builds()
    assert f.node_build("gpu-0") == first and f.node_build("gpu-1") == second
    label = "feature.node.kubernetes.io/system-os_release.OSTREE_VERSION"
    assert f.gpu_node_labels("fresh", None, "gpu-1")[label] == second
    drivers = {d for d in f.daemonsets() if d.startswith("nvidia-driver-daemonset")}
    assert drivers == {
        "nvidia-driver-daemonset",
        f"nvidia-driver-daemonset-{second.replace('.', '-')}",
    }
    assert f.expected_on_node("gpu-1", None) & drivers == {
        f"nvidia-driver-daemonset-{second.replace('.', '-')}"
    }


# --- GPU feature discovery, as v0.20.0 labels ----------------------------------------------


def test_gfd_names_the_board_as_nvml_does() -> None:
    got = gfd.labels("H100-SXM5-80GB", 8, {}, "580.105.08", {})
    assert got["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert (got["nvidia.com/gpu.family"], got["nvidia.com/gpu.count"]) == ("hopper", "8")
    assert got["nvidia.com/cuda.driver-version.full"] == "580.105.08"
    assert gfd.labels("L4", 1, {}, "580.105.08", {})["nvidia.com/gpu.family"] == "ada-lovelace"


@pytest.mark.parametrize(
    ("rename", "product"),
    [({}, "NVIDIA-L4-SHARED"), ({"renameByDefault": True}, "NVIDIA-L4")],
)
def test_gfd_marks_a_shared_board_unless_renamed(rename: dict[str, Any], product: str) -> None:
    config = {"sharing": {"timeSlicing": {**rename, "resources": [
        {"name": "nvidia.com/gpu", "replicas": 4}]}}}  # fmt: skip
    got = gfd.labels("L4", 2, {}, "580.105.08", config)
    assert got["nvidia.com/gpu.product"] == product
    assert (got["nvidia.com/gpu.replicas"], got["nvidia.com/gpu.sharing-strategy"]) == (
        "4",
        "time-slicing",
    )


def test_gfd_under_single_mig_names_the_slice() -> None:
    config = {"flags": {"migStrategy": "single"}}
    got = gfd.labels("A100-SXM4-80GB", 8, {"1g.10gb": 7}, "580.105.08", config)
    assert got["nvidia.com/gpu.product"] == "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"
    assert got["nvidia.com/gpu.count"] == "56"
    assert got["nvidia.com/mig.strategy"] == "single"
