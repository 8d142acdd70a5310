"""The device plugin config file as frozen dataclasses: NVIDIA's format and the whole file.

Each field's JSON key, type, default, title, description and constraints are declared here with
:func:`gpustack.fields.key`; parsing (:func:`gpustack.fields.decode`), writing
(:func:`gpustack.fields.encode`) and ``schemas/device-plugin-config.schema.json``
(:mod:`gpustack.plugin.schema`) are derived from these declarations. Every default is the
documented default of the field; ``PluginConfig()`` is a valid, complete configuration (NVML
backend, ``nvidia.com/gpu``, envvar strategy).

The format is NVIDIA k8s-device-plugin's config ``version: v1`` (declared here) plus an
optional ``gpustack`` block (:mod:`.extensions`), so one file can be read by either plugin:
NVIDIA's gets it without that block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from gpustack.fields import DecodeError, decode, documented, encode, key
from gpustack.plugin.config.checks import ConfigError, check_config
from gpustack.plugin.config.extensions import GpustackExtensions
from gpustack.plugin.config.keys import abs_path, resource_name

#: The enums this file shares with the profile (which imports them from here).
MigStrategy = Literal["none", "single", "mixed"]
DeviceListStrategy = Literal["envvar", "volume-mounts", "cdi-annotations", "cdi-cri"]
DeviceIdStrategy = Literal["uuid", "index"]
AllocationPolicy = Literal["distributed", "packed"]
MIG_STRATEGIES: Final[tuple[str, ...]] = get_args(MigStrategy)
DEVICE_LIST_STRATEGIES: Final[tuple[str, ...]] = get_args(DeviceListStrategy)
DEVICE_ID_STRATEGIES: Final[tuple[str, ...]] = get_args(DeviceIdStrategy)
ALLOCATION_POLICIES: Final[tuple[str, ...]] = get_args(AllocationPolicy)

#: A shared resource's custom name: ``nvidia.com/<DNS subdomain>`` (the profile's rule).
RENAME: Final = r"^nvidia\.com/[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
#: Kubernetes allows 63 characters after the slash: ``nvidia.com/`` plus 63.
MAX_RENAME: Final = len("nvidia.com/") + 63


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
    container_driver_root: str = abs_path(
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
    nvidia_driver_root: str = abs_path(
        "NVIDIA driver root",
        "Host path of the driver root (/run/nvidia/driver with a driver container).",
        default="/",
    )
    nvidia_dev_root: str | None = abs_path(
        "NVIDIA device root",
        "Host prefix of /dev/nvidia* in DeviceSpecs; defaults to nvidiaDriverRoot when absent.",
        default=None,
        examples=["/"],
    )
    mps_root: str | None = abs_path(
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

    name: str = resource_name(
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
