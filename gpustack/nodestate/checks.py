"""The checks of a profile against its nodes: one function per assumption.

Each check reads the profile and the nodes (:class:`~gpustack.kube.nodes.Nodes`) and yields at
most one :class:`~gpustack.profile.finding.Finding` per profile field, at that field's path,
naming the nodes that disagree grouped by the value they have; the registry (:mod:`.registry`)
stamps the rule ID. Nodes that do not tell (no GFD labels before the stack's first sync, a field a
recorded state leaves out) are skipped, never guessed at.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from gpustack.kube.nodes import Nodes, node_view, stack_pods
from gpustack.kube.state import JSON, labels, name
from gpustack.nodestate import facts
from gpustack.profile import catalog
from gpustack.profile.document import JsonPath
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile

DP = "devicePlugin"
#: Kubernetes' version skew policy: a kubelet may be up to three minor releases older than the
#: API server, never newer (kubernetes.io/releases/version-skew-policy).
KUBELET_SKEW = 3
#: Where GKE's driver installer puts the driver on COS and Ubuntu node images.
GKE_DRIVER_ROOT = "/home/kubernetes/bin/nvidia"
#: GKE's node label for the driver version its installer puts on a GPU node pool.
GKE_DRIVER_LABEL = "cloud.google.com/gke-gpu-driver-version"
#: Taints the node lifecycle controller and cloud providers set and lift themselves.
_TRANSIENT_TAINTS = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/")
#: How many node names a message lists before it counts the rest.
_SHOWN = 4


Check = Callable[[Profile, Nodes], Iterator[Finding]]


def names(nodes: Iterable[JSON]) -> str:
    """``gpu-1, gpu-2`` (``gpu-1, ..., and 12 more`` past a few)."""
    shown = sorted(name(n) for n in nodes)
    more = len(shown) - _SHOWN
    head = ", ".join(shown[:_SHOWN])
    return f"{head}, and {more} more" if more > 0 else head


def _node_word(count: int) -> str:
    return "node" if count == 1 else "nodes"


def grouped(nodes: Iterable[JSON], value: Callable[[JSON], object]) -> dict[object, list[JSON]]:
    """The nodes by the value they have, skipping those where it is ``None``, in the order the
    values first appear."""
    out: dict[object, list[JSON]] = {}
    for node in nodes:
        found = value(node)
        if found is not None:
            out.setdefault(found, []).append(node)
    return out


def _have(groups: dict[object, list[JSON]], show: Callable[[object], str]) -> str:
    """``node gpu-1 has X; nodes gpu-2, gpu-3 have Y``."""
    parts = []
    for value, nodes in groups.items():
        verb = "has" if len(nodes) == 1 else "have"
        parts.append(f"{_node_word(len(nodes))} {names(nodes)} {verb} {show(value)}")
    return "; ".join(parts)


def _mismatch(
    at: JsonPath,
    nodes: Iterable[JSON],
    value: Callable[[JSON], object],
    wrong: Callable[[object], bool],
    show: Callable[[object], str],
    what: str,
    hint: str,
) -> Iterator[Finding]:
    groups = {v: ns for v, ns in grouped(nodes, value).items() if wrong(v)}
    if groups:
        yield Finding(at, f"{what}, but {_have(groups, show)}", hint)


# --- Kubernetes --------------------------------------------------------------------------------


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def kubernetes_version_matches_nodes(p: Profile, n: Nodes) -> Iterator[Finding]:
    """A kubelet newer than ``kubernetesVersion`` means the cluster is newer (a kubelet is never
    newer than its API server); a control-plane node's kubelet is the API server's release."""
    want = _minor(p.cluster.kubernetes_version)
    every = (*n.selected, *n.others)

    def wrong(node: JSON) -> object:
        server = facts.server_version(node)
        if server is not None:
            found = facts.minor_of(server)
            return f"API server {server}" if found and found != want else None
        have = facts.kubelet_minor(node)
        if have is None:
            return None
        if have > want or (facts.is_control_plane(node) and have != want):
            return f"kubelet {facts.info(node, 'kubeletVersion')}"
        return None

    yield from _mismatch(
        ("cluster", "kubernetesVersion"),
        every,
        wrong,
        lambda v: True,
        str,
        f"the profile targets Kubernetes {p.cluster.kubernetes_version}",
        "set cluster.kubernetesVersion to the cluster's release (the control plane's kubelet,"
        " or `kubectl version`): manifests are validated against it",
    )


def kubelet_skew_supported(p: Profile, n: Nodes) -> Iterator[Finding]:
    want = _minor(p.cluster.kubernetes_version)

    def too_old(node: JSON) -> object:
        have = facts.kubelet_minor(node)
        if have is None or have[0] != want[0] or want[1] - have[1] <= KUBELET_SKEW:
            return None
        return facts.info(node, "kubeletVersion")

    yield from _mismatch(
        ("cluster", "kubernetesVersion"),
        n.selected,
        too_old,
        lambda v: True,
        lambda v: f"kubelet {v}",
        f"a kubelet may be at most {KUBELET_SKEW} minor releases older than the API server"
        f" ({p.cluster.kubernetes_version})",
        "upgrade those nodes, or lower cluster.kubernetesVersion if the profile is wrong",
    )


# --- OS and kernel -----------------------------------------------------------------------------


def os_matches_driver_image(p: Profile, n: Nodes) -> Iterator[Finding]:
    if not p.driver.enabled:
        return
    tag = p.driver.os_tag
    yield from _mismatch(
        ("driver", "osTag"),
        n.selected,
        lambda node: (facts.os_tag(node), facts.os_shown(node)) if facts.os_tag(node) else None,
        lambda v: isinstance(v, tuple) and v[0] != tag,
        lambda v: f"{v[1]} (driver image OS {v[0]})" if isinstance(v, tuple) else str(v),
        f"the driver image is built for {tag} (tag <version>-{tag})",
        "set driver.osTag to the nodes' OS (the driver container builds against the host's"
        " kernel headers from its own OS), or split the nodes into profiles per OS",
    )


def kernel_matches_precompiled(p: Profile, n: Nodes) -> Iterator[Finding]:
    d = p.driver
    if not (d.enabled and d.use_precompiled and d.kernel_version):
        return
    yield from _mismatch(
        ("driver", "kernelVersion"),
        n.selected,
        facts.kernel,
        lambda v: v != d.kernel_version,
        lambda v: f"kernel {v}",
        f"the precompiled driver image is built for kernel {d.kernel_version}",
        "set driver.kernelVersion to the nodes' `uname -r`, or set usePrecompiled: false to"
        " build the module on the node",
    )


def rhcos_build_in_profile(p: Profile, n: Nodes) -> Iterator[Finding]:
    """A GPU node on an RHCOS build the profile names no Driver Toolkit for gets no driver pod:
    each driver DaemonSet is pinned to its build (issue 31 item 3; the GPU Operator renders one
    per build it finds, ``ocpDriverToolkitDaemonSets``, v26.7.0)."""
    d = p.driver
    builds = d.driver_toolkit.all_builds()
    if not (d.enabled and builds) or p.cluster.runtime.distribution != "openshift":
        return
    named = {rhcos for rhcos, _ in builds}
    yield from _mismatch(
        ("driver", "driverToolkit", "rhcosVersion"),
        n.selected,
        facts.rhcos_build,
        lambda v: v not in named,
        lambda v: f"RHCOS build {v}",
        f"the driver is built for RHCOS {', '.join(sorted(named))} only",
        "add the build to driver.driverToolkit.builds with its Driver Toolkit image (`oc adm"
        " release info --image-for=driver-toolkit` of that release): its nodes get no driver"
        " pod until then",
    )


# --- GPUs --------------------------------------------------------------------------------------


def gpu_product_matches_nodes(p: Profile, n: Nodes) -> Iterator[Finding]:
    want = p.gpus.product
    if want is None:
        return

    def found(node: JSON) -> object:
        raw = facts.product_label(node)
        return None if raw is None else (facts.product(node), raw)

    yield from _mismatch(
        ("gpus", "product"),
        n.selected,
        found,
        lambda v: isinstance(v, tuple) and v[0] != want,
        lambda v: (
            f"{v[1]} (gpus.product {v[0]})"
            if isinstance(v, tuple) and v[0]
            else f"{v[1] if isinstance(v, tuple) else v}, a product gpustack's catalog lacks"
        ),
        f"gpus.product is {want}",
        "set gpus.product to the nodes' (GFD's nvidia.com/gpu.product, as nvidia-smi names it),"
        " or select only the nodes that have it",
    )


def host_architecture_matches_product(p: Profile, n: Nodes) -> Iterator[Finding]:
    want = catalog.PRODUCT_HOST_ARCH.get(p.gpus.product or "")
    if want is None:
        return
    yield from _mismatch(
        ("gpus", "product"),
        n.selected,
        lambda node: facts.info(node, "architecture"),
        lambda v: v != want,
        lambda v: f"{v} hosts",
        f"{p.gpus.product} is only built into {want} hosts",
        "set gpus.product to the nodes' GPU, or select the nodes that carry it",
    )


def gpu_architecture_matches_nodes(p: Profile, n: Nodes) -> Iterator[Finding]:
    want = p.gpus.architecture
    if want is None or p.gpus.product is not None:
        return  # with a product, gpu-product-matches-nodes says more
    yield from _mismatch(
        ("gpus", "architecture"),
        n.selected,
        facts.architecture,
        lambda v: v != want,
        lambda v: f"{v} GPUs",
        f"gpus.architecture is {want}",
        "set gpus.architecture to the nodes' (GFD's nvidia.com/gpu.family)",
    )


def _node_config_index(p: Profile, node: JSON) -> int | None:
    chosen = labels(node).get(p.device_plugin.node_config_label)
    for i, nc in enumerate(p.device_plugin.node_configs):
        if nc.name == chosen:
            return i
    return None


def _promised_count(p: Profile, node: JSON) -> int | None:
    """What GFD's ``nvidia.com/gpu.count`` should say on this node: its GPUs, or under the
    ``single`` MIG strategy (product ``<name>-MIG-<profile>``) its MIG devices (k8s-device-plugin
    v0.20.0 internal/lm/mig-strategy_test.go); ``None`` where the layout is not known."""
    view = node_view(p, node)
    if "-MIG-" in (facts.product_label(node) or ""):
        return view.gpus.per_node * sum(n for _, n in view.gpus.mig) if view.gpus.mig else None
    return view.gpus.per_node


def gpu_count_matches_nodes(p: Profile, n: Nodes) -> Iterator[Finding]:
    """``gpus.perNode`` (or a node config's) against GFD's ``nvidia.com/gpu.count``."""
    by_path: dict[tuple[JsonPath, int], list[JSON]] = {}
    for node in n.selected:
        want = _promised_count(p, node)
        if want is None:
            continue
        i = _node_config_index(p, node)
        own = i is not None and p.device_plugin.node_configs[i].gpus.per_node is not None
        at: JsonPath = (DP, "nodeConfigs", i, "gpus", "perNode") if own else ("gpus", "perNode")  # type: ignore[assignment]
        by_path.setdefault((at, want), []).append(node)
    for (at, want), nodes in by_path.items():
        yield from _mismatch(
            at,
            nodes,
            facts.gpu_count,
            lambda v, want=want: v != want,  # type: ignore[misc]
            lambda v: f"{v} GPU{'' if v == 1 else 's'}",
            f"the profile promises {want} GPU{'' if want == 1 else 's'} per node",
            "set perNode to what the nodes have (examples, sharing and the acceptance run"
            " count on it)",
        )


def mig_capable_nodes(p: Profile, n: Nodes) -> Iterator[Finding]:
    found: dict[JsonPath, list[JSON]] = {}
    for node in n.selected:
        view = node_view(p, node)
        if view.device_plugin.mig_strategy == "none" and not view.gpus.mig:
            continue
        if facts.mig_capable(node) is not False:
            continue
        at: JsonPath = ("gpus", "mig") if view.gpus.mig else (DP, "migStrategy")
        found.setdefault(at, []).append(node)
    for at, nodes in found.items():
        shown = ", ".join(sorted({facts.product_label(x) or "GPU" for x in nodes}))
        yield Finding(
            at,
            f"the profile partitions GPUs with MIG, but {_node_word(len(nodes))} {names(nodes)}"
            f" {'is' if len(nodes) == 1 else 'are'} not MIG-capable (nvidia.com/mig.capable"
            f"=false; {shown})",
            "remove the MIG settings for these nodes (a node config without MIG), or select"
            " MIG-capable nodes",
        )


# --- Container runtime and distribution --------------------------------------------------------


def runtime_matches_nodes(p: Profile, n: Nodes) -> Iterator[Finding]:
    want = p.cluster.runtime.name
    yield from _mismatch(
        ("cluster", "runtime", "name"),
        n.selected,
        lambda node: facts.info(node, "containerRuntimeVersion") if facts.runtime(node) else None,
        lambda v: _runtime_name(str(v)) != want,
        lambda v: f"runtime {v}",
        f"cluster.runtime.name is {want}",
        "set cluster.runtime.name to the nodes' runtime (the toolkit edits its config)",
    )


def _runtime_name(raw: str) -> str:
    name_, _, _ = raw.partition("://")
    return "crio" if name_ == "cri-o" else name_


def _runtime_version(raw: str) -> tuple[int, ...]:
    return facts.version_parts(raw.partition("://")[2])


def runtime_version_matches_nodes(p: Profile, n: Nodes) -> Iterator[Finding]:
    """``cluster.runtime.version`` against the nodes' (as far as the profile says: ``2.0``
    matches ``2.0.5``);
    unset on containerd 2.x nodes, the toolkit would read a 1.x-style config dump."""
    rt = p.cluster.runtime
    same = [
        node
        for node in n.selected
        if (found := facts.runtime(node)) is not None and found[0] == rt.name
    ]
    raw = lambda node: facts.info(node, "containerRuntimeVersion")  # noqa: E731
    if rt.version is not None:
        want = facts.version_parts(rt.version)
        yield from _mismatch(
            ("cluster", "runtime", "version"),
            same,
            raw,
            lambda v: isinstance(v, str) and _runtime_version(v)[: len(want)] != want,
            lambda v: f"runtime {v}",
            f"cluster.runtime.version is {rt.version}",
            "set cluster.runtime.version to the nodes' (containerd 2.x reads drop-in configs"
            " differently from 1.7)",
        )
    elif rt.name == "containerd":
        yield from _mismatch(
            ("cluster", "runtime", "version"),
            same,
            raw,
            lambda v: isinstance(v, str) and _runtime_version(v)[:1] >= (2,),
            lambda v: f"runtime {v}",
            "cluster.runtime.version is unset, so the toolkit is configured for containerd 1.x"
            " (it reads `containerd config dump`)",
            "set cluster.runtime.version to the nodes' containerd version",
        )


def distribution_matches_nodes(p: Profile, n: Nodes) -> Iterator[Finding]:
    """The distribution decides where the runtime's config and socket are: k3s, RKE2 and k0s
    mark their kubelet, MicroK8s and OpenShift label their nodes; managed clouds run the
    generic layout."""
    want = p.cluster.runtime.distribution

    def found(node: JSON) -> object:
        have = facts.distribution(node)
        where = facts.cloud(node)
        return f"{have} ({where})" if where in ("GKE", "EKS", "AKS") else have

    yield from _mismatch(
        ("cluster", "runtime", "distribution"),
        n.selected,
        found,
        lambda v: str(v).split(" ")[0] != want,
        lambda v: f"distribution {v}",
        f"cluster.runtime.distribution is {want}",
        "set cluster.runtime.distribution to the nodes' (it decides the runtime's config and"
        " socket paths the toolkit writes to)",
    )


# --- Driver ------------------------------------------------------------------------------------


def _host_driver(p: Profile, n: Nodes, node: JSON) -> str | None:
    """Why the node has a driver that is not gpustack's, or ``None``."""
    image = facts.info(node, "osImage") or ""
    if image.startswith("Container-Optimized OS"):
        return "Container-Optimized OS, where only GKE's installer puts a driver"
    if image.startswith("Bottlerocket"):
        return f"{image}, whose NVIDIA variants ship the driver in the image"
    gke = labels(node).get(GKE_DRIVER_LABEL)
    if gke and gke != "disabled":
        return f"GKE installs a driver ({GKE_DRIVER_LABEL}={gke})"
    version = facts.driver_version(node)
    if facts.container_driver_seen(node):
        return None
    if version and not stack_pods(n.state, p, "driver", name(node)):
        return f"driver {version} is loaded and no gpustack driver pod runs there"
    return None


