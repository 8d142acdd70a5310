"""A data table, and reads as one: each row is a property gpustack renders differently
from NVIDIA on purpose, with the reason, the file NVIDIA's side was read from, and the check of
what gpustack does instead. The site's section "Where gpustack differs from the GPU Operator,
and why" is rendered from it (:mod:`gpustack.conformance.readme`); the checks too long for a
row come first."""

from __future__ import annotations

from typing import Final

import yaml

from gpustack.conformance import checks as c
from gpustack.conformance.row import (
    DCGM,
    DCGM_DS,
    DCGM_EXPORTER,
    DEVICE_PLUGIN,
    DP,
    DRA_CONTROLLER,
    DRA_DEFAULTS,
    DRA_DEPLOY_LABEL,
    DRA_DRIVER,
    DRA_GOLDEN,
    DRIVER_DS,
    GFD,
    GFD_DS,
    GFD_OPERAND,
    MIG,
    MIG_DS,
    MIG_MANAGER,
    PLUGIN_DS,
    TK,
    TOOLKIT,
    TOOLKIT_DS,
    Divergence,
    dra_gpus,
    dra_src,
    driver_enabled,
    driver_root,
    no_role_named,
    openshift,
    plugin_class,
    src,
)
from gpustack.constructs import dra_driver as dra
from gpustack.constructs.driver_manager import LABELS_CONTAINER
from gpustack.constructs.plugin_config import CONFIG_DIR as PLUGIN_CONFIG_DIR
from gpustack.constructs.plugin_config import CONFIG_KEY as PLUGIN_CONFIG_KEY
from gpustack.constructs.scripts import DRIVER_ROOT_CTR_PATH
from gpustack.profile.model import Profile


def _controller_hardened(r: c.Rendered) -> str | None:
    sc = (r.container("compute-domain") or {}).get("securityContext") or {}
    drops = (sc.get("capabilities") or {}).get("drop") or []
    if sc.get("privileged") or "ALL" not in drops or sc.get("readOnlyRootFilesystem") is not True:
        return "compute-domain: not unprivileged with ALL dropped and a read-only root"
    return None


def _plugin_containers_direct(r: c.Rendered) -> str | None:
    """No validator: the plugin binaries run directly, told the driver root by env."""
    if r.container("driver-validation"):
        return "driver-validation present"
    for ctr, binary in (("gpus", "gpu-kubelet-plugin"),
                        ("compute-domains", "compute-domain-kubelet-plugin")):  # fmt: skip
        if r.container(ctr) is None:
            continue
        for check in (c.command(ctr, binary), c.env(ctr, "NVIDIA_DRIVER_ROOT", driver_root)):
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


DIVERGENCES: Final[tuple[Divergence, ...]] = (
    Divergence(
        TOOLKIT, "init containers",
        "a privileged driver-validation init container (nvidia-validator) that runs nvidia-smi"
        " and makes the /dev/char links",
        "an unprivileged init container that waits for the driver's driver-ready file; the"
        " toolkit container makes the /dev/char links",
        "no operator and no validator image: the readiness files gate the components, and"
        " the link-making is done by the privileged container that already exists",
        TOOLKIT_DS, c.not_privileged("driver-validation"), when=driver_enabled,
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
        c.env(DP, "NVIDIA_DRIVER_CAPABILITIES", "compute,utility"), when=plugin_class,
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
        " binding cannot miss an operand added later", src("assets/state-driver/0200_role.yaml"),
        lambda r: None if any(
            o.get("kind") == "RoleBinding" and o["metadata"]["name"] == "gpustack-scc-privileged"
            and o["subjects"][0]["kind"] == "Group" for o in r.objects
        ) else "no group binding of gpustack-scc-privileged", when=openshift,
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
        src("controllers/nodelabeling_controller.go, docker/Dockerfile"),
        _kubectl_image, when=_seeds_labels,
    ),
    Divergence(
        "driver", "node selection", "nodeSelector nvidia.com/gpu.deploy.driver=true",
        "with cluster.deployLabels: optional, a node affinity that only excludes false and"
        " paused values", "a fresh cluster needs no hand-applied label; the pause protocol"
        " of the driver and MIG managers still works", DRIVER_DS,
        c.selects_on("nvidia.com/gpu.deploy.driver"), when=driver_enabled,
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
        "there is no validator", DRA_GOLDEN, no_role_named("driver-validation"),
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
        dra_src("vendor/k8s.io/dynamic-resource-allocation, cmd/compute-domain-kubelet-plugin"),
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
        when=dra_gpus,
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
        dra_src("cmd/gpu-kubelet-plugin/root.go, cmd/compute-domain-kubelet-plugin/root.go"),
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
