"""NVIDIA's DCGM exporter: GPU metrics for Prometheus on port 9400 of each GPU node.

Shape follows the GPU Operator's ``assets/state-dcgm-exporter`` and NVIDIA/dcgm-exporter's
``deployment/``: the ``nvidia`` runtime class gives it the GPUs, it waits for ``toolkit-ready``
like the other GPU clients, it reads the kubelet's pod-resources socket to attribute GPUs to
pods (no API access: no token, no RBAC), and a ``nvidia-dcgm-exporter`` Service publishes the
metrics port. ``CAP_SYS_ADMIN`` (dcgm-exporter's own manifest; the operator runs it privileged)
is what DCGM's profiling metrics need. With ``dcgmExporter.counters`` the counters CSV is a
ConfigMap the exporter reads instead of the image's default list; with
``serviceMonitor.enabled`` a Prometheus Operator ServiceMonitor scrapes the Service. The
NetworkPolicy exception for the metrics port lives with the deny-all policy in
:mod:`gpustack.constructs.common`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from constructs import Construct

from gpustack.constructs import k8s, kube
from gpustack.constructs.node_daemonset import CONFIG_CHECKSUM, NodeApp, NodeDaemonSet
from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.constructs.runtime import gpu_runtime_class
from gpustack.constructs.waits import WaitFor, gpu_wait
from gpustack.profile.model import Counter, Profile
from gpustack.profile.prerequisites import SERVICE_MONITOR

NAME: Final = "nvidia-dcgm-exporter"
COMPONENT: Final = "dcgm-exporter"
METRICS_PORT: Final = 9400
INIT_CONTAINER: Final = "toolkit-validation"
COUNTERS_MAP: Final = "nvidia-dcgm-exporter-counters"
COUNTERS_DIR: Final = "/etc/dcgm-exporter/gpustack"
COUNTERS_FILE: Final = "counters.csv"
#: Where the kubelet serves the pod-resources API (under its root directory).
POD_RESOURCES: Final = "/var/lib/kubelet/pod-resources"


def render_counters(counters: tuple[Counter, ...]) -> str:
    """The counters CSV dcgm-exporter reads: ``<field>, <type>, <help>`` per line."""
    lines = ["# DCGM FIELD, Prometheus metric type, help message"]
    lines += [f"{c.field}, {c.type}, {c.help}" for c in counters]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class DcgmExporterProps:
    """Properties for :class:`DcgmExporter`, from ``dcgmExporter`` and ``cluster`` (the profile
    model owns the defaults).

    - ``container``: image, pull policy, env, resources.
    - ``placement``: namespace and scheduling.
    - ``version``: for the version label.
    - ``counters_csv``: the counters CSV, ``None`` for the image's default.
    - ``service_monitor``: create a ServiceMonitor; ``interval`` and ``monitor_labels`` its
      scrape interval and extra labels.
    - ``runtime_class``, ``wait_for``: as GPU feature discovery's.
    - ``pod_resources``: the kubelet's pod-resources folder on the host.
    """

    container: ContainerSettings
    placement: Placement
    version: str
    counters_csv: str | None
    service_monitor: bool
    interval: str
    monitor_labels: tuple[tuple[str, str], ...]
    runtime_class: str | None
    wait_for: WaitFor | None
    pod_resources: str

    @classmethod
    def from_profile(cls, profile: Profile) -> DcgmExporterProps:
        d = profile.dcgm_exporter
        root = profile.cluster.resolved_kubelet_root_dir().rstrip("/")
        return cls(
            container=ContainerSettings.from_section(d),
            placement=Placement.from_profile(profile),
            version=d.version,
            counters_csv=render_counters(d.counters) if d.counters else None,
            service_monitor=d.service_monitor.enabled,
            interval=d.service_monitor.interval,
            monitor_labels=d.service_monitor.labels,
            runtime_class=gpu_runtime_class(profile),
            wait_for=gpu_wait(profile),
            pod_resources=f"{root}/pod-resources",
        )


class DcgmExporter(Construct):
    """ServiceAccount (no token), the ``nvidia-dcgm-exporter`` DaemonSet and Service, the
    counters ConfigMap when customized and the ServiceMonitor when enabled."""

    def __init__(self, scope: Construct, id: str, props: DcgmExporterProps) -> None:
        super().__init__(scope, id)
        self.props = props
        ds = NodeDaemonSet.of(self, NAME, COMPONENT, props)
        app, self.ident = ds.app, ds.app.ident
        ds.add(
            "daemonset",
            NAME,
            containers=[self._exporter(ds)],
            init_containers=ds.waits(props.wait_for, INIT_CONTAINER),
            runtime_class_name=props.runtime_class,
        )
        self._service(app)
        if props.service_monitor:
            self._service_monitor()

    def _exporter(self, ds: NodeDaemonSet) -> k8s.Container:
        """The exporter: the pod-resources socket, and the counters CSV when customized."""
        props = self.props
        env = [
            ("DCGM_EXPORTER_LISTEN", f":{METRICS_PORT}"),
            ("DCGM_EXPORTER_KUBERNETES", "true"),
            ("NVIDIA_VISIBLE_DEVICES", "all"),
        ]
        pod_resources = kube.host_path("pod-gpu-resources", props.pod_resources)
        mounts = [ds.mount(pod_resources, POD_RESOURCES, read_only=True)]
        if props.counters_csv is not None:
            volume = ds.config_map(
                "counters",
                COUNTERS_MAP,
                {COUNTERS_FILE: props.counters_csv},
                checksum=CONFIG_CHECKSUM,
                volume="counters",
            )
            mounts.append(ds.mount(volume, COUNTERS_DIR, read_only=True))
            env.append(("DCGM_EXPORTER_COLLECTORS", f"{COUNTERS_DIR}/{COUNTERS_FILE}"))
        probe = k8s.Probe(
            http_get=k8s.HttpGetAction(path="/health", port=METRICS_PORT),
            initial_delay_seconds=45,
            period_seconds=5,
        )
        return kube.main_container(
            NAME,
            props.container,
            env=kube.env_list(env, props.container.env, field_refs={"NODE_NAME": "spec.nodeName"}),
            ports=[k8s.ContainerPort(name="metrics", container_port=METRICS_PORT)],
            liveness_probe=probe,
            readiness_probe=probe,
            security_context=k8s.SecurityContext(
                allow_privilege_escalation=False,
                capabilities=k8s.Capabilities(add=["SYS_ADMIN"]),
                run_as_user=0,
            ),
            volume_mounts=mounts,
        )

    def _service(self, app: NodeApp) -> None:
        """``nvidia-dcgm-exporter``: the metrics port of every exporter pod."""
        port = k8s.ServicePort(
            name="gpu-metrics", port=METRICS_PORT, target_port="metrics", protocol="TCP"
        )
        kube.service(
            self,
            "service",
            metadata=app.meta(NAME),
            spec=k8s.ServiceSpec(selector=self.ident.selector(), ports=[port]),
        )

    def _service_monitor(self) -> None:
        """A Prometheus Operator ServiceMonitor that scrapes the Service, with the profile's
        interval and extra labels."""
        ident, namespace = self.ident, self.props.placement.namespace
        endpoint = {"port": "gpu-metrics", "path": "/metrics", "interval": self.props.interval}
        kube.api_object(
            self,
            "service-monitor",
            api_version=SERVICE_MONITOR.api_version,
            kind=SERVICE_MONITOR.kind,
            name=NAME,
            namespace=namespace,
            labels={**dict(self.props.monitor_labels), **ident.labels()},
            annotations=ident.annotations(),
            body={
                "spec": {
                    "selector": {"matchLabels": ident.selector()},
                    "namespaceSelector": {"matchNames": [namespace]},
                    "endpoints": [endpoint],
                }
            },
        )
