"""Product names as ``nvidia-smi`` and GPU feature discovery spell them, mapped to the catalog's.

GFD labels ``nvidia.com/gpu.product`` with NVML's device name sanitised: characters outside
``[A-Za-z0-9-_. ]`` dropped, blanks joined by ``-`` (k8s-device-plugin v0.20.0,
internal/lm/resource.go ``sanitise``); it appends ``-SHARED`` under time-slicing or MPS and
``-MIG-<profile>`` under the single MIG strategy (internal/lm/mig-strategy_test.go).
"""

from __future__ import annotations

import pytest

from gpustack.profile import catalog

CASES = [
    ("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"),
    ("NVIDIA-H100-80GB-HBM3", "H100-SXM5-80GB"),
    ("NVIDIA-H100-PCIe", "H100-PCIE-80GB"),
    ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "A100-SXM4-40GB"),
    ("NVIDIA-A100-80GB-PCIe", "A100-PCIE-80GB"),
    ("Tesla-T4-SHARED", "T4"),
    ("NVIDIA-L4-SHARED", "L4"),
    ("NVIDIA-RTX-6000-Ada-Generation", "RTX-6000-ADA"),
    ("NVIDIA-GeForce-RTX-4090", "RTX-4090"),
    ("NVIDIA-H200", "H200-SXM-141GB"),
    ("NVIDIA-H200-NVL", "H200-NVL-141GB"),
    ("NVIDIA-H20", None),
    ("", None),
]


@pytest.mark.parametrize(("name", "product"), CASES)
def test_names_map_to_the_catalog(name: str, product: str | None) -> None:
    assert catalog.product_from_name(name) == product


def test_every_catalog_product_has_its_nvidia_smi_name() -> None:
    assert sorted(set(catalog.SMI_PRODUCT_NAMES.values())) == sorted(catalog.PRODUCTS)


@pytest.mark.parametrize(
    ("smi", "gfd"),
    [("NVIDIA A100 80GB PCIe", "NVIDIA-A100-80GB-PCIe"), ("Tesla  T4 (x)", "Tesla-T4-x")],
)
def test_gfd_sanitises_as_the_plugin_does(smi: str, gfd: str) -> None:
    assert catalog.gfd_product_name(smi) == gfd
