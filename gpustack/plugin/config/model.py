"""The device plugin config file as frozen dataclasses: every key declared once.

Each field's JSON key, type, default, title, description and constraints are declared here with
:func:`gpustack.fields.key`; parsing (:func:`gpustack.fields.decode`), writing
(:func:`gpustack.fields.encode`) and ``schemas/device-plugin-config.schema.json``
(:mod:`gpustack.plugin.schema`) are derived from these declarations. Every default is the
documented default of the field; ``PluginConfig()`` is a valid, complete configuration (NVML
backend, ``nvidia.com/gpu``, envvar strategy).

The format is NVIDIA k8s-device-plugin's config ``version: v1`` plus an optional ``gpustack``
block, so one file can be read by either plugin: NVIDIA's gets it without that block.
"""

from __future__ import annotations

import uuid as uuidlib
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, get_args

from gpustack.fields import MAP, DecodeError, Spec, decode, documented, encode, item, key
from gpustack.plugin.config.checks import ConfigError, check_config

#: The enums this file shares with the profile (which imports them from here).
MigStrategy = Literal["none", "single", "mixed"]
DeviceListStrategy = Literal["envvar", "volume-mounts", "cdi-annotations", "cdi-cri"]
DeviceIdStrategy = Literal["uuid", "index"]
AllocationPolicy = Literal["distributed", "packed"]
Backend = Literal["nvml", "simulated"]
MIG_STRATEGIES: Final[tuple[str, ...]] = get_args(MigStrategy)
DEVICE_LIST_STRATEGIES: Final[tuple[str, ...]] = get_args(DeviceListStrategy)
DEVICE_ID_STRATEGIES: Final[tuple[str, ...]] = get_args(DeviceIdStrategy)
ALLOCATION_POLICIES: Final[tuple[str, ...]] = get_args(AllocationPolicy)
BACKENDS: Final[tuple[str, ...]] = get_args(Backend)
#: XIDs caused by applications, not hardware (NVIDIA's default ignore list).
DEFAULT_IGNORED_XIDS: Final = (13, 31, 43, 45, 68, 109)

