"""A data table, and reads as one: each row is one property of NVIDIA's rendering of the
DRA driver's kubelet plugin, the file it was read from, and the check that holds gpustack's
output to it; the rows its two plugin containers share, and the checks too long for a row, come
first."""

from __future__ import annotations

from typing import Final

from gpustack.conformance import checks as c
from gpustack.conformance.row import (
    CD_GROUP,
    DRA_DEFAULTS,
    DRA_DEPLOY_LABEL,
    DRA_DRIVER,
    DRA_GOLDEN,
    DRA_GPUS_GOLDEN,
    Condition,
    Fact,
    dra_domains,
    dra_gpus,
    driver_root,
    kubelet_dir,
    no_role_named,
)
from gpustack.constructs import dra_driver as dra
from gpustack.constructs.kube import CDI_ROOT
from gpustack.constructs.scripts import DRIVER_ROOT_CTR_PATH
from gpustack.profile.model import Profile

#: One row of the plugin containers' shared facts: (aspect, statement, check).
Row = tuple[str, str, c.Check]

# NVIDIA renders /var/lib/kubelet/...; the chart takes both folders as values
# (kubeletPlugin.kubeletRegistrarDirectoryPath, kubeletPluginsDirectoryPath): the facts name the
# folders under the kubelet root of the profile's distribution
REGISTRY, PLUGINS = kubelet_dir("plugins_registry"), kubelet_dir("plugins")


def _plugin_mounts(ctr: str, binary: str) -> tuple[Row, ...]:
    """What the plugin container runs, with which privileges and host folders."""
    return (
        ("containers", f"the {ctr} container runs {binary}", c.command(ctr, binary)),
        ("privileges", f"{ctr} is privileged: it reads NVML, sees every device"
         " node and writes CDI specs and sockets on the host", c.privileged(ctr)),
        ("host paths", f"{ctr}: the kubelet's plugin registry (the registration socket)",
         c.host_path(ctr, REGISTRY)),
        ("host paths", f"{ctr}: the kubelet's plugins folder, Bidirectional, at the same path"
         " inside (the DRA socket the kubelet dials; draplugin.go PluginDataDirectoryPath)",
         c.host_path(ctr, PLUGINS, at=PLUGINS, propagation="Bidirectional")),
        ("host paths", f"{ctr}: {CDI_ROOT}, where it writes a CDI spec per prepared claim for"
         " the runtime", c.host_path(ctr, CDI_ROOT, at=CDI_ROOT)),
        ("host paths", f"{ctr}: the driver root at {DRIVER_ROOT_CTR_PATH},"
         " HostToContainer (libraries and binaries it names in the CDI specs)",
         c.host_path(ctr, driver_root, at=DRIVER_ROOT_CTR_PATH, propagation="HostToContainer")),
    )  # fmt: skip


def _plugin_env(ctr: str, port: int, endpoint: str, every: int) -> tuple[Row, ...]:
    """The plugin container's environment, health port and probes."""
    return (
        ("env", f"{ctr}: CDI_ROOT names {CDI_ROOT}", c.env(ctr, "CDI_ROOT", CDI_ROOT)),
        ("env", f"{ctr}: NVIDIA_VISIBLE_DEVICES=void: the runtime injects no GPU into the"
         " plugin itself", c.env(ctr, "NVIDIA_VISIBLE_DEVICES", "void")),
        ("env", f"{ctr}: NVIDIA_MIG_CONFIG_DEVICES=all",
         c.env(ctr, "NVIDIA_MIG_CONFIG_DEVICES", "all")),
        ("env", f"{ctr}: KUBELET_REGISTRAR_DIRECTORY_PATH names the plugin registry",
         c.env(ctr, "KUBELET_REGISTRAR_DIRECTORY_PATH", REGISTRY)),
        ("env", f"{ctr}: KUBELET_PLUGINS_DIRECTORY_PATH names the plugins folder",
         c.env(ctr, "KUBELET_PLUGINS_DIRECTORY_PATH", PLUGINS)),
        ("env", f"{ctr}: NODE_NAME (from spec.nodeName) and NAMESPACE", c.env(ctr, "NODE_NAME")),
        ("env", f"{ctr}: metrics at HTTP_ENDPOINT {endpoint}",
         c.env(ctr, "HTTP_ENDPOINT", endpoint)),
        ("ports", f"{ctr}: HEALTHCHECK_PORT {port}, its gRPC health server",
         c.env(ctr, "HEALTHCHECK_PORT", str(port))),
        ("probes", f"{ctr}: a gRPC startup probe on {port} (service liveness, every second, up"
         " to 600 failures)",
         c.grpc_probe(ctr, "startupProbe", port, periodSeconds=1, failureThreshold=600)),
        ("probes", f"{ctr}: a gRPC liveness probe on {port} every {every} s",
         c.grpc_probe(ctr, "livenessProbe", port, periodSeconds=every)),
    )  # fmt: skip


