"""Conformance tables: what NVIDIA's own rendering of each operand does that decides whether it
works on a node, and where gpustack deliberately does otherwise.

Why: gpustack synthesizes the operands the GPU Operator would run, without the operator. The
operator's repository holds its rendering at the tag gpustack's defaults come from (GPU Operator
v26.7.0): golden DaemonSets (``internal/state/testdata/golden/*.yaml``), the per-operand assets
(``assets/state-*``) and the transforms that complete them (``controllers/object_controls.go``,
``Transform<Operand>``). Each :class:`Fact` states one property of that rendering in gpustack's
own words, cites the file, and names the check that holds gpustack's output to it; ``when`` says
for which profiles it applies. Each :class:`Divergence` is a property gpustack renders
differently on purpose, with the reason, and its own check of what gpustack does instead.
``tests/test_conformance.py`` runs every row over every example profile's DaemonSets; the site page
section "Where gpustack differs from the GPU Operator, and why" is rendered from
:data:`DIVERGENCES` (``python -m gpustack.conformance.readme``).

Operands are named by the ``app.kubernetes.io/component`` gpustack gives their objects; the
driver manager is the driver pod's ``k8s-driver-manager`` init container.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import yaml

from gpustack import dra_upstream
from gpustack.conformance import checks as c
from gpustack.constructs import dra_driver as dra
from gpustack.constructs import mig_manager as mig
from gpustack.constructs.driver_manager import LABELS_CONTAINER
from gpustack.constructs.kube import CDI_ROOT
from gpustack.constructs.plugin_config import CONFIG_DIR as PLUGIN_CONFIG_DIR
from gpustack.constructs.plugin_config import CONFIG_KEY as PLUGIN_CONFIG_KEY
from gpustack.constructs.scripts import DRIVER_ROOT_CTR_PATH, SCRIPTS_DIR
from gpustack.kube.labels import CONTROL_PLANE
from gpustack.profile import components
from gpustack.profile.derive import gpu_runtime_class, is_simulated
from gpustack.profile.model import Profile
from gpustack.profile.model.upstream import GPU_OPERATOR
from gpustack.profile.versions import tag_at_least

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


def _gpu_class(p: Profile) -> str | None:
    return gpu_runtime_class(p)


def _has_gpu_class(p: Profile) -> bool:
    return gpu_runtime_class(p) is not None


def _nvidia_plugin(p: Profile) -> bool:
    return p.device_plugin.implementation == "nvidia"


def _plugin_class(p: Profile) -> bool:
    return _has_gpu_class(p) and not is_simulated(p)


def _cdi(p: Profile) -> bool:
    return p.toolkit.enabled and p.toolkit.cdi.enabled


def _driver_enabled(p: Profile) -> bool:
    return p.driver.enabled


def _openshift(p: Profile) -> bool:
    return p.cluster.runtime.distribution == "openshift"


def _dtk(p: Profile) -> bool:
    return _openshift(p) and p.driver.enabled and p.driver.driver_toolkit.image is not None


def _precompiled(p: Profile) -> bool:
    return p.driver.use_precompiled


def _rdma(p: Profile) -> bool:
    return p.driver.rdma.enabled


def _mig_strategy(p: Profile) -> bool:
    return p.device_plugin.mig_strategy != "none"


def _toolkit_or_driver(p: Profile) -> bool:
    return p.toolkit.enabled or p.driver.enabled


def _dra_gpus(p: Profile) -> bool:
    return p.dra.enabled and p.dra.gpus


def _dra_domains(p: Profile) -> bool:
    return p.dra.enabled and p.dra.compute_domains


def _install_dir(p: Profile) -> str:
    return p.toolkit.install_dir


def _driver_root(p: Profile) -> str:
    return p.driver.root


def _kubelet_dir(sub: str) -> Callable[[Profile], str]:
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


def _src(path: str) -> str:
    return f"gpu-operator {TAG} {path}"


DRIVER_DS: Final = _src("assets/state-driver/0500_daemonset.yaml")
TOOLKIT_DS: Final = _src("assets/state-container-toolkit/0500_daemonset.yaml")
PLUGIN_DS: Final = _src("assets/state-device-plugin/0500_daemonset.yaml")
GFD_DS: Final = _src("assets/gpu-feature-discovery/0500_daemonset.yaml")
MIG_DS: Final = _src("assets/state-mig-manager/0600_daemonset.yaml")
DCGM_DS: Final = _src("assets/state-dcgm-exporter/0800_daemonset.yaml")
NFD_WORKER: Final = _src(
    "deployments/gpu-operator/charts/node-feature-discovery/templates/worker.yaml"
)

DRV, MGR, TK = "nvidia-driver-ctr", "k8s-driver-manager", "nvidia-container-toolkit-ctr"
DP, GFD, MIG = "nvidia-device-plugin", GFD_OPERAND, "nvidia-mig-manager"
DCGM, NFD = "nvidia-dcgm-exporter", "nfd-worker"
FEATURES_D: Final = "/etc/kubernetes/node-feature-discovery/features.d"
KERNEL_LABEL: Final = "feature.node.kubernetes.io/kernel-version.full"

DRA_GOLDEN: Final = _src(f"{GOLDEN}/gpucluster-dra-driver-full-spec.yaml")
#: The gpus container as NVIDIA renders it by default. The full-spec golden is a test fixture:
#: its test (``gpucluster_render_test.go``) overrides the gpus health port (52000), and both
#: goldens take their feature gates (``MPSSupport=true``) from ``sampleGPUCluster`` in
#: ``dra_driver_test.go``, not from the chart's default (``draDriver.featureGates: {}``).
DRA_GPUS_GOLDEN: Final = _src(
    f"{GOLDEN}/gpucluster-dra-driver-gpus-only.yaml, internal/state/dra_driver.go"
    " (defaultGPUsHealthcheckPort)"
)
#: What NVIDIA's chart renders for the DRA driver with its default values.
DRA_DEFAULTS: Final = _src(
    "deployments/gpu-operator/values.yaml (draDriver.featureGates: {}),"
    " deployments/gpu-operator/templates/gpucluster.yaml,"
    " manifests/state-dra-driver/0500_daemonset.yaml, 0140_kubeletplugin-mps-role.yaml"
)
#: The driver's own source, for what the operator's rendering leaves to it.


def _dra_src(path: str) -> str:
    """The DRA driver's own source (kubernetes-sigs/dra-driver-nvidia-gpu ``main`` at 95932046,
    v0.5.0-dev, the release v26.7.0 pins), for what the operator's rendering leaves to it."""
    return f"dra-driver-nvidia-gpu 95932046 {path}"


DRA_DEPLOY_LABEL: Final = "nvidia.com/gpu.deploy.dra-driver"
CD_GROUP: Final = dra_upstream.COMPUTE_DOMAIN_API_GROUP