def host_driver_absent(p: Profile, n: Nodes) -> Iterator[Finding]:
    if not p.driver.enabled:
        return
    yield from _mismatch(
        ("driver", "enabled"),
        n.selected,
        lambda node: _host_driver(p, n, node),
        lambda v: True,
        lambda v: f"a host driver ({v})",
        "driver.enabled is true: gpustack's driver container would be a second driver",
        "set driver.enabled: false (and driver.hostDriverRoot where the host keeps it), or"
        " remove the host's driver first",
    )


def driver_version_matches_host(p: Profile, n: Nodes) -> Iterator[Finding]:
    want = p.driver.version
    if p.driver.enabled:
        return
    yield from _mismatch(
        ("driver", "version"),
        n.selected,
        facts.driver_version,
        lambda v: v != want,
        lambda v: f"driver {v} loaded",
        f"driver.version says the host driver is {want} (the CUDA and GPU rules check that)",
        "set driver.version to the hosts' (`nvidia-smi` or GFD's nvidia.com/cuda.driver-version"
        ".full)",
    )


def gke_host_driver_root(p: Profile, n: Nodes) -> Iterator[Finding]:
    if p.driver.enabled or p.driver.host_driver_root == GKE_DRIVER_ROOT:
        return
    yield from _mismatch(
        ("driver", "hostDriverRoot"),
        n.selected,
        lambda node: (
            "GKE"
            if facts.cloud(node) == "GKE"
            and labels(node).get(GKE_DRIVER_LABEL, "default") != "disabled"
            else None
        ),
        lambda v: True,
        lambda v: f"GKE's driver under {GKE_DRIVER_ROOT}",
        f"driver.hostDriverRoot is {p.driver.host_driver_root}",
        f"set driver.hostDriverRoot: {GKE_DRIVER_ROOT} (where GKE's installer puts the driver)",
    )


