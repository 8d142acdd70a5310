"""What every conformance table shares: the row types (:class:`Fact`, :class:`Divergence`),
the operands and where NVIDIA's rendering of each lives, the profile conditions rows apply under,
and the upstream files they cite.

Why apart from the rows: the rows are split per component (:mod:`gpustack.conformance.facts`)
and :mod:`gpustack.conformance.divergences`; :mod:`gpustack.conformance.tables` joins them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from gpustack import dra_upstream
from gpustack.conformance import checks as c
from gpustack.constructs import dra_driver as dra
from gpustack.profile import components
from gpustack.profile.derive import gpu_runtime_class, is_simulated
from gpustack.profile.model import Profile
from gpustack.profile.model.upstream import GPU_OPERATOR

TAG: Final = GPU_OPERATOR
GOLDEN: Final = "internal/state/testdata/golden"
CONTROLS: Final = "controllers/object_controls.go"

#: The operands, by the component name the registry gives them (declared there, once).
TOOLKIT: Final = components.for_section("toolkit").name
DEVICE_PLUGIN: Final = components.for_section("device_plugin").name
GFD_OPERAND: Final = components.for_section("gpu_feature_discovery").name
NFD_OPERAND: Final = components.for_section("node_feature_discovery").name
MIG_MANAGER: Final = components.for_section("mig_manager").name
DCGM_EXPORTER: Final = components.for_section("dcgm_exporter").name
#: The DRA driver's kubelet plugin DaemonSet, and its ComputeDomain controller Deployment.
DRA_DRIVER: Final = components.for_section("dra").name
DRA_CONTROLLER: Final = "compute-domain-controller"

#: Operand (gpustack component) -> (its DaemonSet's main container, the operator files to read).
OPERANDS: Final[dict[str, tuple[str, str]]] = {
    "driver": ("nvidia-driver-ctr", f"{GOLDEN}/driver-*.yaml, assets/state-driver"),
    "driver-manager": (
        "k8s-driver-manager",
        f"{GOLDEN}/driver-full-spec.yaml, assets/state-driver",
    ),
    TOOLKIT: ("nvidia-container-toolkit-ctr", "assets/state-container-toolkit"),
    DEVICE_PLUGIN: ("nvidia-device-plugin", "assets/state-device-plugin"),
    # NVIDIA names GFD's container like the component
    GFD_OPERAND: (GFD_OPERAND, "assets/gpu-feature-discovery"),
    NFD_OPERAND: (
        "nfd-worker",
        "deployments/gpu-operator/charts/node-feature-discovery/templates/worker.yaml",
    ),
    MIG_MANAGER: ("nvidia-mig-manager", "assets/state-mig-manager"),
    DCGM_EXPORTER: ("nvidia-dcgm-exporter", "assets/state-dcgm-exporter"),
    # the plugin's containers (gpus, compute-domains) depend on the profile: found by WORKLOADS
    DRA_DRIVER: ("gpus", f"{GOLDEN}/gpucluster-dra-driver-*.yaml, manifests/state-dra-driver"),
    DRA_CONTROLLER: (
        "compute-domain",
        f"{GOLDEN}/gpucluster-dra-driver-full-spec.yaml, manifests/state-dra-driver",
    ),
}

#: The component that carries an operand (the driver manager lives in the driver pod, the
#: ComputeDomain controller is the DRA driver's).
CARRIER: Final[dict[str, str]] = {"driver-manager": "driver", DRA_CONTROLLER: DRA_DRIVER}

#: Operands found by their workload's kind and name rather than by a main container: the DRA
#: kubelet plugin runs a ``gpus`` and/or a ``compute-domains`` container, and the controller is
#: a Deployment.
WORKLOADS: Final[dict[str, tuple[str, str]]] = {
    DRA_DRIVER: ("DaemonSet", dra.KUBELET_PLUGIN),
    DRA_CONTROLLER: ("Deployment", dra.CONTROLLER),
}

Condition = Callable[[Profile], bool]


def always(_: Profile) -> bool:
    return True


def gpu_class(p: Profile) -> str | None:
    return gpu_runtime_class(p)


def has_gpu_class(p: Profile) -> bool:
    return gpu_runtime_class(p) is not None


def nvidia_plugin(p: Profile) -> bool:
    return p.device_plugin.implementation == "nvidia"


def plugin_class(p: Profile) -> bool:
    return has_gpu_class(p) and not is_simulated(p)


def cdi_on(p: Profile) -> bool:
    return p.toolkit.enabled and p.toolkit.cdi.enabled


def driver_enabled(p: Profile) -> bool:
    return p.driver.enabled


def openshift(p: Profile) -> bool:
    return p.cluster.runtime.distribution == "openshift"


def dtk(p: Profile) -> bool:
    return openshift(p) and p.driver.enabled and p.driver.driver_toolkit.image is not None


def precompiled(p: Profile) -> bool:
    return p.driver.use_precompiled


def rdma(p: Profile) -> bool:
    return p.driver.rdma.enabled


def mig_strategy(p: Profile) -> bool:
    return p.device_plugin.mig_strategy != "none"


def toolkit_or_driver(p: Profile) -> bool:
    return p.toolkit.enabled or p.driver.enabled


def dra_gpus(p: Profile) -> bool:
    return p.dra.enabled and p.dra.gpus


def dra_domains(p: Profile) -> bool:
    return p.dra.enabled and p.dra.compute_domains


def install_dir(p: Profile) -> str:
    return p.toolkit.install_dir


def driver_root(p: Profile) -> str:
    return p.driver.root


def kubelet_dir(sub: str) -> Callable[[Profile], str]:
    """``<the distribution's kubelet root>/<sub>`` on the host."""

    def path(p: Profile) -> str:
        return f"{p.cluster.resolved_kubelet_root_dir().rstrip('/')}/{sub}"

    return path


