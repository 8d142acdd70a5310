"""The typed profile: what a validated profile means, with every default resolved once.

Each field is declared once, on its dataclass (:func:`gpustack.fields.key`): type, default,
title, description, examples and constraints. The JSON Schema (``schemas/profile.schema.json``,
built by :mod:`gpustack.profile.schema`), the field reference and the decoding of a validated
document (:meth:`Profile.from_dict`) are all derived from those declarations. One module per
profile section; this one assembles the :class:`Profile` and re-exports the sections.

Fields whose default depends on other fields (runtime paths per distribution, the plugin image per
implementation, ...) are ``None`` in the model and resolved by the ``resolved_*`` helpers, so the
schema can say "derived" instead of inventing a constant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

from gpustack.fields import decode, key
from gpustack.plugin.config import (
    DEFAULT_IGNORED_XIDS,
    AllocationPolicy,
    Backend,
    DeviceIdStrategy,
    DeviceListStrategy,
    MigStrategy,
)
from gpustack.profile.model.cluster import (
    API_VERSION,
    DEFAULT_KUBERNETES,
    DEFAULT_NODE_SELECTOR,
    DEFAULT_TOLERATIONS,
    KIND,
    SUPPORTED_KUBERNETES,
    Cluster,
    Metadata,
)
from gpustack.profile.model.common import EnvVar, PullPolicy, Resources, Taint, Toleration
from gpustack.profile.model.day2 import (
    DCGM_EXPORTER_IMAGE,
    MIG_MANAGER_IMAGE,
    NFD_IMAGE,
    Counter,
    DcgmExporter,
    GpuFeatureDiscovery,
    MetricsFrom,
    MigManager,
    NodeFeatureDiscovery,
    ServiceMonitor,
)
from gpustack.profile.model.device_plugin import (
    DEFAULT_NODE_CONFIG_LABEL,
    PLUGIN_IMAGES,
    DevicePlugin,
    HealthChecks,
    Implementation,
    Mps,
    NodeConfig,
    NodeConfigGpus,
    Sharing,
    TimeSlicing,
    TimeSlicingResource,
)
from gpustack.profile.model.dra import DRA_DRIVER_IMAGE, Dra
from gpustack.profile.model.driver import (
    DRIVER_CONTAINER_ROOT,
    DRIVER_MANAGER_IMAGE,
    DRIVER_OS_PATHS,
    KUBECTL_IMAGE,
    Driver,
    DriverUpgrade,
    KernelModuleType,
    Rdma,
    StartupProbe,
)
from gpustack.profile.model.driver_toolkit import DriverToolkit
from gpustack.profile.model.gitops import ArgoCd, Flux, GitOps
from gpustack.profile.model.gpus import Gpus
from gpustack.profile.model.runtime import (
    KUBELET_ROOT_DIRS,
    SELF_CONFIGURING,
    Distribution,
    RestartMode,
    Runtime,
    RuntimeName,
    RuntimePaths,
    k0s_containerd_v3,
    runtime_paths,
)
from gpustack.profile.model.toolkit import Cdi, Toolkit
from gpustack.profile.model.workloads import Example, ExampleDra, Workloads

__all__ = [
    "API_VERSION",
    "DCGM_EXPORTER_IMAGE",
    "DRA_DRIVER_IMAGE",
    "DRIVER_MANAGER_IMAGE",
    "KUBECTL_IMAGE",
    "MIG_MANAGER_IMAGE",
    "NFD_IMAGE",
    "Counter",
    "DcgmExporter",
    "DriverToolkit",
    "DriverUpgrade",
    "GpuFeatureDiscovery",
    "MetricsFrom",
    "MigManager",
    "NodeFeatureDiscovery",
    "ServiceMonitor",
    "DEFAULT_IGNORED_XIDS",
    "DEFAULT_NODE_CONFIG_LABEL",
    "DEFAULT_NODE_SELECTOR",
    "DEFAULT_TOLERATIONS",
    "DRIVER_CONTAINER_ROOT",
    "DRIVER_OS_PATHS",
    "KIND",
    "KUBELET_ROOT_DIRS",
    "PLUGIN_IMAGES",
    "DEFAULT_KUBERNETES",
    "SUPPORTED_KUBERNETES",
    "AllocationPolicy",
    "ArgoCd",
    "Backend",
    "Cdi",
    "Cluster",
    "DeviceIdStrategy",
    "DeviceListStrategy",
    "DevicePlugin",
    "Dra",
    "Distribution",
    "Driver",
    "EnvVar",
    "Example",
    "ExampleDra",
    "Flux",
    "GitOps",
    "Gpus",
    "HealthChecks",
    "Implementation",
    "KernelModuleType",
    "Metadata",
    "MigStrategy",
    "Mps",
    "NodeConfig",
    "NodeConfigGpus",
    "Profile",
    "PullPolicy",
    "Rdma",
    "Resources",
    "RestartMode",
    "Runtime",
    "RuntimeName",
    "RuntimePaths",
    "SELF_CONFIGURING",
    "Sharing",
    "StartupProbe",
    "TimeSlicing",
    "TimeSlicingResource",
    "Taint",
    "Toleration",
    "Toolkit",
    "Workloads",
    "k0s_containerd_v3",
    "node_config_profile",
    "runtime_paths",
]


@dataclass(frozen=True)
class Profile:
    """One cluster's GPU stack, fully defaulted."""

    metadata: Metadata = key(
        "Metadata",
        "Identity of the profile; one profile describes one cluster.",
        examples=[{"name": "lab-1gpu"}],
    )
    cluster: Cluster = key(
        "Cluster",
        "Where the stack runs: Kubernetes version, namespace and the GPU nodes.",
        factory=Cluster,
    )
    driver: Driver = key(
        "Driver",
        "The NVIDIA driver: installed by a driver DaemonSet, or already on the host.",
        factory=Driver,
    )
    toolkit: Toolkit = key(
        "Container toolkit",
        "NVIDIA container toolkit: configures the runtime and the nvidia runtime handler.",
        factory=Toolkit,
    )
    device_plugin: DevicePlugin = key(
        "Device plugin",
        "The kubelet device plugin that advertises GPUs: gpustack's own or NVIDIA's.",
        factory=DevicePlugin,
    )
    gpus: Gpus = key(
        "GPUs",
        "The GPUs expected on the selected nodes; compatibility rules read this.",
        factory=Gpus,
    )
    gpu_feature_discovery: GpuFeatureDiscovery = key(
        "GPU feature discovery",
        "NVIDIA's GPU feature discovery: labels nodes with their GPUs' properties.",
        factory=GpuFeatureDiscovery,
    )
    node_feature_discovery: NodeFeatureDiscovery = key(
        "Node Feature Discovery",
        "Node Feature Discovery, which publishes GPU feature discovery's labels and labels"
        " GPU nodes nvidia.com/gpu.present=true.",
        factory=NodeFeatureDiscovery,
    )
    mig_manager: MigManager = key(
        "MIG manager",
        "NVIDIA's MIG manager: applies the MIG layouts of gpus.mig on the nodes.",
        factory=MigManager,
    )
    dcgm_exporter: DcgmExporter = key(
        "DCGM exporter",
        "NVIDIA's DCGM exporter: GPU metrics for Prometheus.",
        factory=DcgmExporter,
    )
    dra: Dra = key(
        "DRA",
        "NVIDIA's DRA driver for GPUs: ResourceClaims for GPUs and ComputeDomains.",
        factory=Dra,
    )
    workloads: Workloads = key(
        "Workloads", "Workloads shipped next to the stack.", factory=Workloads
    )
    gitops: GitOps = key(
        "GitOps",
        "How the committed output reaches the cluster: Argo CD and/or Flux objects written "
        "next to dist/clusters/.",
        factory=GitOps,
    )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Profile:
        """The profile a schema-valid document describes (``apiVersion``, ``kind`` and
        ``extends`` are the loader's and the schema's business, not the model's)."""
        body = {k: v for k, v in d.items() if k not in ("apiVersion", "kind", "extends")}
        return with_image_registry(decode(cls, body))

    @property
    def name(self) -> str:
        return self.metadata.name


