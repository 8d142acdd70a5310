"""Which nodes each plugin config has: named in a recorded state, or only counted (given)."""

from __future__ import annotations

from gpustack.accept.expect import DEFAULT_TOLERANCE, Group, Host, groups
from gpustack.kube.labels import HOSTNAME_LABEL
from gpustack.kube.nodes import Nodes
from gpustack.kube.state import ClusterState, labels, name
from gpustack.profile.derive import dra_allocates_gpus
from gpustack.profile.model import Profile


def node_hosts(profile: Profile, cluster: ClusterState) -> dict[str | None, tuple[Host, ...]]:
    """Config name (``None``: top-level) -> the nodes the selector picks in ``cluster``, by
    their node config label, sorted by name (so a node's Job index is stable); not those of
    the pool whose GPUs NVIDIA's DRA driver hands out (``dra.nodeSelector``), which advertise no
    device plugin resource."""
    configs = [None, *(nc.name for nc in profile.device_plugin.node_configs)]
    found: dict[str | None, list[Host]] = {c: [] for c in configs}
    label = profile.device_plugin.node_config_label
    # NVIDIA's DRA driver hands out the GPUs of its pool: no device plugin resource to check
    dra_pool = dict(profile.dra.node_selector) if dra_allocates_gpus(profile) else {}
    for node in Nodes.of(cluster, profile).selected:
        own = labels(node)
        if dra_pool and all(own.get(k) == v for k, v in dra_pool.items()):
            continue
        chosen = own.get(label)
        host = Host(name(node), own.get(HOSTNAME_LABEL) or name(node))
        found[chosen if chosen in found else None].append(host)
    return {c: tuple(sorted(hosts, key=lambda h: h.name)) for c, hosts in found.items()}


def node_counts(
    profile: Profile, cluster: ClusterState | None, nodes: int | None
) -> dict[str | None, int]:
    """Config name (``None``: top-level) -> nodes. From ``cluster``: the nodes the selector
    picks, by their node config label; else ``nodes`` for every config."""
    if cluster is None:
        configs = [None, *(nc.name for nc in profile.device_plugin.node_configs)]
        return dict.fromkeys(configs, nodes or 1)
    return {c: len(hosts) for c, hosts in node_hosts(profile, cluster).items()}


class NothingToAccept(ValueError):
    """The profile's cluster gives the acceptance run nothing to check: its message says why."""


def plan(
    profile: Profile,
    cluster: ClusterState | None = None,
    nodes: int | None = None,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    min_busbw: float | None = None,
) -> list[Group]:
    """The groups of the run; with ``cluster`` each names its nodes, so each pod is pinned.

    Raises :class:`NothingToAccept` for a cluster without the device plugin: the run's Jobs
    request its resources, which no node then advertises, so they would stay Pending forever
    (the e2e tier saw it); and when ``cluster`` has no node the selector picks."""
    if not profile.device_plugin.enabled:
        raise NothingToAccept(
            "devicePlugin.enabled is false, so no node advertises a device plugin resource and"
            " the acceptance run has nothing to check (it checks the device plugin's GPUs, not"
            " GPUs that DRA hands out)"
        )
    found = groups(
        profile,
        node_counts(profile, cluster, nodes),
        tolerance=tolerance,
        min_busbw=min_busbw,
        hosts=node_hosts(profile, cluster) if cluster is not None else None,
    )
    if not found:
        raise NothingToAccept("the state has no node the profile's nodeSelector picks")
    return found
