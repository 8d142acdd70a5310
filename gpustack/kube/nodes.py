"""The nodes as gpustack reads them: which ones the profile selects, which show an NVIDIA GPU,
which of the stack's pods run on one, and the profile as a node's plugin config sees it.

Moved from ``doctor/nodes.py`` (the helpers) and ``nodestate/checks.py`` (:class:`Nodes`), so
that ``nodestate`` and ``accept`` read nodes without importing ``doctor`` or ``nodestate``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpustack.kube.labels import (
    ASSUMED_SELECTED,
    COMPONENT_LABEL,
    NAME_LABEL,
    PART_OF,
    PART_OF_LABEL,
)
from gpustack.kube.state import JSON, ClusterState, get, labels, mapping
from gpustack.profile import node_label_catalog as catalog
from gpustack.profile.model import Profile, node_config_profile

#: Node Feature Discovery's label for a PCI device of NVIDIA (vendor 10de), with or without the
#: device class in front (``pci-10de.present``, ``pci-0302_10de.present``).
NVIDIA_PCI = re.compile(
    r"feature\.node\.kubernetes\.io/pci-([0-9a-f]{4}_)?10de(_[0-9a-f]{4})?\.present"
)
#: Labellers whose labels only a node with an NVIDIA GPU gets.
GPU_LABELLERS = (catalog.GFD, catalog.GPU_NODE_RULE)


def gpu_evidence(node: JSON, ignore: frozenset[str] = frozenset()) -> str | None:
    """What shows the node has an NVIDIA GPU (a label or a capacity), ``None`` if nothing does.
    ``ignore``: the selector's own keys, which prove nothing (someone may have put them on any
    node)."""
    node_labels = labels(node)
    for key, value in node_labels.items():
        if key in ignore:
            continue
        if NVIDIA_PCI.fullmatch(key) and value == "true":
            return f"{key}={value}"
        known = catalog.lookup(key)
        if known is not None and known.source in GPU_LABELLERS and value not in ("", "false"):
            return f"{key}={value}"
    for resource in map(str, mapping(node, "status", "capacity")):
        if resource.startswith("nvidia.com/") and resource not in ignore:
            return f"capacity {resource}"
    return None


def looks_like_gpu_node(node: JSON, ignore: frozenset[str] = frozenset()) -> bool:
    return gpu_evidence(node, ignore) is not None


def stack_pods(state: ClusterState, profile: Profile, component: str, node: str) -> list[JSON]:
    ns = profile.cluster.namespace
    return [
        p
        for p in state.pods
        if get(p, "metadata", "namespace") == ns
        and labels(p).get(COMPONENT_LABEL) == component
        and labels(p).get(PART_OF_LABEL) == PART_OF
        and "mps" not in labels(p).get(NAME_LABEL, "")
        and get(p, "spec", "nodeName") == node
    ]


def node_view(profile: Profile, node: JSON) -> Profile:
    """The profile as this node's plugin config sees it (its node config, if labelled)."""
    chosen = labels(node).get(profile.device_plugin.node_config_label)
    for nc in profile.device_plugin.node_configs:
        if nc.name == chosen:
            return node_config_profile(profile, nc)
    return profile


@dataclass(frozen=True)
class Nodes:
    """The cluster as the checks see it: the profile's nodes (``selected`` by
    ``cluster.nodeSelector``) and the others."""

    state: ClusterState
    selected: tuple[JSON, ...]
    others: tuple[JSON, ...]

    @classmethod
    def of(cls, state: ClusterState, profile: Profile) -> Nodes:
        selector = dict(profile.cluster.node_selector)
        picked: list[JSON] = []
        rest: list[JSON] = []
        for node in state.nodes:
            own = labels(node)
            chosen = selector.items() <= own.items() or ASSUMED_SELECTED in (
                (node.get("metadata") or {}).get("annotations") or {}
            )
            (picked if chosen else rest).append(node)
        return cls(state, tuple(picked), tuple(rest))
