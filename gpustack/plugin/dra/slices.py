"""The simulated GPUs as DRA devices and ResourceSlice bodies, in NVIDIA's driver's shape.

Names, attributes, value kinds and capacities follow :mod:`gpustack.plugin.dra.upstream`
(NVIDIA's GPU kubelet plugin without the DynamicMIG gate: one slice per node, pool = node name,
``gpu-<minor>`` devices). What NVML would report and the simulated config does not hold is
derived, deterministically, and the same for every run:

- ``architecture`` from the compute capability (:data:`ARCHITECTURE_BY_COMPUTE_CAPABILITY`);
- ``brand`` ``Nvidia`` (NVML's brand of data-centre GPUs since Ampere);
- ``driverVersion``/``cudaDriverVersion`` from the driver's flags (one driver per node);
- ``resource.kubernetes.io/pciBusID`` ``<domain>:<bus>:00.0`` with bus ``0x18 + 0x10 * (index
  % 14)`` and domain ``index // 14``, ``resource.kubernetes.io/pcieRoot`` ``pci<domain>:<bus - 1>``
  (each GPU behind its own root complex);
- ``addressingMode`` is not published (only coherent-memory platforms have it).

MIG-enabled simulated GPUs are not published: NVIDIA names MIG devices by GPU-instance profile
ID and placement and gives them engine-count capacities, which the simulated config does not
describe (yet); the driver logs which GPUs it leaves out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from gpustack import dra_upstream as upstream
from gpustack.plugin.devices import Gpu

RESOURCE_API_VERSION: Final = "resource.k8s.io/v1"
BRAND: Final = "Nvidia"
#: Architecture NVML reports for a compute capability: by ``major.minor``, else by ``major``.
ARCHITECTURE_BY_COMPUTE_CAPABILITY: Final = {
    "7.0": "Volta",
    "7.2": "Volta",
    "7.5": "Turing",
    "8.0": "Ampere",
    "8.6": "Ampere",
    "8.7": "Ampere",
    "8.9": "Ada Lovelace",
    "9": "Hopper",
    "10": "Blackwell",
    "11": "Blackwell",
    "12": "Blackwell",
}
_VERSION = re.compile(r"^([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?$")


def semver(text: str) -> str:
    """``major.minor.patch`` without leading zeros, as NVIDIA's driver publishes versions
    (Masterminds semver ``MustParse(text).String()``); raises ``ValueError``."""
    match = _VERSION.match(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a version like 570.158.01 or 12.8")
    return ".".join(str(int(part or "0")) for part in match.groups())


def architecture(compute_capability: str) -> str:
    major = compute_capability.split(".", 1)[0]
    return ARCHITECTURE_BY_COMPUTE_CAPABILITY.get(
        compute_capability, ARCHITECTURE_BY_COMPUTE_CAPABILITY.get(major, "Unknown")
    )


def binary_quantity(value: int) -> str:
    """``value`` as Kubernetes writes a BinarySI quantity: the largest power-of-1024 suffix that
    divides it exactly (``85520809984`` -> ``81559Mi``), plain below 1024."""
    if -1024 < value < 1024:
        return str(value)
    number, exponent = value, 0
    while number % 1024 == 0 and exponent < 6:
        number //= 1024
        exponent += 1
    return f"{number}{('', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei')[exponent]}"


#: GPUs per PCI domain in the simulated layout (keeps every bus number below 0x100).
GPUS_PER_DOMAIN: Final = 14


def _domain_and_bus(gpu: Gpu) -> tuple[int, int]:
    return gpu.index // GPUS_PER_DOMAIN, 0x18 + 0x10 * (gpu.index % GPUS_PER_DOMAIN)


def pci_bus_id(gpu: Gpu) -> str:
    domain, bus = _domain_and_bus(gpu)
    return f"{domain:04x}:{bus:02x}:00.0"


def pcie_root(gpu: Gpu) -> str:
    domain, bus = _domain_and_bus(gpu)
    return f"pci{domain:04x}:{bus - 1:02x}"


@dataclass(frozen=True)
class NodeDriver:
    """What is the same for every GPU on the node: the installed driver."""

    driver_version: str = "580.95.05"
    cuda_driver_version: str = "13.0"


def device_name(gpu: Gpu) -> str:
    return upstream.GPU_DEVICE_NAME.format(minor=gpu.minor)


def published(gpus: Iterable[Gpu]) -> list[Gpu]:
    """The GPUs the driver publishes (whole GPUs; MIG-enabled ones are left out)."""
    return [g for g in gpus if not g.mig_enabled]


def gpu_device(gpu: Gpu, node: NodeDriver) -> dict[str, Any]:
    """One ``resource.k8s.io/v1`` Device for a whole GPU."""
    values: dict[str, str] = {
        "type": upstream.TYPE_GPU,
        "uuid": gpu.uuid,
        "productName": gpu.product,
        "brand": BRAND,
        "architecture": architecture(gpu.compute_capability),
        "cudaComputeCapability": semver(gpu.compute_capability),
        "driverVersion": semver(node.driver_version),
        "cudaDriverVersion": semver(node.cuda_driver_version),
        upstream.PCI_BUS_ID: pci_bus_id(gpu),
        upstream.PCIE_ROOT: pcie_root(gpu),
    }
    kinds = {a.name: a.kind for a in upstream.GPU_ATTRIBUTES}
    return {
        "name": device_name(gpu),
        "attributes": {name: {kinds[name]: value} for name, value in values.items()},
        "capacity": {"memory": {"value": binary_quantity(gpu.memory_mib * 1024 * 1024)}},
    }


def slice_spec(
    driver: str, node_name: str, gpus: Iterable[Gpu], node: NodeDriver, generation: int = 1
) -> dict[str, Any]:
    """The ``spec`` of the node's one ResourceSlice (pool = node name, one slice)."""
    devices = [gpu_device(g, node) for g in sorted(published(gpus), key=lambda g: g.minor)]
    return {
        "driver": driver,
        "pool": {"name": node_name, "generation": generation, "resourceSliceCount": 1},
        "nodeName": node_name,
        "devices": devices,
    }


