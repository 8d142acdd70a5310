"""Typed configuration of the gpustack device plugin.

The file format is NVIDIA k8s-device-plugin's config ``version: v1`` (the subset the plugin
implements) plus a ``gpustack:`` block for our extensions, so one ConfigMap can be read by
either plugin's tooling. This module is shared with the synth constructs, which render the
ConfigMap from ``PluginConfig.to_dict()``; it therefore imports only the standard library and
PyYAML, and its parser mirrors ``schemas/device-plugin-config.schema.json`` by hand (the plugin
image ships no jsonschema). Tests keep the two in agreement.

Every default below is the documented default of the field; ``PluginConfig()`` is a valid,
complete configuration (NVML backend, ``nvidia.com/gpu``, envvar strategy).
"""

from __future__ import annotations

import difflib
import re
import uuid as uuidlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, get_args

import yaml

__all__ = [
    "DEFAULT_IGNORED_XIDS",
    "DEVICE_ID_STRATEGIES",
    "DEVICE_LIST_STRATEGIES",
    "MIG_STRATEGIES",
    "ConfigError",
    "Flags",
    "GpustackExtensions",
    "HealthConfig",
    "MigLayout",
    "PluginConfig",
    "PluginFlags",
    "ReplicatedResource",
    "Sharing",
    "SimulatedBackend",
    "SimulatedGpu",
    "TimeSlicing",
    "load_config",
    "simulated_uuid",
]

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
RESOURCE_NAME_RE: Final = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"
)
#: A time-sliced resource's custom name: ``nvidia.com/<DNS subdomain>`` (the profile's rule).
RENAME_RE: Final = re.compile(
    r"^nvidia\.com/[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
#: Kubernetes allows 63 characters after the slash: ``nvidia.com/`` plus 63.
MAX_RENAME: Final = len("nvidia.com/") + 63
GPU_UUID_RE: Final = re.compile(
    r"^GPU-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
#: GPU-instance MIG profile names as NVML prints them, e.g. ``1g.10gb`` or ``1g.10gb+me``.
MIG_PROFILE_RE: Final = re.compile(r"^[1-7]g\.[0-9]+gb(\+me)?$")
COMPUTE_CAPABILITY_RE: Final = re.compile(r"^[0-9]+\.[0-9]+$")
CDI_PREFIX_RE: Final = re.compile(r"^[a-z0-9.-]+/$")
MAX_RESOURCE_NAME: Final = 63
MAX_GPUS: Final = 64
MAX_MIG_SLICES: Final = 7


class ConfigError(ValueError):
    """A configuration value is wrong; ``path`` is a JSON path, ``message`` says how to fix it."""

    def __init__(self, path: str, message: str, source: str | None = None) -> None:
        self.path = path
        self.message = message
        self.source = source
        where = f"{source}: {path}" if source else path
        super().__init__(f"{where}: {message}")


# ---------------------------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PluginFlags:
    """``flags.plugin``: how Allocate answers the kubelet."""

    #: Return ``/dev/nvidia*`` DeviceSpecs (needed with the CPU manager; needs privileges).
    pass_device_specs: bool = False
    #: How devices reach the container; any of envvar, volume-mounts, cdi-annotations, cdi-cri.
    device_list_strategy: tuple[str, ...] = ("envvar",)
    #: Name devices by ``uuid`` (stable across reboots) or ``index``.
    device_id_strategy: str = "uuid"
    #: Annotation key prefix for the cdi-annotations strategy.
    cdi_annotation_prefix: str = "cdi.k8s.io/"
    #: Where the host driver root is mounted inside the plugin container.
    container_driver_root: str = "/driver-root"
    #: Spread replicas over devices, then GPUs (``distributed``), or fill one GPU (``packed``).
    shared_devices_allocation_policy: str = "distributed"


@dataclass(frozen=True)
class Flags:
    """``flags``: NVIDIA-compatible global settings."""

    #: ``none`` (whole GPUs), ``single`` (MIG devices as nvidia.com/gpu) or ``mixed``.
    mig_strategy: str = "none"
    #: Exit on NVML init failure; ``False`` logs and waits (deploy-everywhere DaemonSets).
    fail_on_init_error: bool = True
    #: Host path of the driver root (``/run/nvidia/driver`` with a driver container).
    nvidia_driver_root: str = "/"
    #: Host prefix of ``/dev/nvidia*`` in DeviceSpecs; ``None`` means ``nvidia_driver_root``.
    nvidia_dev_root: str | None = None
    plugin: PluginFlags = field(default_factory=PluginFlags)

    @property
    def dev_root(self) -> str:
        """The effective device root (``nvidia_dev_root`` or else the driver root)."""
        return self.nvidia_dev_root if self.nvidia_dev_root is not None else self.nvidia_driver_root


@dataclass(frozen=True)
class ReplicatedResource:
    """One time-sliced resource: each device is advertised ``replicas`` times."""

    name: str = "nvidia.com/gpu"
    replicas: int = 2
    #: Advertise the shared resource under this name instead; ``None`` keeps ``name`` (or
    #: ``<name>.shared`` with ``renameByDefault``). Lets pods pick e.g. ``nvidia.com/gpu-small``.
    rename: str | None = None


@dataclass(frozen=True)
class TimeSlicing:
    """``sharing.timeSlicing``: oversubscribe GPUs by advertising replicas."""

    #: Advertise shared resources as ``<name>.shared`` so pods opt in explicitly.
    rename_by_default: bool = False
    #: Reject requests for more than one replica (they would not get more GPU time).
    fail_requests_greater_than_one: bool = False
    resources: tuple[ReplicatedResource, ...] = ()

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


@dataclass(frozen=True)
class Sharing:
    """``sharing``: GPU oversubscription; ``None`` means every device is exclusive."""

    time_slicing: TimeSlicing | None = None


@dataclass(frozen=True)
class HealthConfig:
    """``gpustack.health``: XID-based health checking."""

    #: Watch NVML (or the simulated events file) and mark failing GPUs Unhealthy.
    enabled: bool = True
    #: XIDs that never make a GPU unhealthy (application faults, not hardware).
    ignored_xids: tuple[int, ...] = DEFAULT_IGNORED_XIDS


@dataclass(frozen=True)
class MigLayout:
    """``mig`` of a simulated GPU: whether MIG mode is on and its instances by profile."""

    enabled: bool = False
    #: Profile name to number of instances, in the order given (e.g. ``(("1g.10gb", 7),)``).
    devices: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class SimulatedGpu:
    """One GPU of the simulated backend; defaults describe an H100 80GB SXM on NUMA node 0."""

    index: int = 0
    #: ``GPU-…`` UUID; empty means derived deterministically from index and product.
    uuid: str = ""
    product: str = "NVIDIA H100 80GB HBM3"
    memory_mib: int = 81559
    compute_capability: str = "9.0"
    #: NUMA node of the PCI device; ``None`` means the platform reports none.
    numa_node: int | None = 0
    #: Indices of GPUs this one has NVLink connections to.
    nvlink_peers: tuple[int, ...] = ()
    mig: MigLayout = field(default_factory=MigLayout)

    def __post_init__(self) -> None:
        if not self.uuid:
            object.__setattr__(self, "uuid", simulated_uuid(self.index, self.product))


@dataclass(frozen=True)
class SimulatedBackend:
    """``gpustack.simulated``: a GPU-less backend for tests, demos and CI."""

    #: File the plugin tails for injected health events; ``None`` disables injection.
    events_file: str | None = None
    gpus: tuple[SimulatedGpu, ...] = ()


@dataclass(frozen=True)
class GpustackExtensions:
    """``gpustack``: settings NVIDIA's plugin does not have."""

    #: Resource name advertised for whole GPUs (NVIDIA hard-codes ``nvidia.com/gpu``).
    resource_name: str = "nvidia.com/gpu"
    #: ``nvml`` (real GPUs) or ``simulated`` (the GPUs listed under ``simulated``).
    backend: str = "nvml"
    health: HealthConfig = field(default_factory=HealthConfig)
    simulated: SimulatedBackend = field(default_factory=SimulatedBackend)


@dataclass(frozen=True)
class PluginConfig:
    """The whole plugin configuration file."""

    version: str = "v1"
    flags: Flags = field(default_factory=Flags)
    sharing: Sharing = field(default_factory=Sharing)
    gpustack: GpustackExtensions = field(default_factory=GpustackExtensions)

    @classmethod
    def from_dict(cls, data: Any) -> PluginConfig:
        """Parse and validate a decoded config document; raises ``ConfigError``."""
        return _parse_config(data)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form in the file's key order; ``from_dict(to_dict())`` round-trips."""
        return _dump_config(self)


def simulated_uuid(index: int, product: str) -> str:
    """A stable, real-looking GPU UUID for a simulated GPU."""
    return "GPU-" + str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"gpustack-sim/{index}/{product}"))


