"""The typed profile: what a validated profile means, with every default resolved once.

The JSON Schema (``schemas/profile.schema.json``) is the public contract for the *shape* of a
profile; this module is the single place that gives each omitted field its value. A test checks
that every ``default`` in the schema equals the default here, so the two can never drift.

``Profile.from_dict`` expects a mapping that already passed schema validation: it does no type
checking of its own, it only fills in defaults and freezes the result.

Fields whose default depends on other fields (runtime paths per distribution, the plugin image per
implementation, ...) are ``None`` in the model and resolved by the ``resolved_*`` helpers, so the
schema can say "derived" instead of inventing a constant.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Self

API_VERSION = "gpustack.dev/v1alpha1"
KIND = "Profile"

#: Kubernetes minor versions a profile may target (kubernetes-validate ships schemas for them).
SUPPORTED_KUBERNETES = ("1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37")

#: XIDs that are application errors, not GPU faults (NVIDIA k8s-device-plugin defaults).
DEFAULT_IGNORED_XIDS = (13, 31, 43, 45, 68, 109)

RuntimeName = Literal["containerd", "crio"]
Distribution = Literal["generic", "k3s", "rke2", "microk8s", "k0s"]
KernelModuleType = Literal["auto", "open", "proprietary"]
PullPolicy = Literal["Always", "IfNotPresent", "Never"]
Implementation = Literal["gpustack", "nvidia"]
Backend = Literal["nvml", "simulated"]
MigStrategy = Literal["none", "single", "mixed"]
DeviceIdStrategy = Literal["uuid", "index"]
AllocationPolicy = Literal["distributed", "packed"]
RestartMode = Literal["signal", "systemd", "none"]


def _get(d: Mapping[str, Any] | None, key: str, default: Any) -> Any:
    if d is None:
        return default
    value = d.get(key, default)
    return default if value is None else value


def _str_map(d: Mapping[str, Any] | None) -> tuple[tuple[str, str], ...]:
    """Maps become sorted tuples of pairs: hashable, frozen and deterministic."""
    return tuple(sorted((str(k), str(v)) for k, v in (d or {}).items()))


@dataclass(frozen=True)
class EnvVar:
    """One extra environment variable for a component's main container."""

    name: str
    value: str = ""

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> EnvVar:
        return cls(name=d["name"], value=str(_get(d, "value", "")))


def _env(d: Mapping[str, Any] | None) -> tuple[EnvVar, ...]:
    return tuple(EnvVar.from_dict(e) for e in _get(d, "env", []))


@dataclass(frozen=True)
class Resources:
    """Container requests and limits as Kubernetes quantities; empty means none set."""

    requests: tuple[tuple[str, str], ...] = ()
    limits: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Resources:
        requests = _str_map(_get(d, "requests", {}))
        return cls(requests=requests, limits=_str_map(_get(d, "limits", {})))


@dataclass(frozen=True)
class Toleration:
    """A Kubernetes toleration, as written in a pod spec."""

    key: str | None = None
    operator: Literal["Exists", "Equal"] = "Exists"
    value: str | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    toleration_seconds: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Toleration:
        return cls(
            key=d.get("key"),
            operator=_get(d, "operator", "Exists"),
            value=d.get("value"),
            effect=d.get("effect"),
            toleration_seconds=d.get("tolerationSeconds"),
        )