def _dra_plugin_facts(
    ctr: str, binary: str, port: int, endpoint: str, every: int, when: Condition
) -> tuple[Fact, ...]:
    """The facts NVIDIA's rendering states alike for each kubelet plugin container (``gpus``:
    ``gpu-kubelet-plugin``; ``compute-domains``: ``compute-domain-kubelet-plugin``)."""
    src = DRA_GPUS_GOLDEN if ctr == "gpus" else DRA_GOLDEN
    # NVIDIA renders /var/lib/kubelet/...; the chart takes both folders as values
    # (kubeletPlugin.kubeletRegistrarDirectoryPath, kubeletPluginsDirectoryPath): the facts name
    # the folders under the kubelet root of the profile's distribution
    registry, plugins = _kubelet_dir("plugins_registry"), _kubelet_dir("plugins")
    return (
        Fact(
            DRA_DRIVER,
            "containers",
            f"the {ctr} container runs {binary}",
            src,
            c.command(ctr, binary),
            when,
        ),
        Fact(
            DRA_DRIVER,
            "privileges",
            f"{ctr} is privileged: it reads NVML, sees every device"
            " node and writes CDI specs and sockets on the host",
            src,
            c.privileged(ctr),
            when,
        ),
        Fact(
            DRA_DRIVER,
            "host paths",
            f"{ctr}: the kubelet's plugin registry (the registration socket)",
            src,
            c.host_path(ctr, registry),
            when,
        ),
        Fact(
            DRA_DRIVER,
            "host paths",
            f"{ctr}: the kubelet's plugins folder, Bidirectional, at the same path inside (the"
            " DRA socket the kubelet dials; draplugin.go PluginDataDirectoryPath)",
            src,
            c.host_path(ctr, plugins, at=plugins, propagation="Bidirectional"),
            when,
        ),
        Fact(
            DRA_DRIVER,
            "host paths",
            f"{ctr}: {CDI_ROOT}, where it writes a CDI spec per prepared claim for the runtime",
            src,
            c.host_path(ctr, CDI_ROOT, at=CDI_ROOT),
            when,
        ),
        Fact(
            DRA_DRIVER,
            "host paths",
            f"{ctr}: the driver root at {DRIVER_ROOT_CTR_PATH},"
            " HostToContainer (libraries and binaries it names in the CDI specs)",
            src,
            c.host_path(ctr, _driver_root, at=DRIVER_ROOT_CTR_PATH, propagation="HostToContainer"),
            when,
        ),
        Fact(
            DRA_DRIVER,
            "env",
            f"{ctr}: CDI_ROOT names {CDI_ROOT}",
            src,
            c.env(ctr, "CDI_ROOT", CDI_ROOT),
            when,
        ),
        Fact(
            DRA_DRIVER,
            "env",
            f"{ctr}: NVIDIA_VISIBLE_DEVICES=void: the runtime injects no"
            " GPU into the plugin itself",
            src,
            c.env(ctr, "NVIDIA_VISIBLE_DEVICES", "void"),
            when,
        ),
        Fact(
            DRA_DRIVER,
            "env",
            f"{ctr}: NVIDIA_MIG_CONFIG_DEVICES=all",
            src,
            c.env(ctr, "NVIDIA_MIG_CONFIG_DEVICES", "all"),
            when,
        ),
        Fact(
            DRA_DRIVER,
            "env",
            f"{ctr}: KUBELET_REGISTRAR_DIRECTORY_PATH names the plugin registry",
            src,
            c.env(ctr, "KUBELET_REGISTRAR_DIRECTORY_PATH", registry),
            when,
        ),
        Fact(
            DRA_DRIVER,
            "env",
            f"{ctr}: KUBELET_PLUGINS_DIRECTORY_PATH names the plugins folder",
            src,
            c.env(ctr, "KUBELET_PLUGINS_DIRECTORY_PATH", plugins),
            when,
        ),
        Fact(
            DRA_DRIVER,
            "env",
            f"{ctr}: NODE_NAME (from spec.nodeName) and NAMESPACE",
            src,
            c.env(ctr, "NODE_NAME"),
            when,
        ),
        Fact(
            DRA_DRIVER,
            "env",
            f"{ctr}: metrics at HTTP_ENDPOINT {endpoint}",
            src,
            c.env(ctr, "HTTP_ENDPOINT", endpoint),
            when,
        ),
        Fact(
            DRA_DRIVER,
            "ports",
            f"{ctr}: HEALTHCHECK_PORT {port}, its gRPC health server",
            src,
            c.env(ctr, "HEALTHCHECK_PORT", str(port)),
            when,
        ),
        Fact(
            DRA_DRIVER,
            "probes",
            f"{ctr}: a gRPC startup probe on {port} (service liveness,"
            " every second, up to 600 failures)",
            src,
            c.grpc_probe(ctr, "startupProbe", port, periodSeconds=1, failureThreshold=600),
            when,
        ),
        Fact(
            DRA_DRIVER,
            "probes",
            f"{ctr}: a gRPC liveness probe on {port} every {every} s",
            src,
            c.grpc_probe(ctr, "livenessProbe", port, periodSeconds=every),
            when,
        ),
    )


def _slice_policy(r: c.Rendered) -> str | None:
    """The plugin's ServiceAccount may write only ResourceSlices of the node its token names."""
    user = f"system:serviceaccount:{r.workload['metadata']['namespace']}:{dra.KUBELET_PLUGIN_SA}"
    for o in r.objects:
        if o.get("kind") != "ValidatingAdmissionPolicy":
            continue
        spec = o["spec"]
        if not any(user in m["expression"] for m in spec.get("matchConditions", [])):
            continue
        names = " ".join(v["expression"] for v in spec.get("variables", []))
        if "authentication.kubernetes.io/node-name" in names and "nodeName" in names:
            return None
        return f"{o['metadata']['name']} does not compare the token's node with the slice's"
    return f"no ValidatingAdmissionPolicy matching {user}"


def _controller_image(r: c.Rendered) -> str | None:
    """IMAGE_NAME is the controller's own image: the IMEX daemons it starts run it."""
    ctr = r.container("compute-domain") or {}
    return c.env("compute-domain", "IMAGE_NAME", ctr.get("image", ""))(r)


def _controller_hardened(r: c.Rendered) -> str | None:
    sc = (r.container("compute-domain") or {}).get("securityContext") or {}
    drops = (sc.get("capabilities") or {}).get("drop") or []
    if sc.get("privileged") or "ALL" not in drops or sc.get("readOnlyRootFilesystem") is not True:
        return "compute-domain: not unprivileged with ALL dropped and a read-only root"
    return None


def _no_role_named(part: str) -> c.Check:
    def check(r: c.Rendered) -> str | None:
        found = [
            o["metadata"]["name"]
            for o in r.objects
            if o.get("kind") in ("Role", "ClusterRole") and part in o["metadata"]["name"]
        ]
        return f"roles {found} exist" if found else None

    return check


def _plugin_containers_direct(r: c.Rendered) -> str | None:
    """No validator: the plugin binaries run directly, told the driver root by env."""
    if r.container("driver-validation"):
        return "driver-validation present"
    for ctr, binary in (("gpus", "gpu-kubelet-plugin"),
                        ("compute-domains", "compute-domain-kubelet-plugin")):  # fmt: skip
        if r.container(ctr) is None:
            continue
        for check in (c.command(ctr, binary), c.env(ctr, "NVIDIA_DRIVER_ROOT", _driver_root)):
            problem = check(r)
            if problem:
                return problem
    return None


def _only_node_local_slices(r: c.Rendered) -> str | None:
    for o in r.objects:
        if o.get("kind") == "ValidatingAdmissionPolicy" and o["metadata"]["name"] == (
            dra.SLICE_POLICY
        ):
            text = str(o["spec"])
            return (
                "the policy admits allNodes/nodeSelector slices"
                if ("allNodes" in text or "nodeSelector" in text)
                else None
            )
    return f"no ValidatingAdmissionPolicy {dra.SLICE_POLICY}"


def _seeds_labels(p: Profile) -> bool:
    return (
        p.driver.enabled
        and p.driver.upgrade.driver_manager
        and (p.cluster.deploy_labels == "optional")
    )


def _kubectl_image(r: c.Rendered) -> str | None:
    """The deploy-labels init container runs the profile's kubectl image."""
    ctr = r.container(LABELS_CONTAINER)
    if ctr is None:
        return f"no {LABELS_CONTAINER} init container"
    want = r.profile.driver.upgrade.kubectl_image
    return None if ctr.get("image") == want else f"{LABELS_CONTAINER}: image is not {want}"