#: Extended resource name: ``<domain>/<name>``, at most 63 characters in all.
RESOURCE_NAME: Final = (
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"  # domain
    r"/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"  # name
)
#: A shared resource's custom name: ``nvidia.com/<DNS subdomain>`` (the profile's rule).
RENAME: Final = r"^nvidia\.com/[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
GPU_UUID: Final = (
    r"^GPU-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
#: GPU-instance MIG profile names as NVML prints them, e.g. ``1g.10gb`` or ``1g.10gb+me``.
MIG_PROFILE: Final = r"^[1-7]g\.[0-9]+gb(\+me)?$"
MAX_RESOURCE_NAME: Final = 63
#: Kubernetes allows 63 characters after the slash: ``nvidia.com/`` plus 63.
MAX_RENAME: Final = len("nvidia.com/") + 63
MAX_GPUS: Final = 64

_PATH = "an absolute path; start it with '/'"


def _abs_path(title: str, description: str, **spec: Any) -> Any:
    return key(title, description, pattern="^/", hint=_PATH, **spec)


def _resource_name(title: str, description: str, **spec: Any) -> Any:
    return key(
        title,
        description,
        pattern=RESOURCE_NAME,
        hint="a resource name like 'nvidia.com/gpu'",
        max_length=MAX_RESOURCE_NAME,
        **spec,
    )


@dataclass(frozen=True)
class PluginFlags:
    """``flags.plugin``: how Allocate answers the kubelet."""

    pass_device_specs: bool = key(
        "Pass device specs",
        "Return /dev/nvidia* DeviceSpecs in Allocate (needed with the kubelet CPU manager; the "
        "plugin then needs privileges).",
        default=False,
    )
    device_list_strategy: tuple[DeviceListStrategy, ...] = key(
        "Device list strategy",
        "How allocated devices reach the container: one strategy name or a list of distinct "
        "names. cdi-annotations and cdi-cri name devices k8s.device-plugin.nvidia.com/gpu=<id> "
        "(id per deviceIDStrategy); gpustack's plugin then writes the CDI spec for that kind "
        "(k8s.device-plugin.nvidia.com-gpu.json under --cdi-root, default /var/run/cdi) before "
        "it serves.",
        default=("envvar",),
        one_or_many=True,
        min_items=1,
        unique_items=True,
        fix="name at least one strategy, e.g. [envvar]",
        examples=["envvar", ["volume-mounts"], ["cdi-annotations", "envvar"]],
    )
    device_id_strategy: DeviceIdStrategy = key(
        "Device ID strategy",
        "Name devices by UUID (stable across reboots) or by index.",
        default="uuid",
        name="deviceIDStrategy",
    )
    cdi_annotation_prefix: str = key(
        "CDI annotation prefix",
        "Annotation key prefix used by the cdi-annotations strategy; must end in '/'.",
        default="cdi.k8s.io/",
        pattern="^[a-z0-9.-]+/$",
        hint="an annotation prefix ending in '/', like 'cdi.k8s.io/'",
    )
    container_driver_root: str = _abs_path(
        "Container driver root",
        "Where the host driver root is mounted inside the plugin container.",
        default="/driver-root",
    )
    shared_devices_allocation_policy: AllocationPolicy = key(
        "Shared devices allocation policy",
        "For replicas and MIG devices: spread over devices, then physical GPUs (distributed), "
        "or fill one GPU first (packed).",
        default="distributed",
    )


@dataclass(frozen=True)
class Flags:
    """``flags``: NVIDIA-compatible global settings."""

    mig_strategy: MigStrategy = key(
        "MIG strategy",
        "none: whole GPUs; single: every MIG device as the GPU resource; mixed: one "
        "nvidia.com/mig-<profile> resource per profile.",
        default="none",
    )
    fail_on_init_error: bool = key(
        "Fail on init error",
        "Exit when NVML cannot be initialised; false logs the error and waits (for DaemonSets "
        "deployed to every node).",
        default=True,
    )
    nvidia_driver_root: str = _abs_path(
        "NVIDIA driver root",
        "Host path of the driver root (/run/nvidia/driver with a driver container).",
        default="/",
    )
    nvidia_dev_root: str | None = _abs_path(
        "NVIDIA device root",
        "Host prefix of /dev/nvidia* in DeviceSpecs; defaults to nvidiaDriverRoot when absent.",
        default=None,
        examples=["/"],
    )
    mps_root: str | None = _abs_path(
        "MPS root",
        "Host folder of the MPS control daemon's pipes and shared memory, for sharing.mps "
        "(NVIDIA's plugin only; gpustack's plugin does not use it).",
        default=None,
        examples=["/run/nvidia/mps"],
    )
    plugin: PluginFlags = key(
        "Allocate options",
        "flags.plugin: how Allocate hands devices to containers.",
        factory=PluginFlags,
        document_default=False,
    )

    @property
    def dev_root(self) -> str:
        """The effective device root (``nvidia_dev_root`` or else the driver root)."""
        return self.nvidia_dev_root if self.nvidia_dev_root is not None else self.nvidia_driver_root


@documented("Shared resource", "One resource whose devices are each advertised replicas times.")
@dataclass(frozen=True)
class ReplicatedResource:
    """One shared resource: each device is advertised ``replicas`` times."""

    name: str = _resource_name(
        "Resource name",
        "The resource to share: gpustack.resourceName or a nvidia.com/mig-<profile> name.",
        fix="every shared resource needs name and replicas",
        examples=["nvidia.com/gpu"],
    )
    replicas: int = key(
        "Replicas",
        "How many pods may share each device.",
        minimum=2,
        maximum=1024,
        fix="every shared resource needs name and replicas",
        examples=[4],
    )
    rename: str | None = key(
        "Rename",
        "Advertise the shared resource under this name instead (wins over renameByDefault): "
        "nvidia.com/ then a DNS subdomain of at most 63 characters; no other resource may use it.",
        default=None,
        pattern=RENAME,
        hint="a resource name like 'nvidia.com/gpu-small' (nvidia.com/, then lowercase letters,"
        " digits, '-' and '.')",
        max_length=MAX_RENAME,
        examples=["nvidia.com/gpu-small", "nvidia.com/mig-1g.10gb.shared"],
    )


@dataclass(frozen=True, kw_only=True)
class ReplicatedResources:
    """``sharing.timeSlicing`` or ``sharing.mps`` (NVIDIA's ``ReplicatedResources``): the
    resources whose devices are advertised several times (keyword-only: ``resources`` is
    required but comes last, in the file's order)."""

    rename_by_default: bool = key(
        "Rename by default",
        "Advertise shared resources as <name>.shared so pods opt in explicitly.",
        default=False,
    )
    fail_requests_greater_than_one: bool = key(
        "Fail requests greater than one",
        "Reject containers asking for more than one replica (more replicas give no more GPU time).",
        default=False,
    )
    resources: tuple[ReplicatedResource, ...] = key(
        "Resources",
        "The resources to share; at least one, each named once.",
        min_items=1,
        fix="list the resources to share, e.g. [{name: nvidia.com/gpu, replicas: 2}]",
    )

    def replicas_for(self, resource: str) -> int:
        """Replica count for ``resource`` (1 when it is not shared)."""
        for res in self.resources:
            if res.name == resource:
                return res.replicas
        return 1

    def advertised_name(self, resource: str) -> str:
        """Name ``resource`` is advertised under: its ``rename``, which wins over
        ``renameByDefault`` (``<name>.shared``); unshared resources keep their name."""
        for res in self.resources:
            if res.name == resource:
                if res.rename is not None:
                    return res.rename
                return f"{resource}.shared" if self.rename_by_default else resource
        return resource


#: ``sharing.timeSlicing`` has NVIDIA's ``ReplicatedResources`` shape (as has ``sharing.mps``).
TimeSlicing = ReplicatedResources


@dataclass(frozen=True)
class Sharing:
    """``sharing``: GPU oversubscription; both ``None`` means every device is exclusive."""

    time_slicing: ReplicatedResources | None = key(
        "Time-slicing",
        "Oversubscribe GPUs by advertising each device several times.",
        default=None,
    )
    mps: ReplicatedResources | None = key(
        "MPS",
        "CUDA MPS, in the shape of timeSlicing: each replica is an MPS client limited to "
        "1/replicas of the GPU's memory and compute. NVIDIA's plugin only (with its MPS control "
        "daemon and flags.mpsRoot); gpustack's plugin refuses a config that has it.",
        default=None,
    )


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

    events_file: str | None = _abs_path(
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

    resource_name: str = _resource_name(
        "Resource name",
        "Resource advertised for whole GPUs (NVIDIA hard-codes nvidia.com/gpu).",
        default="nvidia.com/gpu",
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


_DEFAULT_EXTENSIONS: Final = GpustackExtensions()


@dataclass(frozen=True)
class PluginConfig:
    """The whole plugin configuration file."""

    version: str = key(
        "Version", "Config format version; only v1 exists.", default="v1", const="v1"
    )
    flags: Flags = key(
        "Flags",
        "NVIDIA-compatible global settings; an explicitly set command-line flag or environment "
        "variable overrides them.",
        factory=Flags,
        document_default=False,
    )
    sharing: Sharing = key(
        "Sharing",
        "GPU oversubscription; absent means every device is exclusive.",
        factory=Sharing,
        document_default=False,
    )
    #: ``None`` (absent): NVIDIA's plugin's file; gpustack's plugin uses the defaults.
    gpustack: GpustackExtensions | None = key(
        "gpustack extensions", "Settings NVIDIA's device plugin does not have.", default=None
    )

    @property
    def extensions(self) -> GpustackExtensions:
        """The ``gpustack`` block as gpustack's plugin applies it: its defaults when absent."""
        return self.gpustack if self.gpustack is not None else _DEFAULT_EXTENSIONS

    @classmethod
    def from_dict(cls, data: Any) -> PluginConfig:
        """Parse and validate a decoded config document; raises ``ConfigError``.

        Both plugins' files parse: a ``sharing.mps`` block is accepted here, and refused only
        where gpustack's plugin loads its file (:func:`gpustack.plugin.config.load_config`).
        """
        try:
            config = decode(cls, data, strict=True)
        except DecodeError as exc:
            raise ConfigError(exc.path, exc.message) from None
        check_config(config)
        return config

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form in the file's key order; ``from_dict(to_dict())`` round-trips."""
        return encode(self)


def simulated_uuid(index: int, product: str) -> str:
    """A stable, real-looking GPU UUID for a simulated GPU."""
    return "GPU-" + str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"gpustack-sim/{index}/{product}"))
