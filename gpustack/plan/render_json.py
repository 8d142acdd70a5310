"""The plan as JSON: a stable structure (documented in ``docs/how-to/plan.md``), camelCase keys
as in the manifests, every object as ``{kind, namespace, name}``."""

from __future__ import annotations

from typing import Any

from gpustack.plan.model import ClusterPlan, Plan, Ref

#: Bumped when a key changes meaning or goes; new keys may be added without it.
FORMAT_VERSION = 1


def _ref(r: Ref) -> dict[str, str]:
    return {"kind": r.kind, "namespace": r.namespace, "name": r.name}


def _cluster(c: ClusterPlan) -> dict[str, Any]:
    return {
        "name": c.name,
        "status": c.status,
        "disruptive": c.disruptive,
        "rollouts": [
            {
                "object": _ref(r.ref),
                "component": r.component,
                "strategy": r.strategy,
                "maxUnavailable": r.max_unavailable,
                "maxSurge": r.max_surge,
                "nodes": r.nodes,
                "selector": r.selector,
                "changed": list(r.changed),
                "effects": list(r.effects),
                "version": {"before": r.version[0], "after": r.version[1]},
            }
            for r in c.rollouts
        ],
        "migConfigs": list(c.mig_configs),
        "configs": [
            {
                "object": _ref(x.ref),
                "keys": list(x.keys),
                "mountedBy": [{"object": _ref(r), "rolls": rolls} for r, rolls in x.mounted_by],
            }
            for x in c.configs
        ],
        "inPlace": [_ref(r) for r in c.in_place],
        "replaced": [_ref(r) for r in c.replaced],
        "metadataOnly": [_ref(r) for r in c.metadata_only],
        "added": [_ref(r) for r in c.added],
        "removed": [_ref(r) for r in c.removed],
        "manual": [
            {"kind": s.kind, "object": _ref(s.ref), "why": s.why, "commands": list(s.commands)}
            for s in c.manual
        ],
    }


def document(plan: Plan) -> dict[str, Any]:
    return {
        "formatVersion": FORMAT_VERSION,
        "base": plan.base,
        "head": plan.head,
        "disruptive": plan.disruptive,
        "clusters": [_cluster(c) for c in plan.clusters],
    }
