"""``devicePlugin``: the device plugin that advertises GPUs, its sharing and its node configs.

The enums it shares with the plugin's own config file (MIG and device list strategies, ID
strategy, allocation policy, backend, the default ignored XIDs) come from
:mod:`gpustack.plugin.config`, so the two formats cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from gpustack import __version__
from gpustack.fields import documented, inherit, item, key
from gpustack.plugin.config import (
    DEFAULT_IGNORED_XIDS,
    AllocationPolicy,
    Backend,
    DeviceIdStrategy,
    DeviceListStrategy,
    MigStrategy,
)
from gpustack.plugin.config.keys import GPU_RESOURCE
from gpustack.profile.model import upstream
from gpustack.profile.model.common import (
    DNS_LABEL,
    IMAGE,
    IMAGE_TAG,
    LABEL_KEY,
    LABEL_KEY_HINT,
    EnvVar,
    PullPolicy,
    Resources,
    digest,
    enabled,
    env,
    image_ref,
    pull_policy,
    resources,
)
from gpustack.profile.model.gpus import Gpus, MigLayout

Implementation = Literal["gpustack", "nvidia"]

#: Default images per plugin implementation (tag = version). gpustack's plugin image is tagged
#: with gpustack's own version (``make image`` builds it so), declared once in ``gpustack``.
PLUGIN_IMAGES: dict[str, tuple[str, str]] = {
    "gpustack": ("ghcr.io/gpustack-dev/gpustack-device-plugin", __version__),
    "nvidia": upstream.DEVICE_PLUGIN.ref,
}

#: Node label whose value names a device plugin node config (as in NVIDIA's Helm chart).
DEFAULT_NODE_CONFIG_LABEL = "nvidia.com/device-plugin.config"
#: Node config names become part of object names: nvidia-device-plugin-config-<name> <= 63.
NODE_CONFIG_NAME_MAX = 35
MAX_NODE_CONFIGS = 16


@documented("Shared resource", "One shared resource.")
@dataclass(frozen=True)
class TimeSlicingResource:
    """One resource shared by time-slicing: each GPU is advertised ``replicas`` times."""

    name: str = key(
        "Resource",
        "Resource to share, as the plugin advertises it.",
        examples=["nvidia.com/gpu"],
    )
    replicas: int = key(
        "Replicas",
        "How many pods may share one GPU (2 to 1024).",
        minimum=1,
        maximum=1024,
        examples=[4],
    )
    rename: str | None = key(
        "Rename",
        "Advertise the shared resource under this name instead (wins over"
        " renameByDefault). Honoured by gpustack's plugin only: NVIDIA's"
        " plugin ignores it, so validation rejects it there.",
        default=None,
        examples=["nvidia.com/gpu-small"],
    )


@dataclass(frozen=True, kw_only=True)
class TimeSlicing:
    """GPU time-slicing, in the shape of NVIDIA's ``sharing.timeSlicing`` config (keyword-only:
    ``resources`` is required but comes last, in the file's order)."""

    rename_by_default: bool = key(
        "Rename by default",
        "Advertise shared resources as <name>.shared (e.g. nvidia.com/gpu.shared).",
        default=False,
    )
    fail_requests_greater_than_one: bool = key(
        "Fail requests > 1",
        "Reject pods asking for more than one replica (they would not get more GPU).",
        default=False,
    )
    resources: tuple[TimeSlicingResource, ...] = key(
        "Shared resources",
        "Which resources are shared and how many times each GPU is advertised.",
        min_items=1,
    )


@dataclass(frozen=True, kw_only=True)
class Mps(TimeSlicing):
    """CUDA MPS sharing, NVIDIA's ``sharing.mps``: the shape of :class:`TimeSlicing`, but each
    replica is an MPS client limited to ``1/replicas`` of the GPU's memory and compute, and
    requests for more than one replica are refused by default (as in NVIDIA's plugin).
    NVIDIA's device plugin only; it needs the MPS control daemon gpustack deploys next to it."""

    fail_requests_greater_than_one: bool = key(
        "Fail requests > 1",
        "Reject pods asking for more than one replica (they would not get more GPU).",
        default=True,
    )


