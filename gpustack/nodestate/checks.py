"""The checks of a profile against its nodes: one function per assumption (those of the GPUs in
:mod:`.gpus`, those of the host's driver in :mod:`.host_driver`; here Kubernetes, the container
runtime, the distribution, taints and which nodes are selected).

Each check reads the profile and the nodes (:class:`~gpustack.kube.nodes.Nodes`) and yields at
most one :class:`~gpustack.profile.finding.Finding` per profile field, at that field's path,
naming the nodes that disagree grouped by the value they have; the registry (:mod:`.registry`)
stamps the rule ID. Nodes that do not tell (no GFD labels before the stack's first sync, a field a
recorded state leaves out) are skipped, never guessed at.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from gpustack.kube.nodes import Nodes
from gpustack.kube.state import JSON
from gpustack.nodestate import facts
from gpustack.nodestate.mismatch import have, mismatch, names, node_word
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile

#: Kubernetes' version skew policy: a kubelet may be up to three minor releases older than the
#: API server, never newer (kubernetes.io/releases/version-skew-policy).
KUBELET_SKEW = 3
#: Taints the node lifecycle controller and cloud providers set and lift themselves.
_TRANSIENT_TAINTS = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/")


Check = Callable[[Profile, Nodes], Iterator[Finding]]


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

    yield from mismatch(
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

    yield from mismatch(
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
    yield from mismatch(
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
    yield from mismatch(
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
    yield from mismatch(
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


# --- Container runtime and distribution --------------------------------------------------------


def runtime_matches_nodes(p: Profile, n: Nodes) -> Iterator[Finding]:
    want = p.cluster.runtime.name
    yield from mismatch(
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
        yield from mismatch(
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
        yield from mismatch(
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

    yield from mismatch(
        ("cluster", "runtime", "distribution"),
        n.selected,
        found,
        lambda v: str(v).split(" ")[0] != want,
        lambda v: f"distribution {v}",
        f"cluster.runtime.distribution is {want}",
        "set cluster.runtime.distribution to the nodes' (it decides the runtime's config and"
        " socket paths the toolkit writes to)",
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
            f"the nodes carry taints cluster.nodeTaints does not list: {have(undeclared, str)}",
            "add them to cluster.nodeTaints (lint then checks that GPU workloads tolerate them)",
        )


def selected_nodes_have_gpus(p: Profile, n: Nodes) -> Iterator[Finding]:
    bare = [node for node in n.selected if facts.has_nvidia_gpu(node) is False]
    if bare:
        yield Finding(
            ("cluster", "nodeSelector"),
            f"cluster.nodeSelector picks {node_word(len(bare))} {names(bare)}, where NFD"
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
            + (f"; GPU {node_word(len(missed))}: {names(missed)}" if missed else ""),
            "select the labels the GPU nodes carry (`kubectl get nodes --show-labels`)",
        )
    elif missed:
        yield Finding(
            ("cluster", "nodeSelector"),
            f"GPU {node_word(len(missed))} {names(missed)} {'is' if len(missed) == 1 else 'are'}"
            f" not picked by cluster.nodeSelector ({selector}): the stack never runs there",
            "label them, widen the selector, or give them a profile of their own",
        )
