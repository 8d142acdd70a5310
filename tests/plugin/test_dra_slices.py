"""The simulated GPUs' ResourceSlice: NVIDIA's shape, valid ``resource.k8s.io/v1`` for 1.34+.

Shape facts: :mod:`gpustack.plugin.dra.upstream` (NVIDIA dra-driver-nvidia-gpu v0.4.1).
Limits the schemas do not hold, from k8s.io/api/resource/v1/types.go (Kubernetes 1.36):
ResourceSliceMaxDevices 128, ResourceSliceMaxAttributesAndCapacitiesPerDevice 32,
DeviceMaxIDLength 32 (an attribute or capacity name after its domain),
DeviceAttributeMaxValueLength 64 (string and version values).
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from gpustack import dra_upstream as upstream
from gpustack.plugin.backends.simulated import SimulatedBackend
from gpustack.plugin.config import PluginConfig
from gpustack.plugin.config.extensions import MAX_GPUS
from gpustack.plugin.devices import Gpu
from gpustack.plugin.dra import slices
from tests.k8s_schema import errors

from .conftest import H100X8

KUBERNETES = ("1.34", "1.35", "1.36", "1.37")
SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def discover(doc: dict[str, Any]) -> list[Gpu]:
    return SimulatedBackend(PluginConfig.from_dict(doc)).discover()


def gpus_of(*specs: dict[str, Any]) -> list[Gpu]:
    return discover({"gpustack": {"backend": "simulated", "simulated": {"gpus": list(specs)}}})


def stored(body: dict[str, Any]) -> dict[str, Any]:
    """The object as the API server holds it (named)."""
    obj = copy.deepcopy(body)
    obj["metadata"]["name"] = obj["metadata"].pop("generateName") + "abcde"
    return obj


CASES: dict[str, tuple[list[Gpu], list[tuple[str, dict[str, Any]]]]] = {
    # name: (gpus, [(device name, expected attribute values by name)])
    "h100x8": (
        discover(H100X8),
        [(f"gpu-{i}", {"productName": "NVIDIA H100 80GB HBM3", "architecture": "Hopper",
                       "cudaComputeCapability": "9.0.0"}) for i in range(8)],
    ),
    "a100-and-l40s": (
        gpus_of(
            {"index": 0, "product": "NVIDIA A100-SXM4-80GB", "computeCapability": "8.0",
             "memoryMiB": 81920},
            {"index": 1, "product": "NVIDIA L40S", "computeCapability": "8.9", "memoryMiB": 46068},
        ),
        [("gpu-0", {"architecture": "Ampere", "cudaComputeCapability": "8.0.0"}),
         ("gpu-1", {"architecture": "Ada Lovelace", "productName": "NVIDIA L40S"})],
    ),
    "b200-mig-gpu-left-out": (
        gpus_of(
            {"index": 0, "product": "NVIDIA B200", "computeCapability": "10.0"},
            {"index": 1, "mig": {"enabled": True, "devices": {"1g.10gb": 7}}},
        ),
        [("gpu-0", {"architecture": "Blackwell", "cudaComputeCapability": "10.0.0"})],
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_devices_names_and_attribute_values(case: str) -> None:
    gpus, expected = CASES[case]
    spec = slices.slice_spec("gpu.nvidia.com", "node-a", gpus, slices.NodeDriver())
    assert [d["name"] for d in spec["devices"]] == [name for name, _ in expected]
    for device, (_, values) in zip(spec["devices"], expected, strict=True):
        attrs = device["attributes"]
        for name, value in values.items():
            assert next(iter(attrs[name].values())) == value, (device["name"], name)
        assert attrs["type"] == {"string": upstream.TYPE_GPU}
        assert attrs["brand"] == {"string": slices.BRAND}
        assert attrs["architecture"]["string"] in upstream.ARCHITECTURES


@pytest.mark.parametrize("case", CASES)
def test_attributes_are_nvidias(case: str) -> None:
    """Every attribute NVIDIA publishes unconditionally, with its value kind; nothing else."""
    gpus, _ = CASES[case]
    spec = slices.slice_spec("gpu.nvidia.com", "node-a", gpus, slices.NodeDriver())
    kinds = {a.name: a.kind for a in upstream.GPU_ATTRIBUTES}
    always = {a.name for a in upstream.GPU_ATTRIBUTES if not a.conditional}
    for device in spec["devices"]:
        names = set(device["attributes"])
        assert always <= names <= set(kinds), device["name"]
        for name, value in device["attributes"].items():
            assert list(value) == [kinds[name]], (device["name"], name)
            if kinds[name] == "version":
                assert SEMVER.match(value["version"]), value
        assert set(device["capacity"]) == set(upstream.GPU_CAPACITIES)


@pytest.mark.parametrize("case", CASES)
def test_api_limits(case: str) -> None:
    gpus, _ = CASES[case]
    spec = slices.slice_spec("gpu.nvidia.com", "node-a", gpus, slices.NodeDriver())
    assert len(spec["devices"]) <= 128
    for device in spec["devices"]:
        assert DNS_LABEL.match(device["name"]) and len(device["name"]) <= 63
        assert len(device["attributes"]) + len(device["capacity"]) <= 32
        for name in [*device["attributes"], *device["capacity"]]:
            assert len(name.rsplit("/", 1)[-1]) <= 32, name
        for value in device["attributes"].values():
            (text,) = value.values()
            assert not isinstance(text, str) or len(text) <= 64


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("kubernetes", KUBERNETES)
def test_slice_is_valid_resource_v1(case: str, kubernetes: str) -> None:
    gpus, _ = CASES[case]
    body = slices.resource_slice("gpu.nvidia.com", "node-a", "u-1", gpus, slices.NodeDriver())
    assert errors(stored(body), kubernetes) == []


@pytest.mark.parametrize(
    ("breakage", "expected"),
    [
        (lambda s: s["spec"]["pool"].pop("resourceSliceCount"), "resourceSliceCount"),
        (lambda s: s["spec"]["devices"][0]["attributes"]["uuid"].update({"strin": "x"}), "strin"),
        (lambda s: s["spec"]["devices"][0]["capacity"]["memory"].pop("value"), "value"),
        (lambda s: s["spec"].pop("driver"), "driver"),
    ],
    ids=["pool-count", "unknown-value-kind", "capacity-value", "driver"],
)
def test_the_schema_check_catches_a_broken_slice(breakage: Any, expected: str) -> None:
    body = stored(
        slices.resource_slice("gpu.nvidia.com", "n", "u", discover(H100X8), slices.NodeDriver())
    )
    breakage(body)
    found = errors(body, "1.34")
    assert found and expected in "\n".join(found)


def test_slice_metadata_and_pool() -> None:
    body = slices.resource_slice(
        "gpu.nvidia.com", "node-a", "u-1", discover(H100X8), slices.NodeDriver()
    )
    assert body["apiVersion"] == "resource.k8s.io/v1"
    assert body["metadata"]["generateName"] == "00000-gpu.nvidia.com-node-a-"
    assert body["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": "node-a", "uid": "u-1", "controller": True}
    ]
    assert body["spec"]["pool"] == {"name": "node-a", "generation": 1, "resourceSliceCount": 1}
    assert body["spec"]["nodeName"] == "node-a"
    assert body["spec"]["driver"] == "gpu.nvidia.com"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("9.0", "9.0.0"), ("570.158.01", "570.158.1"), ("12.8", "12.8.0"), ("13", "13.0.0"),
     ("580.95.05", "580.95.5")],
)  # fmt: skip
def test_semver_like_masterminds(text: str, expected: str) -> None:
    assert slices.semver(text) == expected


@pytest.mark.parametrize("text", ["", "v12", "1.2.3.4", "12.x"])
def test_semver_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="is not a version"):
        slices.semver(text)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(81559 * 2**20, "81559Mi"), (80 * 2**30, "80Gi"), (1, "1"), (1023, "1023"), (1024, "1Ki"),
     (1536, "1536"), (3 * 2**40, "3Ti")],
)  # fmt: skip
def test_binary_quantity_is_canonical(value: int, expected: str) -> None:
    assert slices.binary_quantity(value) == expected


def test_pci_attributes_are_unique_and_well_formed() -> None:
    """Up to the config's 64 GPUs: unique bus IDs in the BDF form NVIDIA's driver checks
    (deviceattribute/pci_linux.go verifyPCIBDFFormat), roots as ``pci<domain>:<bus>``."""
    many = gpus_of(*({"index": i} for i in range(MAX_GPUS)))
    devices = slices.slice_spec("d.example", "n", many, slices.NodeDriver())["devices"]
    bus_ids = [d["attributes"][upstream.PCI_BUS_ID]["string"] for d in devices]
    assert len(bus_ids) == MAX_GPUS == len(set(bus_ids))
    for bus_id in bus_ids:
        assert re.fullmatch(r"([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-9a-f]{1})", bus_id)
    for d in devices:
        root = d["attributes"][upstream.PCIE_ROOT]["string"]
        assert re.fullmatch(r"pci[0-9a-f]{4}:[0-9a-f]{2}", root)


def test_device_classes_select_the_simulated_gpus() -> None:
    """NVIDIA's gpu.nvidia.com DeviceClass CEL, read as the scheduler would for these devices
    (driver and the qualified ``type`` attribute; the expression's shape is pinned here)."""
    (gpu_class,) = [c for c in upstream.DEVICE_CLASSES if c.name == "gpu.nvidia.com"]
    match = re.fullmatch(
        r"device\.driver == '([^']+)' && device\.attributes\['([^']+)'\]\.type == '([^']+)'",
        gpu_class.cel,
    )
    assert match is not None
    driver, domain, kind = match.groups()
    spec = slices.slice_spec(upstream.GPU_DRIVER, "n", discover(H100X8), slices.NodeDriver())
    assert spec["driver"] == driver == domain
    assert all(d["attributes"]["type"]["string"] == kind for d in spec["devices"])


@pytest.mark.parametrize("kubernetes", KUBERNETES)
def test_compute_domain_devices(kubernetes: str) -> None:
    """NVIDIA's ComputeDomain slice for a node: valid, and what its DeviceClasses select."""
    body = slices.resource_slice(upstream.COMPUTE_DOMAIN_DRIVER, "n", "u", [], slices.NodeDriver())
    body["spec"]["devices"] = slices.compute_domain_devices()
    assert errors(stored(body), kubernetes) == []
    by_name = {d["name"]: d["attributes"] for d in body["spec"]["devices"]}
    assert by_name == {
        "channel-0": {"type": {"string": "channel"}, "id": {"int": 0}},
        "daemon-0": {"type": {"string": "daemon"}, "id": {"int": 0}},
    }
    classes = {c.name: c.cel for c in upstream.DEVICE_CLASSES}
    assert "type == 'channel'" in classes["compute-domain-default-channel.nvidia.com"]
    assert ".id == 0" in classes["compute-domain-default-channel.nvidia.com"]
    assert "type == 'daemon'" in classes["compute-domain-daemon.nvidia.com"]