def names_registry(component: str) -> bool:
    """Whether an image reference's first path component is a registry host (it holds a ``.``
    or a ``:``, or is ``localhost``) rather than the start of a Docker Hub path."""
    return "." in component or ":" in component or component == "localhost"


def rehome(image: str, registry: str) -> str:
    """``image`` pulled from ``registry``: its registry part (see :func:`names_registry`) is
    replaced, or ``registry`` is put in front of it."""
    first, sep, rest = image.partition("/")
    if sep and names_registry(first):
        return f"{registry}/{rest}"
    return f"{registry}/{image}"


#: Fields that name an image by reference (``image``: a repository; ``kubectl_image``: a full
#: reference); ``cluster.imageRegistry`` rehomes each one left at its default.
IMAGE_FIELDS = ("image", "kubectl_image")


def _rehomed(value: Any, registry: str) -> Any:
    """``value`` (a section, or a tuple of items) with every image field still at its declared
    default pulled from ``registry``; nested sections (``driver.upgrade``) and lists
    (``workloads.examples``) included."""
    if isinstance(value, tuple):
        return tuple(_rehomed(v, registry) for v in value)
    if not is_dataclass(value) or isinstance(value, type):
        return value
    changes: dict[str, Any] = {}
    for f in fields(value):
        current = getattr(value, f.name)
        if f.name in IMAGE_FIELDS and isinstance(current, str) and current == f.default:
            changes[f.name] = rehome(current, registry)
        elif is_dataclass(current) or (
            isinstance(current, tuple) and current and is_dataclass(current[0])
        ):
            changes[f.name] = _rehomed(current, registry)
    return replace(value, **changes) if changes else value


def with_image_registry(profile: Profile) -> Profile:
    """Every image left at its default, pulled from ``cluster.imageRegistry`` when it is set
    (declared once, on the cluster; explicit images win). The device plugin's image defaults
    per implementation (``None`` in the model), so it is rehomed from :data:`PLUGIN_IMAGES`."""
    registry = profile.cluster.image_registry
    if registry is None:
        return profile
    moved: Profile = _rehomed(profile, registry)
    dp = moved.device_plugin
    return replace(
        moved,
        device_plugin=replace(
            dp, image=dp.image or rehome(PLUGIN_IMAGES[dp.implementation][0], registry)
        ),
    )


def node_config_profile(profile: Profile, config: NodeConfig) -> Profile:
    """The profile as the nodes of one node config see it: its overrides replace the top-level
    values, and the result has no node configs of its own."""
    dp, gpus = profile.device_plugin, profile.gpus
    return replace(
        profile,
        device_plugin=replace(
            dp,
            mig_strategy=config.mig_strategy or dp.mig_strategy,
            sharing=dp.sharing if config.sharing is None else config.sharing,
            node_configs=(),
        ),
        gpus=replace(
            gpus,
            mig=gpus.mig if config.gpus.mig is None else config.gpus.mig,
            per_node=gpus.per_node if config.gpus.per_node is None else config.gpus.per_node,
        ),
    )
