"""The upstream facts agree with NVIDIA's own end-to-end checks of its ResourceSlices.

NVIDIA's driver (dra-driver-nvidia-gpu v0.4.1) asserts the exact attribute set of a published GPU
and MIG device in tests/bats/test_gpu_basic.bats ("inspect device attributes in resource slice
(gpu)") and tests/bats/test_gpu_mig.bats ("StaticMIG: inspect device attributes ..."), on
machines where every conditional attribute is present. Those lists, copied here as data, are a
second source for gpustack/plugin/dra/upstream.py, which was read from deviceinfo.go and mig.go.
"""

from __future__ import annotations

import re

import pytest

from gpustack import dra_upstream as upstream

BATS_GPU = {
    "architecture", "brand", "cudaComputeCapability", "cudaDriverVersion", "driverVersion",
    "productName", "resource.kubernetes.io/pciBusID", "resource.kubernetes.io/pcieRoot", "type",
    "uuid", "addressingMode",
}  # fmt: skip
BATS_MIG = BATS_GPU | {"parentUUID", "profile"}


@pytest.mark.parametrize(
    ("attributes", "reference"),
    [(upstream.GPU_ATTRIBUTES, BATS_GPU), (upstream.MIG_ATTRIBUTES, BATS_MIG)],
    ids=["gpu", "mig"],
)
def test_attribute_sets_match_nvidias_checks(
    attributes: tuple[upstream.Attribute, ...], reference: set[str]
) -> None:
    names = [a.name for a in attributes]
    assert len(names) == len(set(names))
    assert set(names) == reference


def test_device_classes_use_published_attributes_only() -> None:
    published = {
        upstream.GPU_DRIVER: {a.name for a in upstream.GPU_ATTRIBUTES + upstream.MIG_ATTRIBUTES},
        upstream.COMPUTE_DOMAIN_DRIVER: {a.name for a in upstream.COMPUTE_DOMAIN_ATTRIBUTES},
    }
    for device_class in upstream.DEVICE_CLASSES:
        (driver,) = re.findall(r"device\.driver == '([^']+)'", device_class.cel)
        for domain, name in re.findall(r"device\.attributes\['([^']+)'\]\.(\w+)", device_class.cel):
            assert domain == driver, device_class.name
            assert name in published[driver], (device_class.name, name)


@pytest.mark.parametrize(
    ("template", "values", "expected"),
    [
        (upstream.GPU_DEVICE_NAME, {"minor": 3}, "gpu-3"),
        (upstream.MIG_DEVICE_NAME,
         {"minor": 0, "profile": "1g10gb", "profile_id": 19, "placement_start": 0},
         "gpu-0-mig-1g10gb-19-0"),
        (upstream.REGISTRATION_SOCKET, {"driver": "gpu.nvidia.com"}, "gpu.nvidia.com-reg.sock"),
        (upstream.CDI_VENDOR, {"driver": "gpu.nvidia.com"}, "k8s.gpu.nvidia.com"),
    ],
)  # fmt: skip
def test_name_templates(template: str, values: dict[str, object], expected: str) -> None:
    assert template.format(**values) == expected


def test_kubelet_plugin_may_do_what_gpustacks_simulation_needs() -> None:
    """gpustack's simulated driver asks for no verb NVIDIA's kubelet plugin does not have."""
    from gpustack.plugin.dra.kubeapi import RBAC_RULES

    nvidia = {(g, r): set(v) for g, r, v in upstream.KUBELET_PLUGIN_CLUSTER_RULES}
    for group, resource, verbs in RBAC_RULES:
        assert set(verbs) <= nvidia[(group, resource)], (group, resource)