#: Default toleration: GPU nodes are commonly tainted ``nvidia.com/gpu:NoSchedule``.
DEFAULT_TOLERATIONS = (Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"),)
#: Default node selector: the label NVIDIA's GPU feature discovery and the operator use.
DEFAULT_NODE_SELECTOR = (("nvidia.com/gpu.present", "true"),)


@dataclass(frozen=True)
class Metadata:
    """Profile identity. ``name`` names the cluster folder ``dist/clusters/<name>/``."""

    name: str
    labels: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Metadata:
        return cls(name=d["name"], labels=_str_map(_get(d, "labels", {})))


@dataclass(frozen=True)
class Runtime:
    """The node's container runtime and where its config and socket live.

    Paths left unset are derived from ``name`` and ``distribution`` by :func:`runtime_paths`.
    ``version`` is the runtime's own version (e.g. containerd ``2.0``); containerd 2.x reads
    drop-in configs from ``conf.d`` and wants ``configSource: file``.
    """

    name: RuntimeName = "containerd"
    distribution: Distribution = "generic"
    version: str | None = None
    config_path: str | None = None
    drop_in_config_path: str | None = None
    socket_path: str | None = None
    config_source: tuple[str, ...] | None = None
    restart_mode: RestartMode | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Runtime:
        source = _get(d, "configSource", None)
        return cls(
            name=_get(d, "name", "containerd"),
            distribution=_get(d, "distribution", "generic"),
            version=_get(d, "version", None),
            config_path=_get(d, "configPath", None),
            drop_in_config_path=_get(d, "dropInConfigPath", None),
            socket_path=_get(d, "socketPath", None),
            config_source=tuple(source) if source is not None else None,
            restart_mode=_get(d, "restartMode", None),
        )

    def resolved_restart_mode(self) -> RestartMode:
        """How the toolkit makes the runtime reload, when the profile does not say.

        containerd reloads on a signal; CRI-O can only be restarted through systemd by the
        toolkit's installer, so a signal default would fail every toolkit pod on CRI-O nodes.
        """
        if self.restart_mode is not None:
            return self.restart_mode
        return "systemd" if self.name == "crio" else "signal"


@dataclass(frozen=True)
class RuntimePaths:
    """Resolved host paths of the runtime's root config, drop-in config and socket."""

    config: str
    drop_in_config: str | None
    socket: str | None
    config_source: tuple[str, ...]


# (config, drop-in, socket) per runtime and distribution. k3s and RKE2 regenerate config.toml
# from their built-in template on every start (and add the nvidia runtimes they find under
# /usr/local/nvidia/toolkit themselves), so the toolkit edits config.toml, never
# config.toml.tmpl: a template written from scratch would drop k3s's own settings (registries,
# CNI, sandbox image) and break the node on its next restart (NVIDIA gpu-operator#406, #623).
_RUNTIME_PATHS: dict[tuple[str, str], tuple[str, str | None, str | None]] = {
    ("containerd", "generic"): (
        "/etc/containerd/config.toml",
        "/etc/containerd/conf.d/99-nvidia.toml",
        "/run/containerd/containerd.sock",
    ),
    ("containerd", "k3s"): (
        "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
        None,
        "/run/k3s/containerd/containerd.sock",
    ),
    ("containerd", "rke2"): (
        "/var/lib/rancher/rke2/agent/etc/containerd/config.toml",
        None,
        "/run/k3s/containerd/containerd.sock",
    ),
    ("containerd", "microk8s"): (
        "/var/snap/microk8s/current/args/containerd-template.toml",
        None,
        "/var/snap/microk8s/common/run/containerd.sock",
    ),
    ("containerd", "k0s"): (
        "/etc/k0s/containerd.toml",
        "/etc/k0s/containerd.d/nvidia.toml",
        "/run/k0s/containerd.sock",
    ),
    ("crio", "generic"): (
        "/etc/crio/crio.conf",
        "/etc/crio/crio.conf.d/99-nvidia.conf",
        None,
    ),
}


def runtime_paths(runtime: Runtime) -> RuntimePaths:
    """Resolve the runtime's host paths: explicit profile values win over distribution defaults.

    Raises ``KeyError`` for a runtime/distribution pair that has no defaults (the semantic rules
    report that to the user before synthesis ever runs).
    """
    config, drop_in, socket = _RUNTIME_PATHS[(runtime.name, runtime.distribution)]
    major = int(runtime.version.split(".")[0]) if runtime.version else None
    if runtime.config_source is not None:
        source = runtime.config_source
    elif runtime.name == "containerd" and major is not None and major >= 2:
        # containerd 2.x: `containerd config dump` may emit a newer config version than the root
        # file, which breaks the drop-in; reading the file avoids that (NVIDIA toolkit issue).
        source = ("file",)
    else:
        source = ("command", "file")
    return RuntimePaths(
        config=runtime.config_path or config,
        drop_in_config=runtime.drop_in_config_path or drop_in,
        socket=runtime.socket_path or socket,
        config_source=source,
    )


#: The kubelet's root directory per distribution (k0s and MicroK8s move it; a kubelet started
#: with another ``--root-dir`` needs ``cluster.kubeletRootDir``).
KUBELET_ROOT_DIRS: dict[str, str] = {
    "generic": "/var/lib/kubelet",
    "k3s": "/var/lib/kubelet",
    "rke2": "/var/lib/kubelet",
    "microk8s": "/var/snap/microk8s/common/var/lib/kubelet",
    "k0s": "/var/lib/k0s/kubelet",
}


@dataclass(frozen=True)
class Cluster:
    """Where the stack runs: Kubernetes version, namespace and which nodes get GPU components."""

    kubernetes_version: str = "1.33"
    namespace: str = "gpustack-system"
    node_selector: tuple[tuple[str, str], ...] = DEFAULT_NODE_SELECTOR
    tolerations: tuple[Toleration, ...] = DEFAULT_TOLERATIONS
    priority_class_name: str = "system-node-critical"
    image_pull_secrets: tuple[str, ...] = ()
    runtime: Runtime = field(default_factory=Runtime)
    kubelet_root_dir: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Cluster:
        sel = _get(d, "nodeSelector", None)
        tol = _get(d, "tolerations", None)
        tolerations = (
            tuple(Toleration.from_dict(t) for t in tol) if tol is not None else DEFAULT_TOLERATIONS
        )
        return cls(
            kubernetes_version=str(_get(d, "kubernetesVersion", "1.33")),
            namespace=_get(d, "namespace", "gpustack-system"),
            node_selector=_str_map(sel) if sel is not None else DEFAULT_NODE_SELECTOR,
            tolerations=tolerations,
            priority_class_name=_get(d, "priorityClassName", "system-node-critical"),
            image_pull_secrets=tuple(_get(d, "imagePullSecrets", [])),
            runtime=Runtime.from_dict(_get(d, "runtime", None)),
            kubelet_root_dir=_get(d, "kubeletRootDir", None),
        )

    def resolved_kubelet_root_dir(self) -> str:
        """The kubelet's root directory on the nodes (its device plugin sockets live in
        ``<root>/device-plugins``): the profile's value, else the distribution's."""
        return self.kubelet_root_dir or KUBELET_ROOT_DIRS[self.runtime.distribution]


@dataclass(frozen=True)
class StartupProbe:
    """Budget for the driver container to compile and load the kernel module (~20 min)."""

    initial_delay_seconds: int = 60
    period_seconds: int = 10
    timeout_seconds: int = 60
    failure_threshold: int = 120

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> StartupProbe:
        return cls(
            initial_delay_seconds=_get(d, "initialDelaySeconds", 60),
            period_seconds=_get(d, "periodSeconds", 10),
            timeout_seconds=_get(d, "timeoutSeconds", 60),
            failure_threshold=_get(d, "failureThreshold", 120),
        )


@dataclass(frozen=True)
class Rdma:
    """GPUDirect RDMA: the driver pod loads ``nvidia-peermem`` so NICs read and write GPU memory.

    ``use_host_mofed``: the Mellanox OFED driver is installed on the host, not by a driver
    container (the NVIDIA network operator's) that publishes it under ``/run/mellanox/drivers``.
    """

    enabled: bool = False
    use_host_mofed: bool = False

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Rdma:
        return cls(
            enabled=_get(d, "enabled", False),
            use_host_mofed=_get(d, "useHostMofed", False),
        )


#: Where each driver image OS keeps package repository definitions and the CA certificates its
#: package manager trusts: driver.repoConfigMap and driver.certConfigMap are mounted there (the
#: driver container installs kernel headers from these repositories when it builds the module).
DRIVER_OS_PATHS: dict[str, tuple[str, str]] = {
    "ubuntu": ("/etc/apt/sources.list.d", "/usr/local/share/ca-certificates"),
    "rhel": ("/etc/yum.repos.d", "/etc/pki/ca-trust/extracted/pem"),
    "rhcos": ("/etc/yum.repos.d", "/etc/pki/ca-trust/extracted/pem"),
    "centos": ("/etc/yum.repos.d", "/etc/pki/ca-trust/extracted/pem"),
}


#: Where NVIDIA's driver container exposes its root filesystem on the host (fixed by the driver
#: image: the toolkit, the device plugin and the CDI specs all find the driver there).
DRIVER_CONTAINER_ROOT = "/run/nvidia/driver"


@dataclass(frozen=True)
class Driver:
    """The NVIDIA driver: installed by gpustack's DaemonSet (``enabled``) or already on the host.

    ``version`` is required in both cases: compatibility rules check it against workloads and GPUs.
    The image tag is ``<version>-<osTag>`` (or ``<version>-<kernel>`` when precompiled).
    """

    enabled: bool = True
    version: str = "580.105.08"
    image: str = "nvcr.io/nvidia/driver"
    os_tag: str = "ubuntu24.04"
    digest: str | None = None
    kernel_module_type: KernelModuleType = "auto"
    use_precompiled: bool = False
    kernel_version: str | None = None
    image_pull_policy: PullPolicy = "IfNotPresent"
    startup_probe: StartupProbe = field(default_factory=StartupProbe)
    env: tuple[EnvVar, ...] = ()
    resources: Resources = field(default_factory=Resources)
    kernel_module_config_map: str | None = None
    repo_config_map: str | None = None
    cert_config_map: str | None = None
    rdma: Rdma = field(default_factory=Rdma)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Driver:
        return cls(
            enabled=_get(d, "enabled", True),
            version=str(_get(d, "version", "580.105.08")),
            image=_get(d, "image", "nvcr.io/nvidia/driver"),
            os_tag=_get(d, "osTag", "ubuntu24.04"),
            digest=_get(d, "digest", None),
            kernel_module_type=_get(d, "kernelModuleType", "auto"),
            use_precompiled=_get(d, "usePrecompiled", False),
            kernel_version=_get(d, "kernelVersion", None),
            image_pull_policy=_get(d, "imagePullPolicy", "IfNotPresent"),
            startup_probe=StartupProbe.from_dict(_get(d, "startupProbe", None)),
            env=_env(d),
            resources=Resources.from_dict(_get(d, "resources", None)),
            kernel_module_config_map=_get(d, "kernelModuleConfigMap", None),
            repo_config_map=_get(d, "repoConfigMap", None),
            cert_config_map=_get(d, "certConfigMap", None),
            rdma=Rdma.from_dict(_get(d, "rdma", None)),
        )

    @property
    def os_family(self) -> str:
        """The OS family of ``os_tag`` (``ubuntu22.04`` -> ``ubuntu``)."""
        return re.sub(r"[0-9.]+$", "", self.os_tag)

    @property
    def root(self) -> str:
        """Host path of the driver's root filesystem: the driver container's, or ``/``."""
        return DRIVER_CONTAINER_ROOT if self.enabled else "/"

    def image_ref(self) -> str:
        """Full image reference: digest wins; precompiled images are tagged by kernel."""
        if self.digest:
            return f"{self.image}@{self.digest}"
        suffix = self.kernel_version if self.use_precompiled else self.os_tag
        return f"{self.image}:{self.version}-{suffix}"


@dataclass(frozen=True)
class Cdi:
    """Container Device Interface: the toolkit writes CDI specs and the runtime injects devices."""

    enabled: bool = True

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Cdi:
        return cls(enabled=_get(d, "enabled", True))


@dataclass(frozen=True)
class Toolkit:
    """NVIDIA container toolkit: configures the runtime and registers the NVIDIA runtime handler."""

    enabled: bool = True
    version: str = "v1.18.1"
    image: str = "nvcr.io/nvidia/k8s/container-toolkit"
    image_pull_policy: PullPolicy = "IfNotPresent"
    install_dir: str = "/usr/local/nvidia"
    runtime_class: str = "nvidia"
    set_as_default: bool = False
    cdi: Cdi = field(default_factory=Cdi)
    env: tuple[EnvVar, ...] = ()
    resources: Resources = field(default_factory=Resources)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Toolkit:
        return cls(
            enabled=_get(d, "enabled", True),
            version=str(_get(d, "version", "v1.18.1")),
            image=_get(d, "image", "nvcr.io/nvidia/k8s/container-toolkit"),
            image_pull_policy=_get(d, "imagePullPolicy", "IfNotPresent"),
            install_dir=_get(d, "installDir", "/usr/local/nvidia"),
            runtime_class=_get(d, "runtimeClass", "nvidia"),
            set_as_default=_get(d, "setAsDefault", False),
            cdi=Cdi.from_dict(_get(d, "cdi", None)),
            env=_env(d),
            resources=Resources.from_dict(_get(d, "resources", None)),
        )

    def image_ref(self) -> str:
        return f"{self.image}:{self.version}"


@dataclass(frozen=True)
class TimeSlicingResource:
    """One resource shared by time-slicing: each GPU is advertised ``replicas`` times."""

    name: str
    replicas: int
    rename: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TimeSlicingResource:
        return cls(name=d["name"], replicas=d["replicas"], rename=_get(d, "rename", None))


@dataclass(frozen=True)
class TimeSlicing:
    """GPU time-slicing, in the shape of NVIDIA's ``sharing.timeSlicing`` config."""

    rename_by_default: bool = False
    fail_requests_greater_than_one: bool = False
    resources: tuple[TimeSlicingResource, ...] = ()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Self:
        default = cls()  # a subclass's own defaults (Mps refuses requests > 1 by default)
        return cls(
            rename_by_default=_get(d, "renameByDefault", default.rename_by_default),
            fail_requests_greater_than_one=_get(
                d, "failRequestsGreaterThanOne", default.fail_requests_greater_than_one
            ),
            resources=tuple(TimeSlicingResource.from_dict(r) for r in _get(d, "resources", [])),
        )


@dataclass(frozen=True)
class Mps(TimeSlicing):
    """CUDA MPS sharing, NVIDIA's ``sharing.mps``: the shape of :class:`TimeSlicing`, but each
    replica is an MPS client limited to ``1/replicas`` of the GPU's memory and compute, and
    requests for more than one replica are refused by default (as in NVIDIA's plugin).
    NVIDIA's device plugin only; it needs the MPS control daemon gpustack deploys next to it."""

    fail_requests_greater_than_one: bool = True


@dataclass(frozen=True)
class HealthChecks:
    """XID-based GPU health checks; ``ignoredXids`` replaces the default list when given."""

    enabled: bool = True
    ignored_xids: tuple[int, ...] = DEFAULT_IGNORED_XIDS

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> HealthChecks:
        return cls(
            enabled=_get(d, "enabled", True),
            ignored_xids=tuple(_get(d, "ignoredXids", list(DEFAULT_IGNORED_XIDS))),
        )


#: Node label whose value names a device plugin node config (as in NVIDIA's Helm chart).
DEFAULT_NODE_CONFIG_LABEL = "nvidia.com/device-plugin.config"


@dataclass(frozen=True)
class Sharing:
    """A node config's ``sharing``: given at all, it replaces the top-level sharing (``{}``:
    no time-slicing and no MPS on those nodes)."""

    time_slicing: TimeSlicing | None = None
    mps: Mps | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Sharing:
        ts = _get(d, "timeSlicing", None)
        mps = _get(d, "mps", None)
        return cls(
            time_slicing=TimeSlicing.from_dict(ts) if ts is not None else None,
            mps=Mps.from_dict(mps) if mps is not None else None,
        )


@dataclass(frozen=True)
class NodeConfigGpus:
    """A node config's GPU overrides; ``None`` inherits the top-level ``gpus`` value."""

    mig: tuple[tuple[str, int], ...] | None = None
    per_node: int | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> NodeConfigGpus:
        mig = _get(d, "mig", None)
        return cls(
            mig=tuple(sorted((str(k), int(v)) for k, v in mig.items()))
            if mig is not None
            else None,
            per_node=_get(d, "perNode", None),
        )


@dataclass(frozen=True)
class NodeConfig:
    """A named device plugin config for the nodes labelled ``<nodeConfigLabel>=<name>``.

    Every field but ``name`` overrides the top-level value it names; ``None`` inherits it.
    :func:`node_config_profile` gives the profile those nodes see.
    """

    name: str
    mig_strategy: MigStrategy | None = None
    sharing: Sharing | None = None
    gpus: NodeConfigGpus = field(default_factory=NodeConfigGpus)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> NodeConfig:
        sharing = _get(d, "sharing", None)
        return cls(
            name=d["name"],
            mig_strategy=_get(d, "migStrategy", None),
            sharing=Sharing.from_dict(sharing) if sharing is not None else None,
            gpus=NodeConfigGpus.from_dict(_get(d, "gpus", None)),
        )


#: Default images per plugin implementation (tag = version).
PLUGIN_IMAGES: dict[str, tuple[str, str]] = {
    "gpustack": ("ghcr.io/gpustack-dev/gpustack-device-plugin", "0.1.0"),
    "nvidia": ("nvcr.io/nvidia/k8s-device-plugin", "v0.18.1"),
}


@dataclass(frozen=True)
class DevicePlugin:
    """The device plugin that advertises GPUs to the kubelet: gpustack's own or NVIDIA's.

    ``image`` and ``version`` default per ``implementation`` (see :data:`PLUGIN_IMAGES`).
    ``backend`` is gpustack-only: ``simulated`` advertises the GPUs of ``gpus`` without hardware.
    ``time_slicing`` and ``mps`` are ``sharing.timeSlicing`` and ``sharing.mps`` (MPS: NVIDIA's
    plugin only).
    """

    enabled: bool = True
    implementation: Implementation = "gpustack"
    image: str | None = None
    version: str | None = None
    image_pull_policy: PullPolicy = "IfNotPresent"
    resource_name: str = "nvidia.com/gpu"
    backend: Backend = "nvml"
    mig_strategy: MigStrategy = "none"
    device_list_strategy: tuple[str, ...] = ("envvar",)
    device_id_strategy: DeviceIdStrategy = "uuid"
    pass_device_specs: bool = False
    fail_on_init_error: bool = True
    shared_devices_allocation_policy: AllocationPolicy = "distributed"
    health_checks: HealthChecks = field(default_factory=HealthChecks)
    time_slicing: TimeSlicing | None = None
    mps: Mps | None = None
    env: tuple[EnvVar, ...] = ()
    resources: Resources = field(default_factory=Resources)
    node_config_label: str = DEFAULT_NODE_CONFIG_LABEL
    node_configs: tuple[NodeConfig, ...] = ()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> DevicePlugin:
        strategy = _get(d, "deviceListStrategy", ["envvar"])
        if isinstance(strategy, str):
            strategy = [strategy]
        sharing = _get(d, "sharing", None)
        ts = _get(sharing, "timeSlicing", None)
        mps = _get(sharing, "mps", None)
        return cls(
            enabled=_get(d, "enabled", True),
            implementation=_get(d, "implementation", "gpustack"),
            image=_get(d, "image", None),
            version=_get(d, "version", None),
            image_pull_policy=_get(d, "imagePullPolicy", "IfNotPresent"),
            resource_name=_get(d, "resourceName", "nvidia.com/gpu"),
            backend=_get(d, "backend", "nvml"),
            mig_strategy=_get(d, "migStrategy", "none"),
            device_list_strategy=tuple(strategy),
            device_id_strategy=_get(d, "deviceIdStrategy", "uuid"),
            pass_device_specs=_get(d, "passDeviceSpecs", False),
            fail_on_init_error=_get(d, "failOnInitError", True),
            shared_devices_allocation_policy=_get(
                d, "sharedDevicesAllocationPolicy", "distributed"
            ),
            health_checks=HealthChecks.from_dict(_get(d, "healthChecks", None)),
            time_slicing=TimeSlicing.from_dict(ts) if ts is not None else None,
            mps=Mps.from_dict(mps) if mps is not None else None,
            env=_env(d),
            resources=Resources.from_dict(_get(d, "resources", None)),
            node_config_label=_get(d, "nodeConfigLabel", DEFAULT_NODE_CONFIG_LABEL),
            node_configs=tuple(NodeConfig.from_dict(n) for n in _get(d, "nodeConfigs", [])),
        )

    def image_ref(self) -> str:
        image, version = PLUGIN_IMAGES[self.implementation]
        return f"{self.image or image}:{self.version or version}"


@dataclass(frozen=True)
class Gpus:
    """The GPU inventory expected on the selected nodes; compatibility checks read it.

    Give ``product`` (a catalog name such as ``H100-SXM5-80GB``) or, when the exact product is
    unknown, only ``architecture``. ``mig`` is the MIG layout per GPU (profile -> count).
    """

    product: str | None = None
    architecture: str | None = None
    per_node: int = 1
    mig: tuple[tuple[str, int], ...] = ()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Gpus:
        return cls(
            product=_get(d, "product", None),
            architecture=_get(d, "architecture", None),
            per_node=_get(d, "perNode", 1),
            mig=tuple(sorted((str(k), int(v)) for k, v in _get(d, "mig", {}).items())),
        )


@dataclass(frozen=True)
class Example:
    """An example GPU workload (a PyTorch Job) that proves the stack end to end."""

    name: str
    image: str = "docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
    cuda_version: str | None = None
    gpus: int = 1
    resource_name: str | None = None
    command: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Example:
        cuda = _get(d, "cudaVersion", None)
        return cls(
            name=d["name"],
            image=_get(d, "image", "docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"),
            cuda_version=str(cuda) if cuda is not None else None,
            gpus=_get(d, "gpus", 1),
            resource_name=_get(d, "resourceName", None),
            command=tuple(_get(d, "command", [])),
        )


@dataclass(frozen=True)
class Workloads:
    """Workloads gpustack ships next to the stack; today the example jobs."""

    examples: tuple[Example, ...] = ()

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Workloads:
        return cls(examples=tuple(Example.from_dict(e) for e in _get(d, "examples", [])))


@dataclass(frozen=True)
class GitOps:
    """How the output is delivered (filled in by a later release; reserved now)."""

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> GitOps:
        return cls()


@dataclass(frozen=True)
class Profile:
    """One cluster's GPU stack, fully defaulted."""

    metadata: Metadata
    cluster: Cluster = field(default_factory=Cluster)
    driver: Driver = field(default_factory=Driver)
    toolkit: Toolkit = field(default_factory=Toolkit)
    device_plugin: DevicePlugin = field(default_factory=DevicePlugin)
    gpus: Gpus = field(default_factory=Gpus)
    workloads: Workloads = field(default_factory=Workloads)
    gitops: GitOps = field(default_factory=GitOps)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Profile:
        return cls(
            metadata=Metadata.from_dict(d["metadata"]),
            cluster=Cluster.from_dict(d.get("cluster")),
            driver=Driver.from_dict(d.get("driver")),
            toolkit=Toolkit.from_dict(d.get("toolkit")),
            device_plugin=DevicePlugin.from_dict(d.get("devicePlugin")),
            gpus=Gpus.from_dict(d.get("gpus")),
            workloads=Workloads.from_dict(d.get("workloads")),
            gitops=GitOps.from_dict(d.get("gitops")),
        )

    @property
    def name(self) -> str:
        return self.metadata.name


def node_config_profile(profile: Profile, config: NodeConfig) -> Profile:
    """The profile as the nodes of one node config see it: its overrides replace the top-level
    values, and the result has no node configs of its own."""
    dp, gpus = profile.device_plugin, profile.gpus
    return replace(
        profile,
        device_plugin=replace(
            dp,
            mig_strategy=config.mig_strategy or dp.mig_strategy,
            time_slicing=dp.time_slicing if config.sharing is None else config.sharing.time_slicing,
            mps=dp.mps if config.sharing is None else config.sharing.mps,
            node_configs=(),
        ),
        gpus=replace(
            gpus,
            mig=gpus.mig if config.gpus.mig is None else config.gpus.mig,
            per_node=gpus.per_node if config.gpus.per_node is None else config.gpus.per_node,
        ),
    )
