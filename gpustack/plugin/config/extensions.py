"""The ``gpustack`` block of the plugin config file: settings NVIDIA's plugin does not have.

The backend (NVML or simulated GPUs), the resource name for whole GPUs and XID health checks.
NVIDIA's plugin gets its file without this block; gpustack's plugin applies these defaults when
it is absent (:attr:`gpustack.plugin.config.PluginConfig.extensions`).
"""

from __future__ import annotations

import uuid as uuidlib
from dataclasses import dataclass
from typing import Annotated, Final, Literal, get_args

from gpustack.fields import MAP, Spec, documented, item, key
from gpustack.plugin.config.keys import GPU_RESOURCE, abs_path, resource_name

#: Shared with the profile (which imports them from :mod:`gpustack.plugin.config`).
Backend = Literal["nvml", "simulated"]
BACKENDS: Final[tuple[str, ...]] = get_args(Backend)
#: XIDs caused by applications, not hardware (NVIDIA's default ignore list).
DEFAULT_IGNORED_XIDS: Final = (13, 31, 43, 45, 68, 109)

GPU_UUID: Final = (
    r"^GPU-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
#: GPU-instance MIG profile names as NVML prints them, e.g. ``1g.10gb`` or ``1g.10gb+me``.
MIG_PROFILE: Final = r"^[1-7]g\.[0-9]+gb(\+me)?$"
MAX_GPUS: Final = 64


@dataclass(frozen=True)
class HealthConfig:
    """``gpustack.health``: XID-based health checking."""

    enabled: bool = key(
        "Enabled",
        "Watch NVML (or the simulated events file) and mark failing GPUs Unhealthy.",
        default=True,
    )
    ignored_xids: tuple[Annotated[int, item(minimum=1, maximum=65535)], ...] = key(
        "Ignored XIDs",
        "XIDs that never make a GPU unhealthy (application faults, not hardware faults).",
        default=DEFAULT_IGNORED_XIDS,
        unique_items=True,
    )


@dataclass(frozen=True)
class MigLayout:
    """``mig`` of a simulated GPU: whether MIG mode is on and its instances by profile."""

    enabled: bool = key(
        "Enabled", "Whether MIG mode is on; required when devices are listed.", default=False
    )
    #: Profile name to number of instances, in the order given (e.g. ``(("1g.10gb", 7),)``).
    devices: Annotated[tuple[tuple[str, Annotated[int, item(minimum=1, maximum=7)]], ...], MAP] = (
        key(
            "Devices",
            "MIG profile name to number of instances; at most 7 GPU slices in all.",
            factory=tuple,
            keys=Spec(pattern=MIG_PROFILE, hint="a MIG profile name like '1g.10gb'"),
            examples=[{"1g.10gb": 7}, {"3g.40gb": 1, "2g.20gb": 2}],
        )
    )


@documented(
    "Simulated GPU",
    "One GPU of the simulated backend; defaults describe an H100 80GB SXM on NUMA node 0.",
)
@dataclass(frozen=True)
class SimulatedGpu:
    """One GPU of the simulated backend."""

    index: int = key(
        "Index",
        "The GPU's index on the node; unique.",
        minimum=0,
        maximum=MAX_GPUS - 1,
        fix="give every simulated GPU its index (0, 1, …)",
    )
    #: Empty means derived deterministically from index and product (``__post_init__``).
    uuid: str = key(
        "UUID",
        "The GPU's UUID; derived deterministically from index and product when absent.",
        default="",
        document_default=False,
        pattern=GPU_UUID,
        hint="a GPU UUID like GPU-xxxxxxxx-…",
        examples=["GPU-c56b59c4-0507-57f9-8fd8-3dd7d00bb95a"],
    )
    product: str = key(
        "Product",
        "Product name as NVML reports it.",
        default="NVIDIA H100 80GB HBM3",
        min_length=1,
        pattern=r"\S",
        hint="a product name, e.g. NVIDIA H100 80GB HBM3",
    )
    memory_mib: int = key(
        "Memory (MiB)", "Total framebuffer memory.", default=81559, minimum=1, name="memoryMiB"
    )
    compute_capability: str = key(
        "Compute capability",
        "CUDA compute capability, major.minor (quote it in YAML).",
        default="9.0",
        pattern=r"^[0-9]+\.[0-9]+$",
        hint="a compute capability like '9.0' (quote it in YAML)",
    )
    numa_node: int | None = key(
        "NUMA node",
        "NUMA node of the PCI device; null when the platform reports none.",
        default=0,
        minimum=0,
        maximum=1023,
        nullable=True,
    )
    nvlink_peers: tuple[Annotated[int, item(minimum=0, maximum=MAX_GPUS - 1)], ...] = key(
        "NVLink peers",
        "Indices of the other simulated GPUs this one has NVLink connections to.",
        factory=tuple,
        unique_items=True,
    )
    mig: MigLayout = key(
        "MIG layout",
        "MIG mode of a simulated GPU and its instances by profile.",
        factory=MigLayout,
        document_default=False,
    )

    def __post_init__(self) -> None:
        if not self.uuid:
            object.__setattr__(self, "uuid", simulated_uuid(self.index, self.product))


@dataclass(frozen=True)
class SimulatedBackend:
    """``gpustack.simulated``: a GPU-less backend for tests, demos and CI."""

    events_file: str | None = abs_path(
        "Events file",
        "File the plugin follows for injected health events ('xid <uuid> <xid>', "
        "'recover <uuid>'); absent disables injection.",
        default=None,
        examples=["/run/gpustack/simulated-events"],
    )
    gpus: tuple[SimulatedGpu, ...] = key(
        "GPUs", "The simulated GPUs, at most 64.", factory=tuple, max_items=MAX_GPUS
    )


@dataclass(frozen=True)
class GpustackExtensions:
    """``gpustack``: settings NVIDIA's plugin does not have."""

    resource_name: str = resource_name(
        "Resource name",
        "Resource advertised for whole GPUs (NVIDIA hard-codes nvidia.com/gpu).",
        default=GPU_RESOURCE,
    )
    backend: Backend = key(
        "Backend",
        "nvml for real GPUs, simulated for the GPUs listed under simulated.",
        default="nvml",
    )
    health: HealthConfig = key(
        "Health checking",
        "XID-based health checking of GPUs.",
        factory=HealthConfig,
        document_default=False,
    )
    simulated: SimulatedBackend = key(
        "Simulated backend",
        "GPUs of the simulated backend, used only when backend is simulated.",
        factory=SimulatedBackend,
        document_default=False,
    )


def simulated_uuid(index: int, product: str) -> str:
    """A stable, real-looking GPU UUID for a simulated GPU."""
    return "GPU-" + str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"gpustack-sim/{index}/{product}"))
