"""Day-2 operands: node labels (GPU feature discovery, Node Feature Discovery), MIG geometry (the
MIG manager) and GPU metrics (the DCGM exporter), plus the images of the driver pod's helpers.

Why one module: these sections share one fact, the NVIDIA release they are pinned to. gpustack
pins the operand images NVIDIA's GPU Operator v26.7.0 ships together with the toolkit
(v1.20.0), the device plugin (v0.20.0) and driver 595 it already uses
(``deployments/gpu-operator/values.yaml`` at v26.7.0), so every image in a cluster's output was
tested together by NVIDIA. Each image, with the release that ships it, is declared once in
:mod:`gpustack.profile.model.upstream` (GPU feature discovery ships in the device plugin's image)
and read here as the default of its section's ``image``/``version`` fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from gpustack.fields import documented, item, key
from gpustack.profile.model import upstream
from gpustack.profile.model.common import (
    EnvVar,
    Labels,
    PullPolicy,
    Resources,
    digest,
    enabled,
    env,
    image_field,
    image_ref,
    pull_policy,
    resources,
    version_field,
)

#: Node Feature Discovery, the chart version the GPU Operator chart depends on.
NFD_IMAGE = upstream.NODE_FEATURE_DISCOVERY.ref
#: NVIDIA's MIG manager.
MIG_MANAGER_IMAGE = upstream.MIG_MANAGER.ref
#: The host's systemd services that may hold a GPU, which the MIG manager stops across a MIG mode
#: change where the driver is the host's: NVIDIA's ``default-gpu-clients``
#: (``assets/state-mig-manager/0410_configmap.yaml``, GPU Operator v26.7.0).
HOST_GPU_CLIENTS = (
    "nvsm.service",
    "nvsm-mqtt.service",
    "nvsm-core.service",
    "nvsm-api-gateway.service",
    "nvsm-notifier.service",
    "nv_peer_mem.service",
    "nvidia-dcgm.service",
    "dcgm.service",
    "dcgm-exporter.service",
)
#: A systemd service unit name; no comma (mig-parted joins the list with commas).
SYSTEMD_SERVICE = r"^[A-Za-z0-9:_.@-]+\.service$"
SYSTEMD_SERVICE_HINT = (
    "a systemd service name (<name>.service: letters, digits, ':', '_', '.', '@' and '-', no"
    " commas or spaces, e.g. nvidia-dcgm.service)"
)
#: NVIDIA's DCGM exporter.
DCGM_EXPORTER_IMAGE = upstream.DCGM_EXPORTER.ref


DeployLabels = Literal["optional", "required"]
CounterType = Literal["gauge", "counter", "label"]


@dataclass(frozen=True)
class GpuFeatureDiscovery:
    """NVIDIA's GPU feature discovery (the device plugin image's ``gpu-feature-discovery``):
    labels each GPU node with its GPUs (``nvidia.com/gpu.product``, ``.count``, ``.memory``,
    ``nvidia.com/cuda.*``, ``nvidia.com/mig.*``...). It writes them to a file that Node Feature
    Discovery's worker publishes, so it needs NFD (gpustack's or the cluster's)."""

    enabled: bool = enabled("Deploy GPU feature discovery (needs Node Feature Discovery).")
    # the device plugin image NVIDIA ships it in: one version fact for both
    image: str = image_field(upstream.GPU_FEATURE_DISCOVERY.image)
    version: str = version_field(upstream.GPU_FEATURE_DISCOVERY.tag)
    digest: str | None = digest("GPU feature discovery")
    image_pull_policy: PullPolicy = pull_policy()
    sleep_interval: str = key(
        "Sleep interval",
        "Time between two labelling passes (a Go duration).",
        default="60s",
        pattern=r"^\d+(ms|s|m|h)$",
        examples=["60s"],
    )
    env: tuple[EnvVar, ...] = env()
    resources: Resources = resources()

    def image_ref(self) -> str:
        return image_ref(self.image, self.version, self.digest)


@dataclass(frozen=True)
class NodeFeatureDiscovery:
    """Node Feature Discovery (kubernetes-sigs): worker DaemonSet, master and garbage collector
    Deployments, their RBAC and the ``nfd.k8s-sigs.io`` CRDs. Turn ``enabled`` off where the
    cluster already runs NFD; ``gpuNodeRule`` (the rule that labels NVIDIA GPU nodes
    ``nvidia.com/gpu.present=true``, the default node selector) also works with that NFD: in the
    worker's configuration of gpustack's NFD, a NodeFeatureRule for the cluster's own."""

    enabled: bool = enabled("Deploy Node Feature Discovery; false: the cluster runs its own.")
    gpu_node_rule: bool = key(
        "GPU node rule",
        "A rule that labels nodes with an NVIDIA display or 3D controller"
        " nvidia.com/gpu.present=true (the default node selector): a custom rule in the"
        " worker's configuration of gpustack's NFD, a NodeFeatureRule for the cluster's own"
        " (its CRD is then a stated prerequisite).",
        default=True,
    )
    image: str = image_field(NFD_IMAGE[0])
    version: str = version_field(NFD_IMAGE[1])
    digest: str | None = digest("Node Feature Discovery")
    image_pull_policy: PullPolicy = pull_policy()
    resources: Resources = resources()

    def image_ref(self) -> str:
        return image_ref(self.image, self.version, self.digest)


