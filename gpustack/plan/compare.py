"""One cluster's objects on both sides, and a fleet's folders, into a :class:`Plan`.

Each object present on both sides and different is one of: a rollout (its pod template
changes), a config change (a ConfigMap's or Secret's content), metadata only (labels or
annotations outside any pod template: nothing is recreated), a replacement (a Job whose spec
changes: its template is immutable, so it is created again and runs again), or a change in
place (any other field: a DaemonSet's strategy, a role's rules). A MIG layout change is read
from the config it lives in, whatever its name.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from gpustack.plan.configs import config_change, mig_changes
from gpustack.plan.manual import steps
from gpustack.plan.model import ClusterPlan, ConfigChange, Plan, Ref
from gpustack.plan.objects import Obj, pair, read_objects
from gpustack.plan.workloads import rollout, started

Files = Mapping[str, bytes]
#: Kinds whose pod template the API server refuses to change (a Job's ``spec.template``): a
#: change is a delete and a create, and the new object runs its pods again.
IMMUTABLE_SPECS = frozenset({"Job"})


def _without_metadata(obj: Obj) -> Obj:
    stripped = copy.deepcopy(dict(obj))
    meta = stripped.get("metadata")
    if isinstance(meta, dict):
        meta.pop("labels", None)
        meta.pop("annotations", None)
    return stripped


def compare_objects(name: str, base: Mapping[Ref, Obj], head: Mapping[Ref, Obj]) -> ClusterPlan:
    """What changing ``base`` into ``head`` does to the cluster ``name``."""
    pairs = pair(base, head)
    differ = [r for r in pairs.both if base[r] != head[r]]
    rollouts = tuple(r for ref in differ if (r := rollout(ref, base[ref], head[ref])))
    created = sorted([*pairs.added, *(ref for _, ref in (*pairs.moved, *pairs.renamed))])
    rollouts += tuple(r for ref in created if (r := started(ref, head[ref])))
    rolled = {r.ref for r in rollouts}
    configs: list[ConfigChange] = []
    migs: list[str] = []
    metadata, in_place, replaced = [], [], []
    for ref in differ:
        old, new = base[ref], head[ref]
        change = config_change(ref, old, new, head, rolled)
        migs += mig_changes(old, new)
        if change is not None:
            configs.append(change)
        elif ref in rolled:
            continue
        elif _without_metadata(old) == _without_metadata(new):
            metadata.append(ref)
        elif ref.kind in IMMUTABLE_SPECS and old.get("spec") != new.get("spec"):
            replaced.append(ref)
        else:
            in_place.append(ref)
    moved = [old for old, _ in (*pairs.moved, *pairs.renamed)]
    changed = differ or pairs.added or pairs.removed or moved
    return ClusterPlan(
        name,
        "changed" if changed else "unchanged",
        rollouts=rollouts,
        configs=tuple(configs),
        mig_configs=tuple(sorted(set(migs))),
        in_place=tuple(in_place),
        replaced=tuple(replaced),
        metadata_only=tuple(metadata),
        added=tuple(created),
        removed=tuple(sorted([*pairs.removed, *moved])),
        manual=steps(pairs, base, head, rollouts),
    )


def compare(base: Mapping[str, Files], head: Mapping[str, Files], names: tuple[str, str]) -> Plan:
    """Every cluster of either side (cluster name -> its folder's files): a cluster only in
    ``head`` is ``added`` (nothing running changes), one only in ``base`` is ``removed``."""
    clusters = []
    for cluster in sorted(base.keys() | head.keys()):
        if cluster not in base:
            added = tuple(sorted(read_objects(head[cluster])))
            clusters.append(ClusterPlan(cluster, "added", added=added))
        elif cluster not in head:
            removed = read_objects(base[cluster])
            plan = compare_objects(cluster, removed, {})
            clusters.append(
                ClusterPlan(cluster, "removed", removed=plan.removed, manual=plan.manual)
            )
        else:
            clusters.append(
                compare_objects(cluster, read_objects(base[cluster]), read_objects(head[cluster]))
            )
    return Plan(names[0], names[1], tuple(clusters))
