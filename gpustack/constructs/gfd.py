"""NVIDIA's GPU feature discovery: labels each GPU node with what its GPUs are.

The device plugin image's ``gpu-feature-discovery`` queries NVML every ``sleepInterval`` and writes
``nvidia.com/gpu.product``, ``.count``, ``.memory``, ``nvidia.com/cuda.*``, ``nvidia.com/mig.*``...
to a file in NFD's ``features.d`` folder, which Node Feature Discovery's worker publishes. So it
needs no API access (no token, no RBAC), unlike its NodeFeature API mode, which gpustack turns off
with ``USE_NODE_FEATURE_API=false``: from device plugin v0.19.0 that mode is the default
(``use-node-feature-api`` is ``true`` in ``cmd/gpu-feature-discovery/main.go`` at the pinned
release; unset before v0.19.0), and without a token its client cannot be built, so GFD would exit
at start. The GPU Operator v26.7.0 leaves the API mode on and grants it ``nodefeatures`` and, for
the NodeFeature's owner, ``pods`` get with ``POD_NAME`` (``assets/gpu-feature-discovery``); the
flag is the same in older releases, so a pinned v0.18.x behaves alike.

Shape follows NVIDIA's Helm chart (``daemonset-gfd.yml``) and the GPU Operator's (``assets/gpu-
feature-discovery``): it waits for ``toolkit-ready`` like the device plugin, runs with the
``nvidia`` runtime class, and gets ``CAP_SYS_ADMIN`` only with a MIG strategy (to read MIG
devices), as the chart does. Its MIG strategy is the top-level ``devicePlugin.migStrategy``; node
configs with another strategy label as the top level says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from constructs import Construct

from gpustack.constructs import k8s, kube
from gpustack.constructs.nfd import FEATURES_D
from gpustack.constructs.node_daemonset import NodeDaemonSet
from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.constructs.runtime import gpu_runtime_class
from gpustack.constructs.waits import WaitFor, gpu_wait
from gpustack.profile.model import MigStrategy, Profile

NAME: Final = "gpu-feature-discovery"
COMPONENT: Final = "gpu-feature-discovery"
INIT_CONTAINER: Final = "toolkit-validation"


@dataclass(frozen=True)
class GfdProps:
    """Properties for :class:`GpuFeatureDiscovery`, from ``gpuFeatureDiscovery``,
    ``devicePlugin`` and ``cluster`` (the profile model owns the defaults).

    - ``container``: image (NVIDIA's device plugin image), pull policy, env, resources.
    - ``placement``: namespace and scheduling.
    - ``version``: for the version label.
    - ``mig_strategy``: ``devicePlugin.migStrategy``.
    - ``sleep_interval``: time between labelling passes.
    - ``runtime_class``: the RuntimeClass that gives it NVML.
    - ``wait_for``: see :func:`gpustack.constructs.waits.gpu_wait`.
    """

    container: ContainerSettings
    placement: Placement
    version: str
    mig_strategy: MigStrategy
    sleep_interval: str
    runtime_class: str | None
    wait_for: WaitFor | None

    @classmethod
    def from_profile(cls, profile: Profile) -> GfdProps:
        gfd = profile.gpu_feature_discovery
        return cls(
            container=ContainerSettings.from_section(gfd),
            placement=Placement.from_profile(profile),
            version=gfd.version,
            mig_strategy=profile.device_plugin.mig_strategy,
            sleep_interval=gfd.sleep_interval,
            runtime_class=gpu_runtime_class(profile),
            wait_for=gpu_wait(profile),
        )


class GpuFeatureDiscovery(Construct):
    """ServiceAccount (no token) and the ``gpu-feature-discovery`` DaemonSet."""

    def __init__(self, scope: Construct, id: str, props: GfdProps) -> None:
        super().__init__(scope, id)
        self.props = props
        ds = NodeDaemonSet.of(self, NAME, COMPONENT, props)
        mig = props.mig_strategy != "none"
        env = [
            ("MIG_STRATEGY", props.mig_strategy),
            ("GFD_SLEEP_INTERVAL", props.sleep_interval),
            ("GFD_FAIL_ON_INIT_ERROR", "true"),
            ("NVIDIA_VISIBLE_DEVICES", "all"),
            # labels go to the features.d file, not the NodeFeature API (default from v0.19.0)
            ("USE_NODE_FEATURE_API", "false"),
        ]
        if mig:
            env.append(("NVIDIA_MIG_MONITOR_DEVICES", "all"))
        security = (
            k8s.SecurityContext(
                allow_privilege_escalation=False,
                capabilities=k8s.Capabilities(add=["SYS_ADMIN"]),
                read_only_root_filesystem=True,
            )
            if mig
            else kube.unprivileged()
        )
        container = kube.main_container(
            NAME,
            props.container,
            command=["gpu-feature-discovery"],
            env=kube.env_list(
                env,
                props.container.env,
                field_refs={"NODE_NAME": "spec.nodeName", "NAMESPACE": "metadata.namespace"},
            ),
            security_context=security,
            volume_mounts=[
                ds.mount(kube.host_path("output-dir", FEATURES_D, "DirectoryOrCreate"), FEATURES_D),
                ds.mount(kube.host_path("host-sys", "/sys", "Directory"), "/sys", read_only=True),
            ],
        )
        waits = ds.waits(props.wait_for, INIT_CONTAINER)
        ds.add(
            "daemonset",
            NAME,
            containers=[container],
            init_containers=waits,
            runtime_class_name=props.runtime_class,
        )