@dataclass(frozen=True)
class MigManager:
    """NVIDIA's MIG manager: repartitions a node's GPUs to the mig-parted config its
    ``nvidia.com/mig.config`` label names. gpustack generates the configs: ``all-disabled``,
    ``default`` (``gpus.mig``) and one per node config with a layout (named like it); unset
    ``enabled`` deploys it where a layout exists."""

    enabled: bool | None = key(
        "Enabled",
        "Deploy the MIG manager (derived when unset: on when gpus.mig or a node config sets"
        " a MIG layout).",
        default=None,
        examples=[True],
    )
    image: str = image_field(MIG_MANAGER_IMAGE[0])
    version: str = version_field(MIG_MANAGER_IMAGE[1])
    digest: str | None = digest("MIG manager")
    image_pull_policy: PullPolicy = pull_policy()
    env: tuple[EnvVar, ...] = env()
    resources: Resources = resources()
    host_gpu_clients: tuple[
        Annotated[str, item(pattern=SYSTEMD_SERVICE, hint=SYSTEMD_SERVICE_HINT)],
        ...,
    ] = key(
        "Host GPU clients",
        "Systemd services on the host that may hold a GPU (DCGM, NVSM). Where the driver is"
        " installed on the host (driver.enabled: false) the MIG manager stops them across a MIG"
        " mode change and starts them again after; services a node lacks are skipped. By default"
        " NVIDIA's list (the GPU Operator's default-gpu-clients).",
        default=HOST_GPU_CLIENTS,
        unique_items=True,
        examples=[["nvidia-dcgm.service", "my-gpu-agent.service"]],
    )

    def image_ref(self) -> str:
        return image_ref(self.image, self.version, self.digest)


@documented("DCGM counter", "One DCGM field the exporter publishes (a line of its CSV).")
@dataclass(frozen=True)
class Counter:
    """One line of the DCGM exporter's counters CSV: ``<field>, <type>, <help>``."""

    field: str = key(
        "Field", "DCGM field name.", pattern=r"^DCGM_[A-Z0-9_]+$", examples=["DCGM_FI_DEV_GPU_UTIL"]
    )
    help: str = key(
        "Help",
        "Help text of the metric.",
        pattern=r"^[^,\n]+$",
        examples=["GPU utilization (in %)."],
    )
    type: CounterType = key("Type", "Prometheus metric type.", default="gauge")


@dataclass(frozen=True)
class ServiceMonitor:
    """A Prometheus Operator ``ServiceMonitor`` for the exporter's Service."""

    enabled: bool = enabled("Create a ServiceMonitor (needs the Prometheus Operator).", False)
    interval: str = key("Interval", "Scrape interval.", default="15s", pattern=r"^\d+(ms|s|m|h)$")
    labels: Labels = key(
        "Labels",
        "Extra labels of the ServiceMonitor, e.g. the one your Prometheus selects.",
        factory=tuple,
        examples=[{"release": "kube-prometheus-stack"}],
    )


@dataclass(frozen=True)
class MetricsFrom:
    """Who may scrape the exporter: pods matching ``podSelector`` in namespaces matching
    ``namespaceSelector`` (an exception in gpustack's deny-all-ingress NetworkPolicy)."""

    namespace_selector: Labels = key(
        "Namespace selector",
        "Labels of the namespaces the scrapers run in.",
        default=(("kubernetes.io/metadata.name", "monitoring"),),
        examples=[{"kubernetes.io/metadata.name": "monitoring"}],
    )
    pod_selector: Labels = key(
        "Pod selector",
        "Labels of the scraper pods; empty: every pod of those namespaces.",
        factory=tuple,
        examples=[{"app.kubernetes.io/name": "prometheus"}],
    )


@dataclass(frozen=True)
class DcgmExporter:
    """NVIDIA's DCGM exporter: GPU metrics for Prometheus on port 9400 of each GPU node."""

    enabled: bool = enabled("Deploy the DCGM exporter DaemonSet and its Service.", False)
    image: str = image_field(DCGM_EXPORTER_IMAGE[0])
    version: str = version_field(DCGM_EXPORTER_IMAGE[1])
    digest: str | None = digest("DCGM exporter")
    image_pull_policy: PullPolicy = pull_policy()
    counters: tuple[Counter, ...] = key(
        "Counters",
        "The metrics to publish; empty keeps the image's default counters CSV.",
        factory=tuple,
        examples=[[{"field": "DCGM_FI_DEV_GPU_UTIL", "help": "GPU utilization (in %)."}]],
    )
    service_monitor: ServiceMonitor = key(
        "ServiceMonitor", "Prometheus Operator scrape config.", factory=ServiceMonitor
    )
    metrics_from: MetricsFrom = key(
        "Metrics clients",
        "Who may connect to the metrics port (NetworkPolicy ingress exception).",
        factory=MetricsFrom,
    )
    env: tuple[EnvVar, ...] = env()
    resources: Resources = resources()

    def image_ref(self) -> str:
        return image_ref(self.image, self.version, self.digest)