# --- Taints and selection ----------------------------------------------------------------------


def _taint_text(t: tuple[str, str, str]) -> str:
    return f"{t[0]}={t[1]}:{t[2]}" if t[1] else f"{t[0]}:{t[2]}"


def node_taints_declared(p: Profile, n: Nodes) -> Iterator[Finding]:
    """``cluster.nodeTaints`` is what lint and the stack's tolerations are checked against."""
    declared = {(t.key, t.value or "", t.effect) for t in p.cluster.node_taints}
    undeclared: dict[object, list[JSON]] = {}
    for node in n.selected:
        for taint in facts.taints(node):
            if taint not in declared and not taint[0].startswith(_TRANSIENT_TAINTS):
                undeclared.setdefault(_taint_text(taint), []).append(node)
    if undeclared:
        yield Finding(
            ("cluster", "nodeTaints"),
            f"the nodes carry taints cluster.nodeTaints does not list: {_have(undeclared, str)}",
            "add them to cluster.nodeTaints (lint then checks that GPU workloads tolerate them)",
        )


def selected_nodes_have_gpus(p: Profile, n: Nodes) -> Iterator[Finding]:
    bare = [node for node in n.selected if facts.has_nvidia_gpu(node) is False]
    if bare:
        yield Finding(
            ("cluster", "nodeSelector"),
            f"cluster.nodeSelector picks {_node_word(len(bare))} {names(bare)}, where NFD"
            " (Node Feature Discovery) found no NVIDIA PCI device (no feature.node.kubernetes.io/"
            "pci-10de.present)",
            'narrow cluster.nodeSelector to the GPU nodes (nvidia.com/gpu.present: "true")',
        )


def gpu_nodes_selected(p: Profile, n: Nodes) -> Iterator[Finding]:
    missed = [node for node in n.others if facts.has_nvidia_gpu(node)]
    selector = ", ".join(f"{k}={v}" for k, v in p.cluster.node_selector)
    if not n.selected and n.others:
        yield Finding(
            ("cluster", "nodeSelector"),
            f"cluster.nodeSelector ({selector}) picks none of the {len(n.others)} nodes"
            + (f"; GPU {_node_word(len(missed))}: {names(missed)}" if missed else ""),
            "select the labels the GPU nodes carry (`kubectl get nodes --show-labels`)",
        )
    elif missed:
        yield Finding(
            ("cluster", "nodeSelector"),
            f"GPU {_node_word(len(missed))} {names(missed)} {'is' if len(missed) == 1 else 'are'}"
            f" not picked by cluster.nodeSelector ({selector}): the stack never runs there",
            "label them, widen the selector, or give them a profile of their own",
        )