def _no_feature_gates(r: c.Rendered) -> str | None:
    """No FEATURE_GATES on either plugin container and no MPS Role: the chart's default."""
    for ctr in ("gpus", "compute-domains"):
        if r.container(ctr) is not None and c.env(ctr, "FEATURE_GATES")(r) is None:
            return f"{ctr}: FEATURE_GATES set"
    return _no_role_named("mps")(r)


def _gpu_clients_file(r: c.Rendered) -> str | None:
    """GPU_CLIENTS_FILE names a file, mounted from a ConfigMap, listing the profile's services
    (NVIDIA's by default, held to them in ``tests/constructs/test_mig_manager.py``)."""
    path = f"{mig.GPU_CLIENTS_DIR}/{mig.GPU_CLIENTS_KEY}"
    problem = c.env(MIG, "GPU_CLIENTS_FILE", path)(r)
    if problem:
        return problem
    cm = c.mounted_config_map(r, MIG, mig.GPU_CLIENTS_DIR)
    if cm is None:
        return f"{MIG}: no ConfigMap mounted at {mig.GPU_CLIENTS_DIR}"
    clients = yaml.safe_load(cm["data"].get(mig.GPU_CLIENTS_KEY, "")) or {}
    want, got = list(r.profile.mig_manager.host_gpu_clients), clients.get("systemd-services")
    return None if got == want else f"{MIG}: the clients file lists {got}, expected {want}"


def _shutdown_follows_host_driver(r: c.Rendered) -> str | None:
    """The entrypoint exports WITH_SHUTDOWN_HOST_GPU_CLIENTS from driver-ready's IS_HOST_DRIVER
    before it runs the manager."""
    cm = c.mounted_config_map(r, MIG, SCRIPTS_DIR)
    script = (cm or {}).get("data", {}).get("entrypoint.sh", "")
    head = script.split("exec nvidia-mig-manager")[0]
    if "IS_HOST_DRIVER" not in head or "export WITH_SHUTDOWN_HOST_GPU_CLIENTS" not in head:
        return f"{MIG}: the entrypoint does not derive WITH_SHUTDOWN_HOST_GPU_CLIENTS"
    return None


def _host_root_writable(r: c.Rendered) -> str | None:
    problem = c.host_path(MIG, "/", at="/host", propagation="HostToContainer")(r)
    if problem:
        return problem
    paths = r.host_paths()
    for m in (r.container(MIG) or {}).get("volumeMounts", []):
        if paths.get(m["name"]) == "/" and m["mountPath"] == "/host" and m.get("readOnly"):
            return f"{MIG}: the host root is read-only at /host"
    return None


def _plugin_privileges(r: c.Rendered) -> str | None:
    """The plugin container's privileges follow NVIDIA's Helm chart rules for its own config:
    privileged with passDeviceSpecs; else all capabilities dropped, SYS_ADMIN added with a MIG
    strategy or the volume-mounts device list strategy."""
    cm = c.mounted_config_map(r, DP, PLUGIN_CONFIG_DIR)
    if cm is None:
        return f"{DP}: no config ConfigMap"
    config = yaml.safe_load(cm["data"].get(PLUGIN_CONFIG_KEY, "")) or {}
    flags = config.get("flags") or {}
    plugin = flags.get("plugin") or {}
    sc = (r.container(DP) or {}).get("securityContext") or {}
    if plugin.get("passDeviceSpecs"):
        return None if sc.get("privileged") is True else f"{DP}: passDeviceSpecs, not privileged"
    if sc.get("privileged"):
        return f"{DP}: privileged without passDeviceSpecs"
    caps = sc.get("capabilities") or {}
    strategies = plugin.get("deviceListStrategy") or []  # NVIDIA's format: a name or a list
    if isinstance(strategies, str):
        strategies = [strategies]
    needs = flags.get("migStrategy", "none") != "none" or "volume-mounts" in strategies
    has = "SYS_ADMIN" in (caps.get("add") or [])
    if "ALL" not in (caps.get("drop") or []):
        return f"{DP}: capabilities not dropped"
    if needs != has:
        return f"{DP}: SYS_ADMIN {'missing' if needs else 'added'} (migStrategy/volume-mounts)"
    return None