def generate_name(driver: str, node_name: str, index: int = 0) -> str:
    """``metadata.generateName`` as the resourceslice controller forms it."""
    return f"{index:0{upstream.SLICE_NAME_INDEX_DIGITS}x}-{driver}-{node_name}-"


def resource_slice(
    driver: str,
    node_name: str,
    node_uid: str,
    gpus: Iterable[Gpu],
    node: NodeDriver,
    generation: int = 1,
) -> dict[str, Any]:
    """A new ResourceSlice (to create): owned by its Node, named by the API server."""
    return {
        "apiVersion": RESOURCE_API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {
            "generateName": generate_name(driver, node_name),
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": node_name,
                    "uid": node_uid,
                    "controller": True,
                }
            ],
        },
        "spec": slice_spec(driver, node_name, gpus, node, generation),
    }


def same_devices(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two slice specs publish the same devices for the same pool name and node."""
    return (
        a.get("devices", []) == b.get("devices", [])
        and a.get("pool", {}).get("name") == b.get("pool", {}).get("name")
        and a.get("nodeName") == b.get("nodeName")
    )


def compute_domain_devices() -> list[dict[str, Any]]:
    """The devices NVIDIA's ComputeDomain kubelet plugin publishes on every node
    (``compute-domain.nvidia.com``): ``channel-0`` and ``daemon-0``, attributes ``type`` and
    ``id``. Not published by the simulated driver (no IMEX); for tests that stand in for it."""
    kinds = {a.name: a.kind for a in upstream.COMPUTE_DOMAIN_ATTRIBUTES}
    devices = []
    for name in upstream.COMPUTE_DOMAIN_DEVICE_NAMES:
        kind, _, number = name.rpartition("-")
        values: dict[str, str | int] = {"type": kind, "id": int(number)}
        devices.append({"name": name, "attributes": {k: {kinds[k]: v} for k, v in values.items()}})
    return devices