@dataclass(frozen=True)
class Sharing:
    """``sharing``: time-slicing or MPS. In a node config, given at all, it replaces the
    top-level sharing (``{}``: no time-slicing and no MPS on those nodes)."""

    time_slicing: TimeSlicing | None = key(
        "Time-slicing",
        "Advertise each GPU several times; pods share it by time-slicing (no isolation).",
        default=None,
    )
    mps: Mps | None = key(
        "MPS",
        "Advertise each GPU several times; pods share it through CUDA MPS, each limited to "
        "1/replicas of its memory and compute. NVIDIA's plugin only (implementation: nvidia), "
        "on whole GPUs (nvidia.com/gpu); gpustack adds the MPS control daemon DaemonSet. "
        "Excludes timeSlicing.",
        default=None,
    )


@dataclass(frozen=True)
class HealthChecks:
    """XID-based GPU health checks; ``ignoredXids`` replaces the default list when given."""

    enabled: bool = enabled("Watch XID events and mark failing GPUs unhealthy.")
    ignored_xids: tuple[Annotated[int, item(minimum=1, maximum=65535)], ...] = key(
        "Ignored XIDs",
        "XIDs that are application errors, not GPU faults (replaces the default).",
        default=DEFAULT_IGNORED_XIDS,
        unique_items=True,
    )


@dataclass(frozen=True)
class NodeConfigGpus:
    """A node config's GPU overrides; ``None`` inherits the top-level ``gpus`` value."""

    mig: MigLayout | None = inherit(Gpus, "mig")
    per_node: int | None = inherit(Gpus, "per_node")


@documented(
    "Node config",
    "A named device plugin config for the nodes whose node config label has this name; "
    "each setting given replaces the top-level one there, the others are inherited. "
    "gpustack synthesizes one plugin DaemonSet and ConfigMap per node config.",
)
@dataclass(frozen=True)
class NodeConfig:
    """A named device plugin config for the nodes labelled ``<nodeConfigLabel>=<name>``.

    Every field but ``name`` overrides the top-level value it names; ``None`` inherits it.
    :func:`node_config_profile` gives the profile those nodes see.
    """

    name: str = key(
        "Name",
        "Value of the node config label that selects this config (DNS-1123 label); the "
        "DaemonSet is nvidia-device-plugin-<name>, the ConfigMap "
        "nvidia-device-plugin-config-<name>.",
        pattern=DNS_LABEL,
        max_length=NODE_CONFIG_NAME_MAX,
        examples=["whole-gpu", "dense-inference", "a100-mig"],
    )
    mig_strategy: MigStrategy | None = key(
        "MIG strategy",
        "Replaces devicePlugin.migStrategy on these nodes (unset: inherited).",
        default=None,
        examples=["mixed"],
    )
    sharing: Sharing | None = key(
        "Sharing",
        "Replaces devicePlugin.sharing on these nodes (unset: inherited; {}: no "
        "time-slicing or MPS).",
        default=None,
        examples=[
            {},
            {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 8}]}},
        ],
    )
    gpus: NodeConfigGpus = key(
        "GPUs",
        "Replaces gpus.mig and gpus.perNode on these nodes (unset: inherited).",
        factory=NodeConfigGpus,
        examples=[{"mig": {"1g.10gb": 7}}, {"perNode": 4}],
    )