FACTS: Final[tuple[Fact, ...]] = (
    # --- driver ---------------------------------------------------------------------------
    Fact("driver", "privileges", "the driver container is privileged: it loads kernel modules"
         " and creates device nodes", _src(f"{GOLDEN}/driver-minimal.yaml"), c.privileged(DRV)),
    Fact("driver", "host namespaces", "hostPID: the driver container checks and stops host"
         " processes holding the GPU", _src(f"{GOLDEN}/driver-minimal.yaml"),
         c.pod_field("hostPID", True)),
    Fact("driver", "host paths", "/run/nvidia is shared with the host Bidirectionally: the"
         " driver root it mounts at /run/nvidia/driver must reach the toolkit and the plugins",
         DRIVER_DS, c.host_path(DRV, "/run/nvidia", propagation="Bidirectional")),
    Fact("driver", "host paths", "the host's /etc/os-release, read-only: the driver picks its"
         " kernel headers by the host OS", DRIVER_DS,
         c.host_path(DRV, "/etc/os-release", at="/host-etc/os-release")),
    Fact("driver", "host paths", "/sys/devices/system (v26.x; earlier only its"
         " memory/auto_online_blocks): memory onlining on coherent (Grace) systems",
         DRIVER_DS, c.host_path(DRV, "/sys/devices/system")),
    Fact("driver", "host paths", "the firmware search path parameter and the driver root's"
         " /lib/firmware: the GSP firmware is loaded from the driver container",
         DRIVER_DS, c.host_path(DRV, "/sys/module/firmware_class/parameters/path")),
    Fact("driver", "probes", "a startup probe gates readiness on the modules being loaded and"
         " nvidia-smi answering (a script from a ConfigMap since v26.x)", DRIVER_DS,
         c.probe(DRV, "startupProbe")),
    Fact("driver", "env", "KERNEL_MODULE_TYPE selects open or proprietary modules",
         _src(f"{GOLDEN}/driver-full-spec.yaml"), c.env(DRV, "KERNEL_MODULE_TYPE")),
    Fact("driver", "env", "NVIDIA_VISIBLE_DEVICES=void: the runtime injects no GPU into the"
         " driver container even where the NVIDIA runtime is the default",
         _src(f"{GOLDEN}/driver-minimal.yaml"), c.env(DRV, "NVIDIA_VISIBLE_DEVICES", "void")),
    Fact("driver", "node selection", "a precompiled driver runs only on nodes whose"
         " kernel-version.full label is the kernel it was built for"
         " (transformPrecompiledDriverDaemonset)",
         _src(f"{GOLDEN}/driver-precompiled.yaml, {CONTROLS}"),
         c.selects_on(KERNEL_LABEL), when=_precompiled),
    Fact("driver", "env", "with GPUDirect RDMA the driver container is told"
         " GPU_DIRECT_RDMA_ENABLED and where MOFED lives", _src(f"{GOLDEN}/driver-rdma.yaml"),
         c.env(DRV, "GPU_DIRECT_RDMA_ENABLED", "true"), when=_rdma),
    Fact("driver", "host paths", "with GPUDirect RDMA /run/mellanox/drivers is mounted"
         " HostToContainer (a MOFED driver container publishes there)",
         _src(f"{GOLDEN}/driver-rdma.yaml"),
         c.host_path(DRV, "/run/mellanox/drivers", propagation="HostToContainer"), when=_rdma),
    Fact("driver", "init containers", "with GPUDirect RDMA the nvidia-peermem side-car loads"
         " the peer-memory module", _src(f"{GOLDEN}/driver-rdma.yaml"),
         lambda r: None if r.container("nvidia-peermem-ctr") else "no nvidia-peermem-ctr",
         when=_rdma),
    Fact("driver", "RBAC", "on OpenShift the ServiceAccount may use the privileged SCC (the"
         " operator's Role per operand, resourceNames: [privileged]); without it SCC admission"
         " refuses the pod", _src("assets/state-driver/0200_role.yaml"),
         c.granted("Role", "gpustack-scc-privileged", "security.openshift.io",
                   "securitycontextconstraints", "use"), when=_openshift),
    Fact("driver", "side-cars", "on OpenShift the modules are built in the"
         " openshift-driver-toolkit-ctr side-car (the Driver Toolkit image of the nodes' release,"
         " privileged, sharing /mnt/shared-nvidia-driver-toolkit with the driver container)",
         _src(f"{GOLDEN}/driver-openshift-drivertoolkit.yaml"),
         c.host_path("openshift-driver-toolkit-ctr", "/etc/os-release"), when=_dtk),
    Fact("driver", "node selection", "with the Driver Toolkit the pod runs only on nodes of its"
         " RHCOS build (NFD's system-os_release.OSTREE_VERSION)",
         _src(f"{GOLDEN}/driver-openshift-drivertoolkit.yaml"),
         c.selects_on("feature.node.kubernetes.io/system-os_release.OSTREE_VERSION"), when=_dtk),
    # --- driver manager -------------------------------------------------------------------
    Fact("driver-manager", "init containers", "k8s-driver-manager runs first in the driver pod"
         " (transformDriverManagerInitContainer)", _src(f"{GOLDEN}/driver-full-spec.yaml"),
         c.init_container(MGR), when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "privileges", "privileged: it unloads kernel modules",
         _src(f"{GOLDEN}/driver-full-spec.yaml"), c.privileged(MGR),
         when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "host paths", "/run/nvidia Bidirectional, the host root read-only"
         " at /host (HostToContainer) and /sys", _src(f"{GOLDEN}/driver-full-spec.yaml"),
         c.host_path(MGR, "/run/nvidia", propagation="Bidirectional"),
         when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "host paths", "the host root at /host, HostToContainer",
         _src(f"{GOLDEN}/driver-full-spec.yaml"),
         c.host_path(MGR, "/", at="/host", propagation="HostToContainer"),
         when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "env", "DRIVER_CONFIG_DIGEST on the manager: v0.10+ restart a"
         " matching driver in place", _src(f"{GOLDEN}/driver-full-spec.yaml"),
         c.env(MGR, "DRIVER_CONFIG_DIGEST"), when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "env", "NODE_NAME and OPERATOR_NAMESPACE (the namespace of the"
         " operands it pauses)", _src(f"{GOLDEN}/driver-full-spec.yaml"),
         c.env(MGR, "OPERATOR_NAMESPACE"), when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "env", "NVIDIA_VISIBLE_DEVICES=void: the manager needs no GPU",
         _src(f"{GOLDEN}/driver-full-spec.yaml"), c.env(MGR, "NVIDIA_VISIBLE_DEVICES", "void"),
         when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "RBAC", "evicts GPU pods (pods/eviction create)",
         _src("assets/state-driver/0210_clusterrole.yaml"),
         c.granted("ClusterRole", "gpustack-nvidia-driver-manager", "", "pods/eviction", "create"),
         when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "RBAC", "reads the ResourceClaims of pods (DRA GPU pods count as GPU"
         " pods from v0.12.0)", _src("assets/state-driver/0210_clusterrole.yaml"),
         c.granted("ClusterRole", "gpustack-nvidia-driver-manager", "resource.k8s.io",
                   "resourceclaims", "get"),
         when=lambda p: p.driver.upgrade.driver_manager
         and tag_at_least(p.driver.upgrade.version, "v0.12.0")),
    # --- container toolkit ----------------------------------------------------------------
    Fact(TOOLKIT, "privileges", "privileged: it writes the runtime's config and"
         " signals the runtime", TOOLKIT_DS, c.privileged(TK)),
    Fact(TOOLKIT, "host namespaces", "hostPID: it restarts or signals the"
         " container runtime on the host", TOOLKIT_DS, c.pod_field("hostPID", True)),
    Fact(TOOLKIT, "host paths", "the install dir (ROOT) on the host, where the"
         " runtime finds nvidia-container-runtime", TOOLKIT_DS, c.host_path(TK, _install_dir)),
    Fact(TOOLKIT, "env", "ROOT names that install dir", TOOLKIT_DS,
         c.env(TK, "ROOT", _install_dir)),
    Fact(TOOLKIT, "host paths", "the driver root, HostToContainer, at /driver-root",
         TOOLKIT_DS, c.host_path(TK, _driver_root, at="/driver-root",
                                 propagation="HostToContainer")),
    Fact(TOOLKIT, "host paths", "the host root at /host, HostToContainer", TOOLKIT_DS,
         c.host_path(TK, "/", at="/host", propagation="HostToContainer")),
    Fact(TOOLKIT, "host paths", "/var/run/cdi: the CDI specs it generates", TOOLKIT_DS,
         c.host_path(TK, "/var/run/cdi"), when=_cdi),
    Fact(TOOLKIT, "env", "NVIDIA_VISIBLE_DEVICES=void", TOOLKIT_DS,
         c.env(TK, "NVIDIA_VISIBLE_DEVICES", "void")),
    Fact(TOOLKIT, "env", "TOOLKIT_PID_FILE under /run/nvidia/toolkit", TOOLKIT_DS,
         c.env(TK, "TOOLKIT_PID_FILE", "/run/nvidia/toolkit/toolkit.pid")),
    Fact(TOOLKIT, "env", "CDI_ENABLED with CDI on (transformToolkitCtrForCDI)",
         _src(CONTROLS), c.env(TK, "CDI_ENABLED", "true"), when=_cdi),
    Fact(TOOLKIT, "env", "the CDI default kind management.nvidia.com/gpu",
         TOOLKIT_DS, c.env(TK, "NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND",
                           "management.nvidia.com/gpu"), when=_cdi),
    Fact(TOOLKIT, "host paths", "/dev/char, where the /dev/char symlinks to the"
         " NVIDIA device nodes are made (systemd cgroup device rules)",
         _src("assets/state-container-toolkit/0500_daemonset.yaml (driver-validation)"),
         lambda r: None if "/dev/char" in r.host_paths().values() else "no /dev/char mount"),
    # --- device plugin --------------------------------------------------------------------
    Fact(DEVICE_PLUGIN, "runtime class", "runs with the GPU runtime class (setRuntimeClassName"
         " in TransformDevicePlugin): NVML comes from the runtime", _src(CONTROLS),
         c.runtime_class(_gpu_class), when=_plugin_class),
    Fact(DEVICE_PLUGIN, "host paths", "the kubelet's device-plugins directory (its socket and"
         " registration)", PLUGIN_DS,
         c.host_path(DP, _kubelet_dir("device-plugins"), at="/var/lib/kubelet/device-plugins")),
    Fact(DEVICE_PLUGIN, "env", "NVIDIA_VISIBLE_DEVICES=all: the runtime gives it every GPU",
         PLUGIN_DS, c.env(DP, "NVIDIA_VISIBLE_DEVICES", "all"), when=_plugin_class),
    Fact(DEVICE_PLUGIN, "init containers", "toolkit-validation: it starts after the toolkit"
         " configured the runtime", PLUGIN_DS, c.init_container("toolkit-validation"),
         when=_toolkit_or_driver),
    Fact(DEVICE_PLUGIN, "host paths", "the driver root HostToContainer at /driver-root (CDI"
         " spec generation and driver library lookup)", PLUGIN_DS,
         c.host_path(DP, _driver_root, at="/driver-root", propagation="HostToContainer"),
         when=lambda p: _nvidia_plugin(p) and _cdi(p)),
    # --- GPU feature discovery ------------------------------------------------------------
    Fact(GFD_OPERAND, "runtime class", "runs with the GPU runtime class"
         " (TransformGPUDiscoveryPlugin)", _src(CONTROLS), c.runtime_class(_gpu_class),
         when=_has_gpu_class),
    Fact(GFD_OPERAND, "host paths", "NFD's features.d, where its labels go"
         " (file output)", GFD_DS, c.host_path(GFD, FEATURES_D)),
    Fact(GFD_OPERAND, "host paths", "/sys, read-only", GFD_DS,
         c.host_path(GFD, "/sys")),
    Fact(GFD_OPERAND, "env", "GFD_SLEEP_INTERVAL and GFD_FAIL_ON_INIT_ERROR",
         GFD_DS, c.env(GFD, "GFD_FAIL_ON_INIT_ERROR", "true")),
    Fact(GFD_OPERAND, "init containers", "toolkit-validation", GFD_DS,
         c.init_container("toolkit-validation"), when=_toolkit_or_driver),
    Fact(GFD_OPERAND, "privileges", "reads MIG devices with a MIG strategy"
         " (NVIDIA: privileged; gpustack: CAP_SYS_ADMIN, as NVIDIA's Helm chart)", GFD_DS,
         c.capability(GFD, "SYS_ADMIN"), when=_mig_strategy),
    # --- Node Feature Discovery worker ----------------------------------------------------
    Fact(NFD_OPERAND, "node selection", "the worker runs on every node: a node is"
         " known to have a GPU only after it ran there", NFD_WORKER, c.no_node_selection()),
    Fact(NFD_OPERAND, "host paths", "the host's /sys, /boot, /etc/os-release,"
         " /usr/lib and /lib (read-only feature sources)", NFD_WORKER,
         c.host_path(NFD, "/sys", at="/host-sys")),
    Fact(NFD_OPERAND, "host paths", "features.d, read-only (GFD's labels)",
         NFD_WORKER, c.host_path(NFD, FEATURES_D)),
    Fact(NFD_OPERAND, "env", "POD_NAME and POD_UID: the NodeFeature's owner"
         " references (default pod and ds from v0.19.0)", NFD_WORKER, c.env(NFD, "POD_UID")),
    Fact(NFD_OPERAND, "probes", "liveness on /healthz", NFD_WORKER,
         c.probe(NFD, "livenessProbe", path="/healthz")),
    Fact(NFD_OPERAND, "RBAC", "the worker creates and updates its NodeFeature",
         _src("deployments/gpu-operator/charts/node-feature-discovery/templates/role.yaml"),
         c.granted("Role", "gpustack-nfd-worker", "nfd.k8s-sigs.io", "nodefeatures", "update")),
    # --- MIG manager ----------------------------------------------------------------------
    Fact(MIG_MANAGER, "runtime class", "runs with the GPU runtime class (setRuntimeClassName"
         " in TransformMIGManager): its distroless image gets NVML and nvidia-smi from the"
         " runtime (mig-parted v0.15.0 deployments/container/Dockerfile)", _src(CONTROLS),
         c.runtime_class(_gpu_class), when=_has_gpu_class),
    Fact(MIG_MANAGER, "privileges", "privileged: repartitions GPUs", MIG_DS, c.privileged(MIG)),
    Fact(MIG_MANAGER, "host namespaces", "hostPID and hostIPC", MIG_DS,
         c.pod_field("hostIPC", True)),
    Fact(MIG_MANAGER, "host paths", "/sys, the host root HostToContainer at /host, the driver"
         " root HostToContainer at /driver-root", MIG_DS,
         c.host_path(MIG, _driver_root, at="/driver-root", propagation="HostToContainer")),
    Fact(MIG_MANAGER, "host paths", "/var/run/cdi: it regenerates CDI specs after a change",
         MIG_DS, c.host_path(MIG, "/var/run/cdi")),
    Fact(MIG_MANAGER, "env", "CDI_ENABLED and NVIDIA_CDI_HOOK_PATH with CDI and the toolkit",
         _src(CONTROLS), c.env(MIG, "NVIDIA_CDI_HOOK_PATH"), when=_cdi),
    Fact(MIG_MANAGER, "env", "DEFAULT_GPU_CLIENTS_NAMESPACE: where it waits for the paused"
         " clients", MIG_DS, c.env(MIG, "DEFAULT_GPU_CLIENTS_NAMESPACE")),
    Fact(MIG_MANAGER, "env", "GPU_CLIENTS_FILE names the host GPU clients file, a ConfigMap"
         " mounted at /gpu-clients listing the systemd services of NVSM, nv_peer_mem, DCGM and"
         " the DCGM exporter (default-gpu-clients; the volume's ConfigMap set by"
         " TransformMIGManager)",
         _src("assets/state-mig-manager/0410_configmap.yaml, 0600_daemonset.yaml"),
         _gpu_clients_file),
    Fact(MIG_MANAGER, "entrypoint", "WITH_SHUTDOWN_HOST_GPU_CLIENTS is driver-ready's"
         " IS_HOST_DRIVER: with a host driver a MIG mode change stops those services (and"
         " kubelet.service) over the host's D-Bus and starts them again after (mig-parted v0.15.0"
         " pkg/mig/reconfigure); without it the change fails while DCGM holds the GPU",
         _src("assets/state-mig-manager/0420_configmap.yaml"), _shutdown_follows_host_driver),
    Fact(MIG_MANAGER, "host paths", "the host root writable at /host: with host GPU clients it"
         " copies nvidia-mig-parted and its config under /host/usr/local/nvidia/mig-manager,"
         " runs it chrooted there and dials /host/run/dbus/system_bus_socket (mig-parted v0.15.0"
         " cmd/nvidia-mig-manager/main.go copyMigPartedToHost, pkg/mig/reconfigure New)",
         MIG_DS, _host_root_writable),
    Fact(MIG_MANAGER, "init containers", "toolkit-validation", MIG_DS,
         c.init_container("toolkit-validation"), when=_toolkit_or_driver),
    Fact(MIG_MANAGER, "RBAC", "nodes patch (its labels), pods list in all namespaces"
         " (v0.15.0 waits for gpu.deploy.client DaemonSet pods)",
         _src("assets/state-mig-manager/0210_clusterrole.yaml"),
         c.granted("ClusterRole", "gpustack-nvidia-mig-manager-pods", "", "pods", "list"),
         when=lambda p: tag_at_least(p.mig_manager.version, "v0.15.0")),
    # --- DCGM exporter --------------------------------------------------------------------
    Fact(DCGM_EXPORTER, "runtime class", "runs with the GPU runtime class", _src(CONTROLS),
         c.runtime_class(_gpu_class), when=_has_gpu_class),
    Fact(DCGM_EXPORTER, "host paths", "the kubelet's pod-resources socket directory,"
         " read-only (GPU to pod mapping)", DCGM_DS,
         c.host_path(DCGM, _kubelet_dir("pod-resources"))),
    Fact(DCGM_EXPORTER, "env", "DCGM_EXPORTER_LISTEN :9400 and DCGM_EXPORTER_KUBERNETES",
         DCGM_DS, c.env(DCGM, "DCGM_EXPORTER_KUBERNETES", "true")),
    Fact(DCGM_EXPORTER, "probes", "liveness and readiness on /health (new in v26.x)", DCGM_DS,
         c.probe(DCGM, "readinessProbe", path="/health")),
    Fact(DCGM_EXPORTER, "privileges", "DCGM's profiling metrics need CAP_SYS_ADMIN (NVIDIA:"
         " privileged)", DCGM_DS, c.capability(DCGM, "SYS_ADMIN")),
    Fact(DCGM_EXPORTER, "RBAC", "no API token without pod-label metadata", DCGM_DS,
         c.pod_field("automountServiceAccountToken", False)),
    # --- DRA driver: kubelet plugin ---------------------------------------------------------
    # the health ports are NVIDIA's defaults (internal/state/dra_driver.go
    # defaultGPUsHealthcheckPort, defaultComputeDomainsHealthcheckPort), written out here rather
    # than read from the construct, so that the table holds the construct to them
    *_dra_plugin_facts("gpus", "gpu-kubelet-plugin", 51516, ":8080", 30, _dra_gpus),
    *_dra_plugin_facts("compute-domains", "compute-domain-kubelet-plugin", 51515, ":8081", 10,
                       _dra_domains),
    Fact(DRA_DRIVER, "env", "compute-domains: GPU_CLIQUE_LABEL_ENABLED=true (it labels its"
         " node with the NVLink clique)", DRA_GOLDEN,
         c.env("compute-domains", "GPU_CLIQUE_LABEL_ENABLED", "true"), when=_dra_domains),
    Fact(DRA_DRIVER, "feature gates", "none by default: the chart's draDriver.featureGates is"
         " empty, so no FEATURE_GATES on the plugin containers and no MPS deployments Role"
         " (the goldens' MPSSupport=true comes from their test's sample GPUCluster)",
         DRA_DEFAULTS, _no_feature_gates),
    Fact(DRA_DRIVER, "labels", f"the plugin pods carry app: {dra.KUBELET_PLUGIN}: the driver"
         " manager waits for pods with that label to stop before it unloads the driver",
         f"{DRA_GOLDEN}; k8s-driver-manager v0.12.0 cmd/driver-manager/main.go"
         " evictKubeletPlugin", c.pod_label("app", dra.KUBELET_PLUGIN)),
    Fact(DRA_DRIVER, "node selection", f"placed by the deploy label {DRA_DEPLOY_LABEL}, which"
         " the driver manager pauses", DRA_GOLDEN, c.selects_on(DRA_DEPLOY_LABEL)),
    Fact(DRA_DRIVER, "node selection", "tolerates the nvidia.com/gpu taint", DRA_GOLDEN,
         c.tolerates("nvidia.com/gpu")),
    Fact(DRA_DRIVER, "priority", "priorityClassName system-node-critical", DRA_GOLDEN,
         c.pod_field("priorityClassName", "system-node-critical")),
    Fact(DRA_DRIVER, "update strategy", "RollingUpdate with maxUnavailable 100%: every node's"
         " plugin is replaced at once", DRA_GOLDEN,
         c.workload_field(("spec", "updateStrategy", "rollingUpdate", "maxUnavailable"), "100%")),
    Fact(DRA_DRIVER, "RBAC", f"runs as ServiceAccount {dra.KUBELET_PLUGIN_SA}, the name the"
         " ResourceSlice admission policy matches", DRA_GOLDEN,
         c.pod_field("serviceAccountName", dra.KUBELET_PLUGIN_SA)),
    Fact(DRA_DRIVER, "RBAC", "reads the ResourceClaims it prepares (resourceclaims get)",
         DRA_GOLDEN, c.granted("ClusterRole", dra.KUBELET_PLUGIN_CLUSTER_ROLE,
                               "resource.k8s.io", "resourceclaims", "get")),
    Fact(DRA_DRIVER, "RBAC", "publishes its node's ResourceSlices (resourceslices create,"
         " update, delete, watch)", DRA_GOLDEN,
         c.granted("ClusterRole", dra.KUBELET_PLUGIN_CLUSTER_ROLE, "resource.k8s.io",
                   "resourceslices", "create")),
    Fact(DRA_DRIVER, "RBAC", "with ComputeDomains: watches ComputeDomains", DRA_GOLDEN,
         c.granted("ClusterRole", dra.KUBELET_PLUGIN_CD_CLUSTER_ROLE, CD_GROUP,
                   "computedomains", "watch"), when=_dra_domains),
    Fact(DRA_DRIVER, "RBAC", "with ComputeDomains: labels its node (nodes update, patch)",
         DRA_GOLDEN, c.granted("ClusterRole", dra.KUBELET_PLUGIN_CD_CLUSTER_ROLE, "", "nodes",
                               "patch"), when=_dra_domains),
    Fact(DRA_DRIVER, "RBAC", "with ComputeDomains: reads the cliques in its namespace (a Role,"
         " computedomaincliques get)", DRA_GOLDEN,
         c.granted("Role", dra.KUBELET_PLUGIN_ROLE, CD_GROUP, "computedomaincliques", "get"),
         when=_dra_domains),
    Fact(DRA_DRIVER, "admission", "a ValidatingAdmissionPolicy lets the plugin's"
         " ServiceAccount write only ResourceSlices of the node its token names"
         " (authentication.kubernetes.io/node-name)", DRA_GOLDEN, _slice_policy),
    # --- DRA driver: ComputeDomain controller -----------------------------------------------
    Fact(DRA_CONTROLLER, "containers", "one compute-domain container running"
         " compute-domain-controller", DRA_GOLDEN,
         c.command("compute-domain", "compute-domain-controller")),
    Fact(DRA_CONTROLLER, "replicas", "one replica", DRA_GOLDEN,
         c.workload_field(("spec", "replicas"), 1)),
    Fact(DRA_CONTROLLER, "env", "LEADER_ELECTION_ENABLED=false: one replica needs no lease",
         DRA_GOLDEN, c.env("compute-domain", "LEADER_ELECTION_ENABLED", "false")),
    Fact(DRA_CONTROLLER, "env", "IMAGE_NAME is the driver image: the IMEX daemon DaemonSets it"
         " creates run it", DRA_GOLDEN, _controller_image),
    Fact(DRA_CONTROLLER, "env", "NVIDIA_VISIBLE_DEVICES=void", DRA_GOLDEN,
         c.env("compute-domain", "NVIDIA_VISIBLE_DEVICES", "void")),
    Fact(DRA_CONTROLLER, "env", "POD_NAME and NAMESPACE from the downward API (the namespace"
         " it creates the daemons in)", DRA_GOLDEN, c.env("compute-domain", "NAMESPACE")),
    Fact(DRA_CONTROLLER, "env", "LOG_VERBOSITY_CD_DAEMON: the daemons' log level", DRA_GOLDEN,
         c.env("compute-domain", "LOG_VERBOSITY_CD_DAEMON", "4")),
    Fact(DRA_CONTROLLER, "env", "metrics at HTTP_ENDPOINT :8080", DRA_GOLDEN,
         c.env("compute-domain", "HTTP_ENDPOINT", ":8080")),
    Fact(DRA_CONTROLLER, "node selection", "prefers control-plane nodes and tolerates their"
         " taint and CriticalAddonsOnly", DRA_GOLDEN, c.prefers_node(CONTROL_PLANE)),
    Fact(DRA_CONTROLLER, "node selection", "tolerates the control-plane taint", DRA_GOLDEN,
         c.tolerates(CONTROL_PLANE)),
    Fact(DRA_CONTROLLER, "priority", "priorityClassName system-node-critical", DRA_GOLDEN,
         c.pod_field("priorityClassName", "system-node-critical")),
    Fact(DRA_CONTROLLER, "RBAC", f"runs as ServiceAccount {dra.CONTROLLER}", DRA_GOLDEN,
         c.pod_field("serviceAccountName", dra.CONTROLLER)),
    Fact(DRA_CONTROLLER, "RBAC", "reconciles ComputeDomains (update, status update)",
         DRA_GOLDEN, c.granted("ClusterRole", dra.CONTROLLER_CLUSTER_ROLE, CD_GROUP,
                               "computedomains/status", "update")),
    Fact(DRA_CONTROLLER, "RBAC", "creates each domain's ResourceClaimTemplates", DRA_GOLDEN,
         c.granted("ClusterRole", dra.CONTROLLER_CLUSTER_ROLE, "resource.k8s.io",
                   "resourceclaimtemplates", "create")),
    Fact(DRA_CONTROLLER, "RBAC", "removes a domain's labels from nodes (nodes update)",
         DRA_GOLDEN, c.granted("ClusterRole", dra.CONTROLLER_CLUSTER_ROLE, "", "nodes",
                               "update")),
    Fact(DRA_CONTROLLER, "RBAC", "creates one IMEX daemon DaemonSet per domain in its"
         " namespace (a Role, daemonsets create)", DRA_GOLDEN,
         c.granted("Role", dra.CONTROLLER_ROLE, "apps", "daemonsets", "create")),
    Fact(DRA_CONTROLLER, "RBAC", "updates the cliques of its domains (a Role)", DRA_GOLDEN,
         c.granted("Role", dra.CONTROLLER_ROLE, CD_GROUP, "computedomaincliques", "update")),
    Fact(DRA_CONTROLLER, "RBAC", f"the IMEX daemons' ServiceAccount {dra.DAEMON_SA} (the name"
         " is fixed in the image's daemon pod template)", DRA_GOLDEN,
         c.has_object("ServiceAccount", dra.DAEMON_SA)),
    Fact(DRA_CONTROLLER, "RBAC", "the IMEX daemons create and update their cliques", DRA_GOLDEN,
         c.granted("ClusterRole", dra.DAEMON_CLUSTER_ROLE, CD_GROUP, "computedomaincliques",
                   "create")),
)  # fmt: skip