def _dra_plugin_facts(
    ctr: str, binary: str, port: int, endpoint: str, every: int, when: Condition
) -> tuple[Fact, ...]:
    """The facts NVIDIA's rendering states alike for each kubelet plugin container (``gpus``:
    ``gpu-kubelet-plugin``; ``compute-domains``: ``compute-domain-kubelet-plugin``)."""
    cited = DRA_GPUS_GOLDEN if ctr == "gpus" else DRA_GOLDEN
    rows = (*_plugin_mounts(ctr, binary), *_plugin_env(ctr, port, endpoint, every))
    return tuple(Fact(DRA_DRIVER, aspect, said, cited, check, when) for aspect, said, check in rows)


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


def _no_gates_set(p: Profile) -> bool:
    """The default fact holds where ``dra.featureGates`` sets none (set gates and their
    ``FEATURE_GATES``: ``tests/constructs/test_dra_gates.py``, against the chart's template)."""
    return not p.dra.feature_gates.values()


def _no_feature_gates(r: c.Rendered) -> str | None:
    """No FEATURE_GATES on either plugin container and no MPS Role: the chart's default."""
    for ctr in ("gpus", "compute-domains"):
        if r.container(ctr) is not None and c.env(ctr, "FEATURE_GATES")(r) is None:
            return f"{ctr}: FEATURE_GATES set"
    return no_role_named("mps")(r)


FACTS: Final[tuple[Fact, ...]] = (
    # --- DRA driver: kubelet plugin ---------------------------------------------------------
    # the health ports are NVIDIA's defaults (internal/state/dra_driver.go
    # defaultGPUsHealthcheckPort, defaultComputeDomainsHealthcheckPort), written out here rather
    # than read from the construct, so that the table holds the construct to them
    *_dra_plugin_facts("gpus", "gpu-kubelet-plugin", 51516, ":8080", 30, dra_gpus),
    *_dra_plugin_facts("compute-domains", "compute-domain-kubelet-plugin", 51515, ":8081", 10,
                       dra_domains),
    Fact(DRA_DRIVER, "env", "compute-domains: GPU_CLIQUE_LABEL_ENABLED=true (it labels its"
         " node with the NVLink clique)", DRA_GOLDEN,
         c.env("compute-domains", "GPU_CLIQUE_LABEL_ENABLED", "true"), when=dra_domains),
    Fact(DRA_DRIVER, "feature gates", "none by default: the chart's draDriver.featureGates is"
         " empty, so no FEATURE_GATES on the plugin containers and no MPS deployments Role"
         " (the goldens' MPSSupport=true comes from their test's sample GPUCluster)",
         DRA_DEFAULTS, _no_feature_gates, when=_no_gates_set),
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
                   "computedomains", "watch"), when=dra_domains),
    Fact(DRA_DRIVER, "RBAC", "with ComputeDomains: labels its node (nodes update, patch)",
         DRA_GOLDEN, c.granted("ClusterRole", dra.KUBELET_PLUGIN_CD_CLUSTER_ROLE, "", "nodes",
                               "patch"), when=dra_domains),
    Fact(DRA_DRIVER, "RBAC", "with ComputeDomains: reads the cliques in its namespace (a Role,"
         " computedomaincliques get)", DRA_GOLDEN,
         c.granted("Role", dra.KUBELET_PLUGIN_ROLE, CD_GROUP, "computedomaincliques", "get"),
         when=dra_domains),
    Fact(DRA_DRIVER, "admission", "a ValidatingAdmissionPolicy lets the plugin's"
         " ServiceAccount write only ResourceSlices of the node its token names"
         " (authentication.kubernetes.io/node-name)", DRA_GOLDEN, _slice_policy),
)  # fmt: skip
