"""Rules on ``devicePlugin.nodeConfigs``, and how the plugin rules run on each node config.

A node config gives a node pool its own plugin config; every device plugin rule must hold there
too. :func:`per_node_config` runs a rule on each node config's view of the profile and says
where a finding belongs: at the node config's own value, or at its name when the trouble comes
from a value it inherits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import replace

from gpustack.profile.document import JsonPath
from gpustack.profile.finding import Finding
from gpustack.profile.model import NodeConfig, Profile, node_config_profile
from gpustack.profile.rules.common import DP, NC

Check = Callable[[Profile], Iterator[Finding]]


def _node_config_path(nc: NodeConfig, i: int, path: JsonPath) -> JsonPath | None:
    """Where a finding about a node config's view belongs: the node config's own value when it
    overrides the one at ``path``, else ``None`` (the value is inherited from the top level)."""
    at = (*NC, i)
    head, rest = tuple(path[:2]), tuple(path[2:])
    if head == (DP, "sharing") and nc.sharing is not None:
        return (*at, "sharing", *rest)
    if head == (DP, "migStrategy") and nc.mig_strategy is not None:
        return (*at, "migStrategy")
    if head == ("gpus", "mig") and nc.gpus.mig is not None:
        return (*at, "gpus", "mig", *rest)
    if head == ("gpus", "perNode") and nc.gpus.per_node is not None:
        return (*at, "gpus", "perNode")
    return None


def per_node_config(check: Check) -> Check:
    """Run a device plugin check on the top level and on each node config's view of the profile.

    A finding at a value the node config overrides is reported at that value
    (``$.devicePlugin.nodeConfigs[0].sharing...``). One at an inherited value is reported only
    if the top level does not already report it, at the node config's name, saying which.
    """

    @functools.wraps(check)
    def checked(p: Profile) -> Iterator[Finding]:
        top = list(check(p))
        yield from top
        reported = {(f.path, f.message) for f in top}
        for i, nc in enumerate(p.device_plugin.node_configs):
            for finding in check(node_config_profile(p, nc)):
                path = _node_config_path(nc, i, finding.path)
                if path is not None:
                    yield replace(finding, path=path)
                elif (finding.path, finding.message) not in reported:
                    yield Finding(
                        (*NC, i, "name"),
                        f"on nodes of node config {nc.name}: {finding.message}",
                        finding.hint,
                    )

    return checked


#: Node config names whose DaemonSet ``nvidia-device-plugin-<name>`` would take the name of
#: another of gpustack's DaemonSets, each with whose name it is (for the message).
RESERVED_NODE_CONFIG_NAMES = {
    "daemonset": "the default DaemonSet's",
    "mps-control-daemon": "the MPS control daemon's",
}


def node_configs_need_plugin(p: Profile) -> Iterator[Finding]:
    dp = p.device_plugin
    if not dp.enabled and dp.node_configs:
        yield Finding(
            (*NC,),
            "node configs configure gpustack's device plugin DaemonSets, but"
            " devicePlugin.enabled is false, so none is deployed",
            "remove nodeConfigs, or set devicePlugin.enabled: true",
        )


def node_config_names_unique(p: Profile) -> Iterator[Finding]:
    seen: set[str] = set()
    for i, nc in enumerate(p.device_plugin.node_configs):
        if nc.name in seen:
            yield Finding(
                (*NC, i, "name"),
                f"node config {nc.name} is defined twice; a node label selects only one",
                "give each node config its own name",
            )
        elif nc.name in RESERVED_NODE_CONFIG_NAMES:
            yield Finding(
                (*NC, i, "name"),
                f"a node config named {nc.name} would get"
                f" {RESERVED_NODE_CONFIG_NAMES[nc.name]} name, nvidia-device-plugin-{nc.name}",
                "choose another name",
            )
        seen.add(nc.name)