DIVERGENCES: Final[tuple[Divergence, ...]] = (
    Divergence(
        TOOLKIT, "init containers",
        "a privileged driver-validation init container (nvidia-validator) that runs nvidia-smi"
        " and makes the /dev/char links",
        "an unprivileged init container that waits for the driver's driver-ready file; the"
        " toolkit container makes the /dev/char links",
        "no operator and no validator image: the readiness files gate the components, and"
        " the link-making is done by the privileged container that already exists",
        TOOLKIT_DS, c.not_privileged("driver-validation"), when=_driver_enabled,
    ),
    Divergence(
        TOOLKIT, "env",
        "NRI_NAMESPACE for the toolkit's NRI plugin (v26.x)",
        "not set", "gpustack does not enable the NRI plugin; devices come from the runtime"
        " handlers and CDI", TOOLKIT_DS,
        lambda r: "NRI_NAMESPACE set" if c.env(TK, "NRI_NAMESPACE")(r) is None else None,
    ),
    Divergence(
        DEVICE_PLUGIN, "privileges",
        "privileged plugin container",
        "not privileged, all capabilities dropped; CAP_SYS_ADMIN added with a MIG strategy or"
        " the volume-mounts device list strategy; privileged only with passDeviceSpecs (the"
        " rules of NVIDIA's Helm chart, k8s-device-plugin v0.20.0"
        " deployments/helm/nvidia-device-plugin/templates/_helpers.tpl requiresCapSysAdmin)",
        "the plugin talks to the kubelet's socket and to NVML through the runtime; it needs"
        " SYS_ADMIN only to read the MIG capability files under /proc/driver/nvidia, and all"
        " devices only to name their nodes in DeviceSpecs", PLUGIN_DS, _plugin_privileges,
    ),
    Divergence(
        DEVICE_PLUGIN, "init containers",
        "a config-manager init container and side-car that switch configs by the node label"
        " nvidia.com/device-plugin.config (API access)",
        "one DaemonSet per node config, placed by the same label",
        "no API access for a GPU daemon, and each config is reviewable in dist/",
        PLUGIN_DS, lambda r: "config-manager present" if r.container("config-manager") else None,
    ),
    Divergence(
        DEVICE_PLUGIN, "env", "NVIDIA_DRIVER_CAPABILITIES=all",
        "compute,utility", "the plugin needs NVML (utility); compute lets its checks run CUDA;"
        " nothing else of the driver is needed", PLUGIN_DS,
        c.env(DP, "NVIDIA_DRIVER_CAPABILITIES", "compute,utility"), when=_plugin_class,
    ),
    Divergence(
        GFD_OPERAND, "env",
        "NodeFeature API output (the v0.19+ default) with POD_NAME and pods get",
        "USE_NODE_FEATURE_API=false: labels go to NFD's features.d file",
        "no API token for a GPU daemon; NFD's worker publishes the file", GFD_DS,
        c.env(GFD, "USE_NODE_FEATURE_API", "false"),
    ),
    Divergence(
        GFD_OPERAND, "privileges", "privileged",
        "unprivileged, CAP_SYS_ADMIN only with a MIG strategy (as NVIDIA's Helm chart)",
        "least privilege: NVML comes from the runtime", GFD_DS,
        c.not_privileged(GFD),
    ),
    Divergence(
        MIG_MANAGER, "env",
        "DEFAULT_CONFIG_FILE and dynamic config discovery (v0.14+)",
        "CONFIG_FILE: the mig-parted config gpustack generates from the profile",
        "the layouts are part of the profile and validated before merge; discovery would"
        " write per-node ConfigMaps (configmaps create/update)", MIG_DS,
        c.env(MIG, "CONFIG_FILE", "/mig-parted-config/config.yaml"),
    ),
    Divergence(
        MIG_MANAGER, "RBAC", "nodes update, pods delete and configmaps in its namespace",
        "nodes patch, pods list only",
        "the code paths gpustack's configuration reaches only patch nodes and list pods; the"
        " validator pods it would delete do not exist", MIG_DS,
        c.not_granted("ClusterRole", "gpustack-nvidia-mig-manager-pods", "", "nodes", "update"),
    ),
    Divergence(
        DCGM_EXPORTER, "privileges", "privileged",
        "CAP_SYS_ADMIN, run as root (dcgm-exporter's own manifests)",
        "least privilege: DCGM needs SYS_ADMIN for profiling metrics only", DCGM_DS,
        c.not_privileged(DCGM),
    ),
    Divergence(
        "driver", "RBAC", "on OpenShift, a Role per operand granting use of the privileged SCC",
        "one Role gpustack-scc-privileged bound to the group of the stack namespace's"
        " ServiceAccounts", "every gpustack pod in that namespace is a host daemon, and one"
        " binding cannot miss an operand added later", _src("assets/state-driver/0200_role.yaml"),
        lambda r: None if any(
            o.get("kind") == "RoleBinding" and o["metadata"]["name"] == "gpustack-scc-privileged"
            and o["subjects"][0]["kind"] == "Group" for o in r.objects
        ) else "no group binding of gpustack-scc-privileged", when=_openshift,
    ),
    Divergence(
        "driver-manager", "init containers",
        "no init container for labels: the operator's node labeling controller sets the"
        " nvidia.com/gpu.deploy.* labels (controllers/nodelabeling_controller.go labelGPUNodes)",
        "with cluster.deployLabels: optional, a deploy-labels init container seeds the missing"
        " labels with kubectl from driver.upgrade.kubectlImage, by default"
        " nvcr.io/nvidia/gpu-operator:v25.10.1",
        "no operator runs to set the labels, and no image NVIDIA ships at v26.7.0 has kubectl:"
        " the operator image copies only its own binaries (docker/Dockerfile), the driver"
        " manager (v0.12.0) and MIG manager (v0.15.0) images neither; v25.10.1 is the last"
        " operator image with kubectl (its docker/Dockerfile installs it)",
        _src("controllers/nodelabeling_controller.go, docker/Dockerfile"),
        _kubectl_image, when=_seeds_labels,
    ),
    Divergence(
        "driver", "node selection", "nodeSelector nvidia.com/gpu.deploy.driver=true",
        "with cluster.deployLabels: optional, a node affinity that only excludes false and"
        " paused values", "a fresh cluster needs no hand-applied label; the pause protocol"
        " of the driver and MIG managers still works", DRIVER_DS,
        c.selects_on("nvidia.com/gpu.deploy.driver"), when=_driver_enabled,
    ),
    Divergence(
        DRA_DRIVER, "init containers",
        "a privileged driver-validation init container (nvidia-validator) writes a driver-ready"
        " env file (NVIDIA_DRIVER_ROOT, DRIVER_ROOT_CTR_PATH) that each plugin container"
        " sources in a bash wrapper before it runs the plugin",
        "the plugin waits, unprivileged, for the readiness file of the stage it needs and runs"
        " its binary directly with NVIDIA_DRIVER_ROOT set as the driver's Helm chart sets it",
        "no operator and no validator image: gpustack's operands already leave readiness files,"
        " and the driver root is known from the profile", DRA_GOLDEN, _plugin_containers_direct,
    ),
    Divergence(
        DRA_DRIVER, "env",
        "the bash wrapper can mask /proc/driver/nvidia/params (MASK_NVIDIA_DRIVER_PARAMS, for"
        " nested kind clusters)", "not set: the binary runs directly",
        "the masking only keeps the plugin from re-creating device nodes inside nvkind; the"
        " nodes gpustack targets are real", DRA_GOLDEN,
        lambda r: "MASK_NVIDIA_DRIVER_PARAMS set" if any(
            c.env(ctr, "MASK_NVIDIA_DRIVER_PARAMS")(r) is None
            for ctr in ("gpus", "compute-domains")
        ) else None,
    ),
    Divergence(
        DRA_DRIVER, "host paths",
        "the host root, read-only at /host (HostToContainer; HOST_ROOT=/host on gpus)",
        "not mounted",
        "the plugin reads the host root only with the PassthroughSupport and"
        " FabricManagerPartitioning feature gates (cmd/gpu-kubelet-plugin/main.go"
        " validateCLIFlags, device_state.go), which gpustack does not turn on; the operator's"
        " validator needed it", DRA_GOLDEN, c.no_host_path("/"),
    ),
    Divergence(
        DRA_DRIVER, "RBAC",
        "the driver-validation Role (daemonsets list, for the validator)", "none",
        "there is no validator", DRA_GOLDEN, _no_role_named("driver-validation"),
    ),
    Divergence(
        DRA_DRIVER, "RBAC",
        "the plugin's ClusterRole also grants claims and slices get/list/watch, nodes"
        " list/watch/update/patch and pods get/list/watch",
        "only the calls the plugin's code makes: resourceclaims get; resourceslices"
        " list/watch/create/update/delete; nodes get (and, with ComputeDomains, nodes"
        " update/patch and computedomains list/watch in a ClusterRole of their own)",
        "least privilege for a privileged node daemon: read from the driver's source (the"
        " kubeletplugin and resourceslice controller it vendors, computedomain.go)",
        _dra_src("vendor/k8s.io/dynamic-resource-allocation, cmd/compute-domain-kubelet-plugin"),
        c.not_granted("ClusterRole", dra.KUBELET_PLUGIN_CLUSTER_ROLE, "", "nodes", "update"),
    ),
    Divergence(
        DRA_DRIVER, "env",
        "IMAGE_NAME on the gpus container, always",
        "not set on the plugin (the ComputeDomain controller has it)",
        "the GPU plugin reads IMAGE_NAME only for the MPS control daemons it starts under the"
        " MPSSupport feature gate (cmd/gpu-kubelet-plugin/sharing.go MpsImageName), which"
        " gpustack does not turn on", DRA_DEFAULTS,
        lambda r: "IMAGE_NAME set on gpus" if c.env("gpus", "IMAGE_NAME")(r) is None else None,
        when=_dra_gpus,
    ),
    Divergence(
        DRA_DRIVER, "node selection", f"nodeSelector {DRA_DEPLOY_LABEL}=true and NFD's GPU"
        " labels", "nvidia.com/gpu.present, dra.nodeSelector and, with cluster.deployLabels:"
        " optional, a node affinity that only excludes false and paused values",
        "a fresh cluster needs no hand-applied label; the driver manager's pause still works",
        DRA_GOLDEN, c.selects_on(DRA_DEPLOY_LABEL),
    ),
    Divergence(
        DRA_DRIVER, "host paths", "the driver root mounted read-write",
        "read-only", "the plugin only finds libraries and binaries under the driver root"
        " (root.go findFile) and names them in CDI specs; it writes nothing there",
        _dra_src("cmd/gpu-kubelet-plugin/root.go, cmd/compute-domain-kubelet-plugin/root.go"),
        lambda r: None if all(
            m.get("readOnly") is True
            for ctr in ("gpus", "compute-domains")
            for m in (r.container(ctr) or {}).get("volumeMounts", [])
            if m["mountPath"] == DRIVER_ROOT_CTR_PATH
        ) else "the driver root is writable",
    ),
    Divergence(
        DRA_DRIVER, "admission",
        "the ResourceSlice policy also admits the plugin's slices for all nodes or a node"
        " selector", "only slices of the node the plugin's token names",
        "the v0.5.0 plugins publish node-local slices only; a compromised node's plugin cannot"
        " publish devices for other nodes", DRA_GOLDEN, _only_node_local_slices,
    ),
    Divergence(
        DRA_CONTROLLER, "privileges", "no securityContext (the runtime's defaults)",
        "not privileged, all capabilities dropped, read-only root filesystem",
        "the controller only calls the API server; least privilege", DRA_GOLDEN,
        _controller_hardened,
    ),
    Divergence(
        DRA_CONTROLLER, "RBAC", "leases get/create/update for leader election",
        "none", "one replica with LEADER_ELECTION_ENABLED=false, as NVIDIA renders it, takes no"
        " lease", DRA_GOLDEN,
        c.not_granted("ClusterRole", dra.CONTROLLER_CLUSTER_ROLE, "coordination.k8s.io",
                      "leases", "get"),
    ),
    Divergence(
        DRA_CONTROLLER, "node selection", "also tolerates node-role.kubernetes.io/master and"
        " spreads replicas by pod anti-affinity", "neither",
        "one replica needs no spreading; kubeadm stopped applying the master taint in 1.25,"
        " and gpustack supports 1.29 on",
        DRA_GOLDEN, lambda r: "pod anti-affinity set" if (r.pod.get("affinity") or {}).get(
            "podAntiAffinity") else "tolerates the master taint" if c.tolerates(
            "node-role.kubernetes.io/master")(r) is None else None,
    ),
)  # fmt: skip