@dataclass(frozen=True)
class Fact:
    """One property of NVIDIA's rendering of ``operand`` that gpustack's output must have."""

    operand: str
    aspect: str
    statement: str
    source: str
    check: c.Check
    when: Condition = always


@dataclass(frozen=True)
class Divergence:
    """A property gpustack renders differently from NVIDIA on purpose; ``check`` holds gpustack
    to what it does instead."""

    operand: str
    aspect: str
    nvidia: str
    gpustack: str
    reason: str
    source: str
    check: c.Check
    when: Condition = always


def src(path: str) -> str:
    return f"gpu-operator {TAG} {path}"


DRIVER_DS: Final = src("assets/state-driver/0500_daemonset.yaml")
TOOLKIT_DS: Final = src("assets/state-container-toolkit/0500_daemonset.yaml")
PLUGIN_DS: Final = src("assets/state-device-plugin/0500_daemonset.yaml")
GFD_DS: Final = src("assets/gpu-feature-discovery/0500_daemonset.yaml")
MIG_DS: Final = src("assets/state-mig-manager/0600_daemonset.yaml")
DCGM_DS: Final = src("assets/state-dcgm-exporter/0800_daemonset.yaml")
NFD_WORKER: Final = src(
    "deployments/gpu-operator/charts/node-feature-discovery/templates/worker.yaml"
)

DRV, MGR, TK = "nvidia-driver-ctr", "k8s-driver-manager", "nvidia-container-toolkit-ctr"
DP, GFD, MIG = "nvidia-device-plugin", GFD_OPERAND, "nvidia-mig-manager"
DCGM, NFD = "nvidia-dcgm-exporter", "nfd-worker"
FEATURES_D: Final = "/etc/kubernetes/node-feature-discovery/features.d"
KERNEL_LABEL: Final = "feature.node.kubernetes.io/kernel-version.full"

DRA_GOLDEN: Final = src(f"{GOLDEN}/gpucluster-dra-driver-full-spec.yaml")
#: The gpus container as NVIDIA renders it by default. The full-spec golden is a test fixture:
#: its test (``gpucluster_render_test.go``) overrides the gpus health port (52000), and both
#: goldens take their feature gates (``MPSSupport=true``) from ``sampleGPUCluster`` in
#: ``dra_driver_test.go``, not from the chart's default (``draDriver.featureGates: {}``).
DRA_GPUS_GOLDEN: Final = src(
    f"{GOLDEN}/gpucluster-dra-driver-gpus-only.yaml, internal/state/dra_driver.go"
    " (defaultGPUsHealthcheckPort)"
)
#: What NVIDIA's chart renders for the DRA driver with its default values.
DRA_DEFAULTS: Final = src(
    "deployments/gpu-operator/values.yaml (draDriver.featureGates: {}),"
    " deployments/gpu-operator/templates/gpucluster.yaml,"
    " manifests/state-dra-driver/0500_daemonset.yaml, 0140_kubeletplugin-mps-role.yaml"
)
#: The driver's own source, for what the operator's rendering leaves to it.


def dra_src(path: str) -> str:
    """The DRA driver's own source (kubernetes-sigs/dra-driver-nvidia-gpu ``main`` at 95932046,
    v0.5.0-dev, the release v26.7.0 pins), for what the operator's rendering leaves to it."""
    return f"dra-driver-nvidia-gpu 95932046 {path}"


DRA_DEPLOY_LABEL: Final = "nvidia.com/gpu.deploy.dra-driver"
CD_GROUP: Final = dra_upstream.COMPUTE_DOMAIN_API_GROUP


def no_role_named(part: str) -> c.Check:
    def check(r: c.Rendered) -> str | None:
        found = [
            o["metadata"]["name"]
            for o in r.objects
            if o.get("kind") in ("Role", "ClusterRole") and part in o["metadata"]["name"]
        ]
        return f"roles {found} exist" if found else None

    return check