@dataclass(frozen=True)
class DevicePlugin:
    """The device plugin that advertises GPUs to the kubelet: gpustack's own or NVIDIA's.

    ``image`` and ``version`` default per ``implementation`` (see :data:`PLUGIN_IMAGES`).
    ``backend`` is gpustack-only: ``simulated`` advertises the GPUs of ``gpus`` without hardware.
    """

    enabled: bool = enabled("Deploy the device plugin DaemonSet.")
    implementation: Implementation = key(
        "Implementation",
        "gpustack: the plugin built from this repository; nvidia: k8s-device-plugin.",
        default="gpustack",
    )
    image: str | None = key(
        "Plugin image",
        "Image repository; defaults per implementation.",
        default=None,
        pattern=IMAGE,
        examples=[PLUGIN_IMAGES["nvidia"][0]],
    )
    version: str | None = key(
        "Plugin version",
        "Image tag; defaults per implementation.",
        default=None,
        pattern=IMAGE_TAG,
        examples=[PLUGIN_IMAGES["nvidia"][1], PLUGIN_IMAGES["gpustack"][1]],
    )
    digest: str | None = digest("device plugin (and MPS control daemon)")
    image_pull_policy: PullPolicy = pull_policy()
    resource_name: str = key(
        "Resource name",
        "Extended resource for whole GPUs.",
        default=GPU_RESOURCE,
        examples=["nvidia.com/gpu"],
    )
    backend: Backend = key(
        "Backend",
        "nvml: real GPUs; simulated: advertise the GPUs of `gpus` without hardware "
        "(gpustack implementation only; for CI and clusters without GPUs).",
        default="nvml",
    )
    mig_strategy: MigStrategy = key(
        "MIG strategy",
        "none: whole GPUs; single: MIG devices as the GPU resource (uniform layout); "
        "mixed: one nvidia.com/mig-<profile> resource per MIG profile.",
        default="none",
    )
    device_list_strategy: tuple[DeviceListStrategy, ...] = key(
        "Device list strategy",
        "How allocated devices reach the container: one strategy or a list.",
        default=("envvar",),
        one_or_many=True,
        min_items=1,
        unique_items=True,
        examples=["envvar", ["cdi-cri"]],
    )
    device_id_strategy: DeviceIdStrategy = key(
        "Device ID strategy", "Identify GPUs by UUID or by index.", default="uuid"
    )
    pass_device_specs: bool = key(
        "Pass device specs",
        "Return device nodes to the kubelet (needed with the static CPU manager).",
        default=False,
    )
    fail_on_init_error: bool = key(
        "Fail on init error",
        "Exit when GPUs cannot be initialised; false logs and waits.",
        default=True,
    )
    shared_devices_allocation_policy: AllocationPolicy = key(
        "Shared allocation policy",
        "For time-sliced replicas and MIG devices: spread over devices, then physical "
        "GPUs (distributed), or fill one GPU first (packed).",
        default="distributed",
    )
    health_checks: HealthChecks = key(
        "Health checks",
        "XID-based health checks; a GPU with a critical XID is marked unhealthy.",
        factory=HealthChecks,
    )
    sharing: Sharing = key("Sharing", "GPU sharing between pods.", factory=Sharing)
    env: tuple[EnvVar, ...] = env()
    resources: Resources = resources()
    node_config_label: str = key(
        "Node config label",
        "Node label whose value names the node config of a node; nodes without it, or "
        "with a value no node config has, get the top-level config.",
        default=DEFAULT_NODE_CONFIG_LABEL,
        pattern=LABEL_KEY,
        hint=LABEL_KEY_HINT,
        examples=[DEFAULT_NODE_CONFIG_LABEL],
    )
    node_configs: tuple[NodeConfig, ...] = key(
        "Node configs",
        "Named plugin configs for node pools (e.g. denser time-slicing on inference "
        "nodes, whole GPUs on training nodes), picked by the node config label; each "
        "gets its own plugin DaemonSet, so no component needs API access.",
        factory=tuple,
        max_items=MAX_NODE_CONFIGS,
        examples=[[{"name": "whole-gpu", "sharing": {}}]],
    )

    @property
    def time_slicing(self) -> TimeSlicing | None:
        """``sharing.timeSlicing``."""
        return self.sharing.time_slicing

    @property
    def mps(self) -> Mps | None:
        """``sharing.mps`` (NVIDIA's plugin only)."""
        return self.sharing.mps

    def image_ref(self) -> str:
        image, version = PLUGIN_IMAGES[self.implementation]
        return image_ref(self.image or image, self.version or version, self.digest)
