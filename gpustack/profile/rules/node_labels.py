"""Rules on node labels: a node selector must use labels something puts on the nodes.

Why: the stack's DaemonSets select nodes by ``cluster.nodeSelector``; a label that nothing sets
leaves every GPU node empty, silently. gpustack knows the labels it deploys a labeller for: GPU
feature discovery's (``nvidia.com/gpu.product``, ``nvidia.com/cuda.*``...) and the GPU node
rule's ``nvidia.com/gpu.present``. Other labels (the cloud's, ``kubelet --node-labels``, NFD's
own ``feature.node.kubernetes.io/*``, which the cluster's NFD sets when gpustack's is off) are
the cluster's business and not checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from gpustack.profile import components
from gpustack.profile import node_label_catalog as catalog
from gpustack.profile.finding import Finding
from gpustack.profile.graph import graph_edges
from gpustack.profile.model import Profile

#: The label the GPU node rule (a rule of Node Feature Discovery) sets.
GPU_PRESENT: Final = "nvidia.com/gpu.present"


def _gfd() -> components.Component:
    """GPU feature discovery's registry row (the one reading its profile section)."""
    return components.for_section("gpu_feature_discovery")


def label_source(key: str) -> str | None:
    """Which gpustack component sets node label ``key``: ``gpu-node-rule``, GPU feature
    discovery (its registry name), or ``None`` (not one gpustack deploys a labeller for, or no
    label any labeller writes: a misspelled key is ``node-selector-label-known``'s finding).
    Who writes which label is :mod:`gpustack.profile.node_label_catalog`'s table."""
    known = catalog.lookup(key)
    if known is None:
        return None
    if known.source == catalog.GPU_NODE_RULE:
        return "gpu-node-rule"
    if known.source == catalog.GFD:
        return _gfd().name
    return None


def node_selector_labels_deployed(p: Profile) -> Iterator[Finding]:
    gfd_row = _gfd()
    gfd = gfd_row.enabled(p)
    for key, _ in p.cluster.node_selector:
        source = label_source(key)
        if source == "gpu-node-rule" and not p.node_feature_discovery.gpu_node_rule:
            yield Finding(
                ("cluster", "nodeSelector", key),
                f"nothing gpustack deploys sets the node label {key}",
                "set nodeFeatureDiscovery.gpuNodeRule: true, select a label your nodes carry,"
                " or accept this if you label the nodes yourself",
            )
        elif source == gfd_row.name and not gfd:
            yield Finding(
                ("cluster", "nodeSelector", key),
                f"{key} is set by GPU feature discovery, which this profile does not deploy",
                "set gpuFeatureDiscovery.enabled: true (not with the simulated backend), select"
                " another label, or accept this if something else sets it",
            )


def node_selector_not_self_labelled(p: Profile) -> Iterator[Finding]:
    """A node selector label that only pods placed by that selector write is a cycle (the
    placement graph, :meth:`gpustack.profile.graph.Graph.self_placed`): GPU feature discovery's
    pods are placed by ``cluster.nodeSelector`` like every other stack pod, so GFD runs only on
    nodes that already carry its labels, and a fresh GPU node never gets any of the stack
    (issue 20: the ``a100-mig-mixed`` example selected ``nvidia.com/gpu.product`` and placed
    nothing). A labeller the profile does not deploy is ``node-selector-labels-deployed``'s."""
    graph = graph_edges(p)
    for key, _ in p.cluster.node_selector:
        writers = graph.self_placed(key)
        if not writers:
            continue
        known = catalog.lookup(key)
        who = known.source if known is not None else " and ".join(w.name for w in writers)
        yield Finding(
            ("cluster", "nodeSelector", key),
            f"only {who} writes {key}, and its pods are placed by this same node selector: no"
            " fresh GPU node ever gets the stack",
            f'select {GPU_PRESENT}: "true" (gpustack\'s GPU node rule sets it), a label'
            " your cloud or node pool sets, or accept this if you label the nodes yourself",
        )