def load_config(path: str | Path) -> PluginConfig:
    """Read a YAML (or JSON) config file; every error names the file."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError("$", f"cannot read file: {exc.strerror}", source) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            "$", f"not UTF-8 text (bad byte at offset {exc.start}); save the file as UTF-8", source
        ) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError("$", f"invalid YAML: {problem}; fix the syntax", where) from None
    try:
        return _parse_config({} if data is None else data)
    except ConfigError as exc:
        raise ConfigError(exc.path, exc.message, source) from None


# ---------------------------------------------------------------------------------------------
# Parsing: each helper checks one JSON type and names the path on failure.
# ---------------------------------------------------------------------------------------------


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__


def _obj(value: Any, path: str, allowed: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(path, f"expected a mapping, got {_kind(value)}")
    for key in value:
        if not isinstance(key, str):
            raise ConfigError(path, f"keys must be strings, got {_kind(key)} {key!r}")
        if key not in allowed:
            close = difflib.get_close_matches(key, allowed, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"allowed: {', '.join(allowed)}"
            raise ConfigError(f"{path}.{key}", f"unknown key; remove it ({hint})")
    return value


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(path, f"expected true or false, got {_kind(value)} {value!r}")
    return value


def _int(value: Any, path: str, minimum: int | None = None, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(path, f"expected an integer, got {_kind(value)} {value!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(path, f"{value} is too small; use a value >= {minimum}")
    if maximum is not None and value > maximum:
        raise ConfigError(path, f"{value} is too large; use a value <= {maximum}")
    return value


def _str(value: Any, path: str, pattern: re.Pattern[str] | None = None, what: str = "") -> str:
    if not isinstance(value, str):
        raise ConfigError(path, f"expected a string, got {_kind(value)} {value!r}")
    if pattern is not None and not pattern.match(value):
        raise ConfigError(path, f"{value!r} is not {what}")
    return value


def _path(value: Any, path: str) -> str:
    text = _str(value, path)
    if not text.startswith("/"):
        raise ConfigError(path, f"{text!r} is not an absolute path; start it with '/'")
    return text


def _enum(value: Any, path: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ConfigError(path, f"{value!r} is not valid; use one of: {', '.join(choices)}")
    return value


def _list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise ConfigError(path, f"expected a list, got {_kind(value)}")
    return value


def _unique(items: list[Any], path: str) -> None:
    seen: list[Any] = []
    for i, item in enumerate(items):
        if item in seen:
            raise ConfigError(f"{path}[{i}]", f"duplicate value {item!r}; list it once")
        seen.append(item)


def _resource_name(value: Any, path: str) -> str:
    name = _str(value, path, RESOURCE_NAME_RE, "a resource name like 'nvidia.com/gpu'")
    if len(name) > MAX_RESOURCE_NAME:
        raise ConfigError(path, f"{name!r} is longer than {MAX_RESOURCE_NAME} characters")
    return name


def _parse_config(data: Any) -> PluginConfig:
    root = _obj(data, "$", ("version", "flags", "sharing", "gpustack"))
    version = root.get("version", "v1")
    if version != "v1":
        raise ConfigError("$.version", f"unsupported version {version!r}; set it to v1")
    config = PluginConfig(
        version="v1",
        flags=_parse_flags(root.get("flags", {}), "$.flags"),
        sharing=_parse_sharing(root.get("sharing", {}), "$.sharing"),
        gpustack=_parse_gpustack(root.get("gpustack", {}), "$.gpustack"),
    )
    _check_cross_fields(config)
    return config


def _parse_flags(value: Any, path: str) -> Flags:
    obj = _obj(
        value,
        path,
        ("migStrategy", "failOnInitError", "nvidiaDriverRoot", "nvidiaDevRoot", "plugin"),
    )
    d = Flags()
    dev_root = obj.get("nvidiaDevRoot")
    return Flags(
        mig_strategy=_enum(
            obj.get("migStrategy", d.mig_strategy), f"{path}.migStrategy", MIG_STRATEGIES
        ),
        fail_on_init_error=_bool(
            obj.get("failOnInitError", d.fail_on_init_error), f"{path}.failOnInitError"
        ),
        nvidia_driver_root=_path(
            obj.get("nvidiaDriverRoot", d.nvidia_driver_root), f"{path}.nvidiaDriverRoot"
        ),
        nvidia_dev_root=None if dev_root is None else _path(dev_root, f"{path}.nvidiaDevRoot"),
        plugin=_parse_plugin_flags(obj.get("plugin", {}), f"{path}.plugin"),
    )


def _parse_plugin_flags(value: Any, path: str) -> PluginFlags:
    obj = _obj(
        value,
        path,
        (
            "passDeviceSpecs",
            "deviceListStrategy",
            "deviceIDStrategy",
            "cdiAnnotationPrefix",
            "containerDriverRoot",
            "sharedDevicesAllocationPolicy",
        ),
    )
    d = PluginFlags()
    return PluginFlags(
        pass_device_specs=_bool(
            obj.get("passDeviceSpecs", d.pass_device_specs), f"{path}.passDeviceSpecs"
        ),
        device_list_strategy=parse_device_list_strategy(
            obj.get("deviceListStrategy", list(d.device_list_strategy)),
            f"{path}.deviceListStrategy",
        ),
        device_id_strategy=_enum(
            obj.get("deviceIDStrategy", d.device_id_strategy),
            f"{path}.deviceIDStrategy",
            DEVICE_ID_STRATEGIES,
        ),
        cdi_annotation_prefix=_str(
            obj.get("cdiAnnotationPrefix", d.cdi_annotation_prefix),
            f"{path}.cdiAnnotationPrefix",
            CDI_PREFIX_RE,
            "an annotation prefix ending in '/', like 'cdi.k8s.io/'",
        ),
        container_driver_root=_path(
            obj.get("containerDriverRoot", d.container_driver_root), f"{path}.containerDriverRoot"
        ),
        shared_devices_allocation_policy=_enum(
            obj.get("sharedDevicesAllocationPolicy", d.shared_devices_allocation_policy),
            f"{path}.sharedDevicesAllocationPolicy",
            ALLOCATION_POLICIES,
        ),
    )


def parse_device_list_strategy(value: Any, path: str) -> tuple[str, ...]:
    """A strategy name or a non-empty list of distinct names (also used for the CLI flag)."""
    items = [value] if isinstance(value, str) else _list(value, path)
    if not items:
        raise ConfigError(path, "empty list; name at least one strategy, e.g. [envvar]")
    names = [
        _enum(item, path if isinstance(value, str) else f"{path}[{i}]", DEVICE_LIST_STRATEGIES)
        for i, item in enumerate(items)
    ]
    _unique(names, path)
    return tuple(names)


def _parse_sharing(value: Any, path: str) -> Sharing:
    obj = _obj(value, path, ("timeSlicing",))
    if "timeSlicing" not in obj:
        return Sharing()
    ts_path = f"{path}.timeSlicing"
    ts = _obj(
        obj["timeSlicing"], ts_path, ("renameByDefault", "failRequestsGreaterThanOne", "resources")
    )
    if "resources" not in ts:
        raise ConfigError(
            f"{ts_path}.resources", "missing; list the resources to share, e.g. nvidia.com/gpu"
        )
    items = _list(ts["resources"], f"{ts_path}.resources")
    if not items:
        raise ConfigError(f"{ts_path}.resources", "empty list; add at least one resource to share")
    resources = tuple(
        _parse_replicated(item, f"{ts_path}.resources[{i}]") for i, item in enumerate(items)
    )
    _unique([r.name for r in resources], f"{ts_path}.resources")
    d = TimeSlicing()
    return Sharing(
        time_slicing=TimeSlicing(
            rename_by_default=_bool(
                ts.get("renameByDefault", d.rename_by_default), f"{ts_path}.renameByDefault"
            ),
            fail_requests_greater_than_one=_bool(
                ts.get("failRequestsGreaterThanOne", d.fail_requests_greater_than_one),
                f"{ts_path}.failRequestsGreaterThanOne",
            ),
            resources=resources,
        )
    )


def _parse_replicated(value: Any, path: str) -> ReplicatedResource:
    obj = _obj(value, path, ("name", "replicas", "rename"))
    for key in ("name", "replicas"):
        if key not in obj:
            raise ConfigError(
                f"{path}.{key}", "missing; every shared resource needs name and replicas"
            )
    return ReplicatedResource(
        name=_resource_name(obj["name"], f"{path}.name"),
        replicas=_int(obj["replicas"], f"{path}.replicas", minimum=2, maximum=1024),
        rename=_rename(obj["rename"], f"{path}.rename") if "rename" in obj else None,
    )


def _rename(value: Any, path: str) -> str:
    name = _str(
        value,
        path,
        RENAME_RE,
        "a resource name like 'nvidia.com/gpu-small' (nvidia.com/, then lowercase letters,"
        " digits, '-' and '.')",
    )
    if len(name) > MAX_RENAME:
        raise ConfigError(
            path, f"{name!r} is too long; use at most 63 characters after 'nvidia.com/'"
        )
    return name


def _parse_gpustack(value: Any, path: str) -> GpustackExtensions:
    obj = _obj(value, path, ("resourceName", "backend", "health", "simulated"))
    d = GpustackExtensions()
    return GpustackExtensions(
        resource_name=_resource_name(
            obj.get("resourceName", d.resource_name), f"{path}.resourceName"
        ),
        backend=_enum(obj.get("backend", d.backend), f"{path}.backend", BACKENDS),
        health=_parse_health(obj.get("health", {}), f"{path}.health"),
        simulated=_parse_simulated(obj.get("simulated", {}), f"{path}.simulated"),
    )


def _parse_health(value: Any, path: str) -> HealthConfig:
    obj = _obj(value, path, ("enabled", "ignoredXids"))
    d = HealthConfig()
    xids_path = f"{path}.ignoredXids"
    raw = _list(obj.get("ignoredXids", list(d.ignored_xids)), xids_path)
    xids = [_int(x, f"{xids_path}[{i}]", minimum=1, maximum=65535) for i, x in enumerate(raw)]
    _unique(xids, xids_path)
    return HealthConfig(
        enabled=_bool(obj.get("enabled", d.enabled), f"{path}.enabled"), ignored_xids=tuple(xids)
    )


def _parse_simulated(value: Any, path: str) -> SimulatedBackend:
    obj = _obj(value, path, ("eventsFile", "gpus"))
    events = obj.get("eventsFile")
    gpus_path = f"{path}.gpus"
    raw = _list(obj.get("gpus", []), gpus_path)
    if len(raw) > MAX_GPUS:
        raise ConfigError(gpus_path, f"{len(raw)} GPUs; a node has at most {MAX_GPUS}")
    gpus = tuple(_parse_gpu(item, f"{gpus_path}[{i}]") for i, item in enumerate(raw))
    return SimulatedBackend(
        events_file=None if events is None else _path(events, f"{path}.eventsFile"), gpus=gpus
    )


def _parse_gpu(value: Any, path: str) -> SimulatedGpu:
    obj = _obj(
        value,
        path,
        (
            "index",
            "uuid",
            "product",
            "memoryMiB",
            "computeCapability",
            "numaNode",
            "nvlinkPeers",
            "mig",
        ),
    )
    d = SimulatedGpu()
    if "index" not in obj:
        raise ConfigError(f"{path}.index", "missing; give every simulated GPU its index (0, 1, …)")
    numa = obj.get("numaNode", d.numa_node)
    peers_path = f"{path}.nvlinkPeers"
    peers = [
        _int(p, f"{peers_path}[{i}]", minimum=0, maximum=MAX_GPUS - 1)
        for i, p in enumerate(_list(obj.get("nvlinkPeers", []), peers_path))
    ]
    _unique(peers, peers_path)
    product = _str(obj.get("product", d.product), f"{path}.product")
    if not product.strip():
        raise ConfigError(f"{path}.product", "empty; name the product, e.g. NVIDIA H100 80GB HBM3")
    return SimulatedGpu(
        index=_int(obj["index"], f"{path}.index", minimum=0, maximum=MAX_GPUS - 1),
        uuid=_str(obj["uuid"], f"{path}.uuid", GPU_UUID_RE, "a GPU UUID like GPU-xxxxxxxx-…")
        if "uuid" in obj
        else "",
        product=product,
        memory_mib=_int(obj.get("memoryMiB", d.memory_mib), f"{path}.memoryMiB", minimum=1),
        compute_capability=_str(
            obj.get("computeCapability", d.compute_capability),
            f"{path}.computeCapability",
            COMPUTE_CAPABILITY_RE,
            "a compute capability like '9.0' (quote it in YAML)",
        ),
        numa_node=None if numa is None else _int(numa, f"{path}.numaNode", minimum=0, maximum=1023),
        nvlink_peers=tuple(peers),
        mig=_parse_mig(obj.get("mig", {}), f"{path}.mig"),
    )


def _parse_mig(value: Any, path: str) -> MigLayout:
    obj = _obj(value, path, ("enabled", "devices"))
    devs_path = f"{path}.devices"
    raw = obj.get("devices", {})
    if not isinstance(raw, Mapping):
        raise ConfigError(devs_path, f"expected a mapping of profile to count, got {_kind(raw)}")
    devices: list[tuple[str, int]] = []
    for profile, count in raw.items():
        _str(profile, devs_path, MIG_PROFILE_RE, "a MIG profile name like '1g.10gb'")
        devices.append((profile, _int(count, f"{devs_path}.{profile}", minimum=1, maximum=7)))
    return MigLayout(
        enabled=_bool(obj.get("enabled", False), f"{path}.enabled"), devices=tuple(devices)
    )


def mig_slices(profile: str) -> int:
    """GPU slices a MIG profile occupies (the ``<n>g`` part)."""
    match = re.search(r"([1-7])g\.", profile)
    return int(match.group(1)) if match else 0


def _check_cross_fields(config: PluginConfig) -> None:
    """Rules a JSON schema cannot state: references between GPUs and between sections."""
    gpus = config.gpustack.simulated.gpus
    base = "$.gpustack.simulated.gpus"
    indices = [g.index for g in gpus]
    for i, gpu in enumerate(gpus):
        if indices.index(gpu.index) != i:
            raise ConfigError(
                f"{base}[{i}].index", f"duplicate index {gpu.index}; indices must be unique"
            )
        if [g.uuid for g in gpus].index(gpu.uuid) != i:
            raise ConfigError(
                f"{base}[{i}].uuid", f"duplicate uuid {gpu.uuid}; UUIDs must be unique"
            )
        for j, peer in enumerate(gpu.nvlink_peers):
            if peer == gpu.index or peer not in indices:
                raise ConfigError(
                    f"{base}[{i}].nvlinkPeers[{j}]",
                    f"{peer} is not another simulated GPU's index; list only other GPUs' indices",
                )
        slices = sum(mig_slices(p) * n for p, n in gpu.mig.devices)
        if slices > MAX_MIG_SLICES:
            raise ConfigError(
                f"{base}[{i}].mig.devices",
                f"uses {slices} GPU slices; a GPU has {MAX_MIG_SLICES}, remove some instances",
            )
        if gpu.mig.devices and not gpu.mig.enabled:
            raise ConfigError(
                f"{base}[{i}].mig.enabled", "MIG devices listed but MIG is off; set enabled: true"
            )
    ts = config.sharing.time_slicing
    if ts is not None:
        for i, res in enumerate(ts.resources):
            name = res.name
            if name != config.gpustack.resource_name and not name.startswith("nvidia.com/mig-"):
                raise ConfigError(
                    f"$.sharing.timeSlicing.resources[{i}].name",
                    f"{name!r} is not advertised by this plugin; use "
                    f"{config.gpustack.resource_name!r} or a nvidia.com/mig-<profile> name",
                )
        _check_renames(config, ts)


def _check_renames(config: PluginConfig, ts: TimeSlicing) -> None:
    """Two resources advertised under one name would fight over one kubelet socket.

    Unshared MIG resources are only known once GPUs are discovered; ``build_resources`` checks
    those.
    """
    base = config.gpustack.resource_name
    # Names taken without any rename: whole GPUs (unless shared) and the unrenamed shares.
    taken: dict[str, str] = {} if base in (r.name for r in ts.resources) else {base: base}
    for res in ts.resources:
        if res.rename is None:
            taken[ts.advertised_name(res.name)] = res.name
    for i, res in enumerate(ts.resources):
        if res.rename is None:
            continue
        owner = taken.setdefault(res.rename, res.name)
        if owner != res.name:
            whose = "" if owner == res.rename else f" for {owner}"
            raise ConfigError(
                f"$.sharing.timeSlicing.resources[{i}].rename",
                f"{res.rename!r} is already advertised{whose}; choose a name no other resource"
                " uses",
            )


# ---------------------------------------------------------------------------------------------
# Dumping
# ---------------------------------------------------------------------------------------------


def _dump_replicated(r: ReplicatedResource) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": r.name, "replicas": r.replicas}
    if r.rename is not None:
        doc["rename"] = r.rename
    return doc


def _dump_config(c: PluginConfig) -> dict[str, Any]:
    f, p = c.flags, c.flags.plugin
    flags: dict[str, Any] = {
        "migStrategy": f.mig_strategy,
        "failOnInitError": f.fail_on_init_error,
        "nvidiaDriverRoot": f.nvidia_driver_root,
    }
    if f.nvidia_dev_root is not None:
        flags["nvidiaDevRoot"] = f.nvidia_dev_root
    flags["plugin"] = {
        "passDeviceSpecs": p.pass_device_specs,
        "deviceListStrategy": list(p.device_list_strategy),
        "deviceIDStrategy": p.device_id_strategy,
        "cdiAnnotationPrefix": p.cdi_annotation_prefix,
        "containerDriverRoot": p.container_driver_root,
        "sharedDevicesAllocationPolicy": p.shared_devices_allocation_policy,
    }
    sharing: dict[str, Any] = {}
    ts = c.sharing.time_slicing
    if ts is not None:
        sharing["timeSlicing"] = {
            "renameByDefault": ts.rename_by_default,
            "failRequestsGreaterThanOne": ts.fail_requests_greater_than_one,
            "resources": [_dump_replicated(r) for r in ts.resources],
        }
    g = c.gpustack
    simulated: dict[str, Any] = {}
    if g.simulated.events_file is not None:
        simulated["eventsFile"] = g.simulated.events_file
    simulated["gpus"] = [
        {
            "index": gpu.index,
            "uuid": gpu.uuid,
            "product": gpu.product,
            "memoryMiB": gpu.memory_mib,
            "computeCapability": gpu.compute_capability,
            "numaNode": gpu.numa_node,
            "nvlinkPeers": list(gpu.nvlink_peers),
            "mig": {"enabled": gpu.mig.enabled, "devices": dict(gpu.mig.devices)},
        }
        for gpu in g.simulated.gpus
    ]
    return {
        "version": c.version,
        "flags": flags,
        "sharing": sharing,
        "gpustack": {
            "resourceName": g.resource_name,
            "backend": g.backend,
            "health": {"enabled": g.health.enabled, "ignoredXids": list(g.health.ignored_xids)},
            "simulated": simulated,
        },
    }
