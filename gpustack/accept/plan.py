"""How many nodes each plugin config has: counted in a recorded state, or given."""

from __future__ import annotations

from gpustack.accept.expect import DEFAULT_TOLERANCE, Group, groups
from gpustack.doctor.state import ClusterState, labels
from gpustack.nodestate.checks import Nodes
from gpustack.profile.model import Profile


def node_counts(
    profile: Profile, cluster: ClusterState | None, nodes: int | None
) -> dict[str | None, int]:
    """Config name (``None``: top-level) -> nodes. From ``cluster``: the nodes the selector
    picks, by their node config label; else ``nodes`` for every config."""
    configs = [None, *(nc.name for nc in profile.device_plugin.node_configs)]
    if cluster is None:
        return dict.fromkeys(configs, nodes or 1)
    counts: dict[str | None, int] = dict.fromkeys(configs, 0)
    label = profile.device_plugin.node_config_label
    for node in Nodes.of(cluster, profile).selected:
        chosen = labels(node).get(label)
        counts[chosen if chosen in counts else None] += 1
    return counts


def plan(
    profile: Profile,
    cluster: ClusterState | None = None,
    nodes: int | None = None,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    min_busbw: float | None = None,
) -> list[Group]:
    return groups(
        profile, node_counts(profile, cluster, nodes), tolerance=tolerance, min_busbw=min_busbw
    )
