"""What gpustack knows about NVIDIA GPUs, drivers and CUDA, as data the rules can query.

Facts come from NVIDIA's CUDA release notes ("CUDA Toolkit and Corresponding Driver Versions"),
the CUDA minor-version-compatibility guide, the open-kernel-module announcements and the MIG user
guide. The schema's ``gpus.product`` and ``gpus.architecture`` enums are built from this module, so
adding a product here is all it takes to accept it in profiles.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

DriverVersion = tuple[int, ...]


def parse_driver(version: str) -> DriverVersion:
    """``"580.105.08"`` -> ``(580, 105, 8)``: compares correctly, unlike the string."""
    return tuple(int(part) for part in version.split("."))


@dataclass(frozen=True)
class Architecture:
    """A GPU architecture and what it demands of the driver and its kernel modules.

    ``first_cuda`` is the first CUDA release that targets the architecture and ``min_driver``
    the driver it needs (``None``: older than anything gpustack checks; Kepler to Pascal).
    ``open_modules`` says whether the open GPU kernel modules work (they need a GSP, Turing+);
    ``open_required`` whether the proprietary ones do not. ``max_cuda_major`` is the last CUDA
    major release that still targets the architecture (``None``: still supported), and
    ``last_driver_branch`` the last driver branch that still runs it: R470 for Kepler, R580 for
    Maxwell, Pascal and Volta (NVIDIA's legacy announcements; ``None``: still supported).
    """

    name: str
    compute_capability: str
    first_cuda: str | None
    min_driver: str | None
    open_modules: bool
    open_required: bool = False
    max_cuda_major: int | None = None
    last_driver_branch: int | None = None


def _legacy(
    name: str, cc: str, first_cuda: str | None, min_driver: str | None, max_cuda: int, branch: int
) -> Architecture:
    """A pre-Turing architecture: proprietary modules only, a last CUDA and a last driver branch."""
    return Architecture(
        name,
        cc,
        first_cuda,
        min_driver,
        open_modules=False,
        max_cuda_major=max_cuda,
        last_driver_branch=branch,
    )


ARCHITECTURES: dict[str, Architecture] = {
    a.name: a
    for a in (
        _legacy("kepler", "3.7", None, None, max_cuda=11, branch=470),
        _legacy("maxwell", "5.2", None, None, max_cuda=12, branch=580),
        _legacy("pascal", "6.0", None, None, max_cuda=12, branch=580),
        _legacy("volta", "7.0", "9.0", "384.81", max_cuda=12, branch=580),
        Architecture("turing", "7.5", "10.0", "410.48", open_modules=True),
        # GA100 (A100, A30); the GA10x products (sm_86) override first_cuda and min_driver.
        Architecture("ampere", "8.0", "11.0", "450.80.02", open_modules=True),
        Architecture("ada", "8.9", "11.8", "520.61.05", open_modules=True),
        Architecture("hopper", "9.0", "11.8", "520.61.05", open_modules=True),
        Architecture("blackwell", "10.0", "12.8", "570.26", open_modules=True, open_required=True),
    )
}


@dataclass(frozen=True)
class MigProfile:
    """One GPU-instance profile: compute slices (the ``Ng``) and memory slices it occupies."""

    compute: int
    memory: int


@dataclass(frozen=True)
class Product:
    """A GPU product as a profile names it (``gpus.product``).

    ``mig`` maps each GPU-instance profile (``1g.10gb``) to the slices it uses; empty means the
    product has no MIG. ``compute_slices``/``memory_slices`` are what one GPU offers.
    ``first_cuda``, ``min_driver`` and ``open_required`` override the architecture where a
    product is stricter.
    """

    name: str
    architecture: str
    memory_gb: int
    mig: dict[str, MigProfile] = field(default_factory=dict)
    compute_slices: int = 7
    memory_slices: int = 8
    min_driver: str | None = None
    open_required: bool = False
    compute_capability: str | None = None
    first_cuda: str | None = None

    @property
    def mig_capable(self) -> bool:
        return bool(self.mig)


def _mig(
    one: int, one_double: int, two: int, three: int, four: int, seven: int
) -> dict[str, MigProfile]:
    """The usual 7-slice MIG family, named by each profile's memory in GB."""
    return {
        f"1g.{one}gb": MigProfile(1, 1),
        f"1g.{one_double}gb": MigProfile(1, 2),
        f"2g.{two}gb": MigProfile(2, 2),
        f"3g.{three}gb": MigProfile(3, 4),
        f"4g.{four}gb": MigProfile(4, 4),
        f"7g.{seven}gb": MigProfile(7, 8),
    }


_A30_MIG = {"1g.6gb": MigProfile(1, 1), "2g.12gb": MigProfile(2, 2), "4g.24gb": MigProfile(4, 4)}


def _ga10x(name: str, memory_gb: int) -> Product:
    """An Ampere GA10x product (sm_86: A10, A10G, A40, ...): CUDA 11.1 and driver 455.23 were
    the first to support it, later than the GA100 (A100, A30) the architecture defaults are for."""
    return Product(
        name, "ampere", memory_gb, compute_capability="8.6", first_cuda="11.1", min_driver="455.23"
    )


PRODUCTS: dict[str, Product] = {
    p.name: p
    for p in (
        Product("K80", "kepler", 12),
        Product("M60", "maxwell", 8),
        Product("P4", "pascal", 8),
        Product("P100-PCIE-16GB", "pascal", 16),
        Product("V100-PCIE-16GB", "volta", 16),
        Product("V100-PCIE-32GB", "volta", 32),
        Product("V100-SXM2-16GB", "volta", 16),
        Product("V100-SXM2-32GB", "volta", 32),
        Product("T4", "turing", 16, compute_capability="7.5"),
        Product("T4G", "turing", 16, compute_capability="7.5"),
        _ga10x("A2", 16),
        _ga10x("A10", 24),
        _ga10x("A10G", 24),
        _ga10x("A16", 16),
        _ga10x("A40", 48),
        _ga10x("RTX-A6000", 48),
        Product("A30", "ampere", 24, mig=_A30_MIG, compute_slices=4, memory_slices=4),
        Product("A100-PCIE-40GB", "ampere", 40, mig=_mig(5, 10, 10, 20, 20, 40)),
        Product("A100-SXM4-40GB", "ampere", 40, mig=_mig(5, 10, 10, 20, 20, 40)),
        Product("A100-PCIE-80GB", "ampere", 80, mig=_mig(10, 20, 20, 40, 40, 80)),
        Product("A100-SXM4-80GB", "ampere", 80, mig=_mig(10, 20, 20, 40, 40, 80)),
        Product("L4", "ada", 24),
        Product("L40", "ada", 48),
        Product("L40S", "ada", 48),
        Product("RTX-4090", "ada", 24),
        Product("RTX-6000-ADA", "ada", 48),
        Product("H100-PCIE-80GB", "hopper", 80, mig=_mig(10, 20, 20, 40, 40, 80)),
        Product("H100-SXM5-80GB", "hopper", 80, mig=_mig(10, 20, 20, 40, 40, 80)),
        Product("H100-NVL-94GB", "hopper", 94, mig=_mig(12, 24, 24, 47, 47, 94)),
        Product("H200-SXM-141GB", "hopper", 141, mig=_mig(18, 35, 35, 71, 71, 141)),
        Product("H200-NVL-141GB", "hopper", 141, mig=_mig(18, 35, 35, 71, 71, 141)),
        Product("GH200-96GB", "hopper", 96, mig=_mig(12, 24, 24, 48, 48, 96), open_required=True),
        Product(
            "B200-SXM-180GB",
            "blackwell",
            180,
            mig=_mig(23, 45, 45, 90, 90, 180),
            min_driver="570.133.20",
        ),
        Product("GB200-186GB", "blackwell", 186, mig=_mig(23, 47, 47, 93, 93, 186)),
        Product("RTX-5090", "blackwell", 32, compute_capability="12.0"),
    )
}

#: The first driver release (R515) that shipped the open GPU kernel modules.
FIRST_OPEN_MODULE_DRIVER = "515.43.04"

#: ``nvidia-smi --query-gpu=name`` (NVML's device name) -> the catalog's product name. GPU
#: feature discovery labels nodes with the same name sanitised (:func:`gfd_product_name`:
#: ``NVIDIA H100 80GB HBM3`` -> ``nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3``), so
#: ``gpustack validate --state`` reads a node's product through this table.
SMI_PRODUCT_NAMES: dict[str, str] = {
    "Tesla K80": "K80",
    "Tesla M60": "M60",
    "Tesla P4": "P4",
    "Tesla P100-PCIE-16GB": "P100-PCIE-16GB",
    "Tesla V100-PCIE-16GB": "V100-PCIE-16GB",
    "Tesla V100-PCIE-32GB": "V100-PCIE-32GB",
    "Tesla V100-SXM2-16GB": "V100-SXM2-16GB",
    "Tesla V100-SXM2-32GB": "V100-SXM2-32GB",
    "Tesla T4": "T4",
    "NVIDIA T4G": "T4G",
    "NVIDIA A2": "A2",
    "NVIDIA A10": "A10",
    "NVIDIA A10G": "A10G",
    "NVIDIA A16": "A16",
    "NVIDIA A40": "A40",
    "NVIDIA RTX A6000": "RTX-A6000",
    "NVIDIA A30": "A30",
    "NVIDIA A100-PCIE-40GB": "A100-PCIE-40GB",
    "NVIDIA A100-SXM4-40GB": "A100-SXM4-40GB",
    "NVIDIA A100 80GB PCIe": "A100-PCIE-80GB",
    "NVIDIA A100-SXM4-80GB": "A100-SXM4-80GB",
    "NVIDIA L4": "L4",
    "NVIDIA L40": "L40",
    "NVIDIA L40S": "L40S",
    "NVIDIA GeForce RTX 4090": "RTX-4090",
    "NVIDIA RTX 6000 Ada Generation": "RTX-6000-ADA",
    "NVIDIA H100 PCIe": "H100-PCIE-80GB",
    "NVIDIA H100 80GB HBM3": "H100-SXM5-80GB",
    "NVIDIA H100 NVL": "H100-NVL-94GB",
    "NVIDIA H200": "H200-SXM-141GB",
    "NVIDIA H200 NVL": "H200-NVL-141GB",
    "NVIDIA GH200 480GB": "GH200-96GB",
    "NVIDIA B200": "B200-SXM-180GB",
    "NVIDIA GB200": "GB200-186GB",
    "NVIDIA GeForce RTX 5090": "RTX-5090",
}

#: Products only ever built into arm64 hosts (Grace superchips, AWS Graviton G5g), as the kubelet
#: reports it in ``status.nodeInfo.architecture``; the rest run on amd64 or arm64 servers.
PRODUCT_HOST_ARCH: dict[str, str] = {
    "GH200-96GB": "arm64",
    "GB200-186GB": "arm64",
    "T4G": "arm64",
}

#: GPU feature discovery's ``nvidia.com/gpu.family`` -> the catalog's architecture
#: (k8s-device-plugin v0.20.0 internal/lm/resource.go getArchFamily; only Ada differs).
GFD_FAMILIES: dict[str, str] = {**{a: a for a in ARCHITECTURES}, "ada-lovelace": "ada"}


def gfd_product_name(smi_name: str) -> str:
    """The ``nvidia.com/gpu.product`` label GPU feature discovery writes for a device name:
    characters outside ``[A-Za-z0-9-_. ]`` dropped, runs of blanks joined by one ``-``
    (k8s-device-plugin v0.20.0 internal/lm/resource.go ``sanitise``)."""
    kept = re.sub(r"[^A-Za-z0-9\-_. ]", "", smi_name)
    return "-".join(kept.split())


_GFD_PRODUCTS = {gfd_product_name(smi): product for smi, product in SMI_PRODUCT_NAMES.items()}
#: What GPU feature discovery appends to the product: ``-SHARED`` where the plugin shares the
#: GPU (time-slicing, MPS), ``-MIG-<profile>`` under the ``single`` MIG strategy.
_GFD_SUFFIX = re.compile(r"(-MIG-[0-9a-z.+]+)?(-SHARED)?$")


def product_from_name(name: str) -> str | None:
    """The catalog product for an ``nvidia-smi`` name or a GFD ``nvidia.com/gpu.product``
    label (with GFD's sharing and MIG suffixes); ``None`` for a product the catalog lacks."""
    if name in SMI_PRODUCT_NAMES:
        return SMI_PRODUCT_NAMES[name]
    return _GFD_PRODUCTS.get(_GFD_SUFFIX.sub("", gfd_product_name(name), count=1))


def product_suggestion(name: str, options: Iterable[str]) -> str | None:
    """A hint for ``name`` given where a catalog product is expected: when it is what
    ``nvidia-smi`` or GPU feature discovery call a product of ``options`` (``NVIDIA H100 80GB
    HBM3``, ``NVIDIA-H100-80GB-HBM3``), "did you mean" its catalog name; ``None`` otherwise.
    ``validate`` and ``init`` both offer it."""
    known = product_from_name(name)
    if known is None or known not in set(options) or known == name:
        return None
    return (
        f"did you mean {known!r}? {name!r} is what nvidia-smi and GPU feature discovery call it;"
        " a profile names the catalog product"
    )


@dataclass(frozen=True)
class Interconnect:
    """How a product's GPUs in one node reach each other: NVLink (SXM boards) or PCIe.

    ``gbps`` is the link's peak bandwidth per GPU and direction in GB/s (NVIDIA's data sheets
    give NVLink's both ways: 900 GB/s for NVLink 4 is 450 each way; PCIe x16 is ~2 GB/s per
    lane-generation step: 16, 32, 64). ``efficiency`` is the share of it an NCCL all-reduce's
    bus bandwidth reaches at large messages: ~80 % over NVLink, less over PCIe, where the ring
    often crosses the CPU's root complex. :func:`expected_busbw` multiplies the two.
    """

    name: str
    gbps: float
    efficiency: float


INTERCONNECTS: dict[str, Interconnect] = {
    i.name: i
    for i in (
        Interconnect("pcie3", 16, 0.6),
        Interconnect("pcie4", 32, 0.6),
        Interconnect("pcie5", 64, 0.6),
        Interconnect("nvlink2", 150, 0.8),
        Interconnect("nvlink3", 300, 0.8),
        Interconnect("nvlink4", 450, 0.8),
        Interconnect("nvlink5", 900, 0.8),
    )
}

#: Each product's GPU-to-GPU interconnect within a node (SXM boards: their NVLink generation;
#: PCIe cards: their PCIe generation, NVLink bridges between pairs not counted, since an
#: all-reduce over more than two cards runs over PCIe).
PRODUCT_INTERCONNECT: dict[str, str] = {
    "K80": "pcie3",
    "M60": "pcie3",
    "P4": "pcie3",
    "P100-PCIE-16GB": "pcie3",
    "V100-PCIE-16GB": "pcie3",
    "V100-PCIE-32GB": "pcie3",
    "V100-SXM2-16GB": "nvlink2",
    "V100-SXM2-32GB": "nvlink2",
    "T4": "pcie3",
    "T4G": "pcie3",
    "A2": "pcie4",
    "A10": "pcie4",
    "A10G": "pcie4",
    "A16": "pcie4",
    "A40": "pcie4",
    "RTX-A6000": "pcie4",
    "A30": "pcie4",
    "A100-PCIE-40GB": "pcie4",
    "A100-SXM4-40GB": "nvlink3",
    "A100-PCIE-80GB": "pcie4",
    "A100-SXM4-80GB": "nvlink3",
    "L4": "pcie4",
    "L40": "pcie4",
    "L40S": "pcie4",
    "RTX-4090": "pcie4",
    "RTX-6000-ADA": "pcie4",
    "H100-PCIE-80GB": "pcie5",
    "H100-SXM5-80GB": "nvlink4",
    "H100-NVL-94GB": "pcie5",
    "H200-SXM-141GB": "nvlink4",
    "H200-NVL-141GB": "pcie5",
    "GH200-96GB": "pcie5",
    "B200-SXM-180GB": "nvlink5",
    "GB200-186GB": "nvlink5",
    "RTX-5090": "pcie5",
}


def expected_busbw(product: str) -> tuple[Interconnect, float] | None:
    """The product's interconnect and the all-reduce bus bandwidth (GB/s) it should reach."""
    link = INTERCONNECTS.get(PRODUCT_INTERCONNECT.get(product, ""))
    return (link, link.gbps * link.efficiency) if link else None
