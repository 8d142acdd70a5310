"""``gpu-node-selector``: a GPU pod's node selector and required node affinity fit a GPU pool.

Only labels the profile knows its GPU nodes carry are compared (``cluster.nodeSelector``, and
the node config label for each ``devicePlugin.nodeConfigs`` pool): a selector on another label
may well match, but one that contradicts every pool that offers the resource (``nvidia.com/
gpu.present: "false"``, another ``gpu.product``, a node config the resource is not on) never
does. Only pools that advertise what the pod asks for count.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpustack.kube.pods import PodSite, listed
from gpustack.lint.context import LintContext, Pool
from gpustack.lint.rules.common import in_profile, wants_gpu
from gpustack.profile.document import JsonPath
from gpustack.profile.finding import Finding


def _expression_fits(expr: dict[str, Any], labels: dict[str, str]) -> bool:
    key, op = expr.get("key"), expr.get("operator")
    if not isinstance(key, str) or key not in labels:
        return True  # a label the profile does not know (or no label at all): may match
    values = [str(v) for v in listed(expr.get("values"))]
    if op == "In":
        return labels[key] in values
    if op == "NotIn":
        return labels[key] not in values
    return op != "DoesNotExist"


def _terms(site: PodSite) -> tuple[list[Any], JsonPath] | None:
    path = (
        "affinity",
        "nodeAffinity",
        "requiredDuringSchedulingIgnoredDuringExecution",
        "nodeSelectorTerms",
    )
    found: Any = site.spec
    for part in path:
        found = found.get(part) if isinstance(found, dict) else None
    return (found, (*site.path, *path)) if isinstance(found, list) and found else None


def conflict(site: PodSite, pool: Pool) -> tuple[JsonPath, str] | None:
    """Where and why the pod cannot land on ``pool``; ``None`` when it may."""
    labels = dict(pool.labels)
    selector = site.spec.get("nodeSelector")
    for key, value in selector.items() if isinstance(selector, dict) else ():
        if key in labels and labels[key] != str(value):
            return (*site.path, "nodeSelector", key), f"nodeSelector {key}={value}"
    terms = _terms(site)
    if terms is not None:
        items, path = terms
        fits = any(
            all(
                _expression_fits(e, labels)
                for e in listed(t.get("matchExpressions"))
                if isinstance(e, dict)
            )
            for t in items
            if isinstance(t, dict)
        )
        if not fits:
            return path, "the required node affinity"
    return None


def _show(pool: Pool) -> str:
    labels = ", ".join(f"{k}={v}" for k, v in pool.labels) or "no known labels"
    return f"{labels}" if pool.name is None else f"{labels} (node config {pool.name})"


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    wanted = wants_gpu(site, ctx)
    if not wanted or not ctx.pools:
        return
    pools = [p for p in ctx.pools if any(p.has(n) or n in ctx.known for n in wanted)]
    pools = [p for p in pools if any(p.has(n) for n in wanted)] or pools
    found = [conflict(site, p) for p in pools]
    if pools and all(found):
        first = found[0]
        assert first is not None
        path, what = first
        known = "; ".join(_show(p) for p in pools)
        yield Finding(
            path,
            f"{site.where} asks for {', '.join(wanted)}, but {what} matches no GPU node pool"
            f"{in_profile(ctx)} (GPU nodes are labelled {known})",
            "select the labels the GPU nodes carry, or drop the selector",
        )
