"""Kubernetes' scheduling predicates the diagnosis needs, on plain JSON: taints and
tolerations, node selectors and required node affinity."""

from __future__ import annotations

from typing import Any

from gpustack.kube.state import JSON, get, items, labels

BLOCKING = ("NoSchedule", "NoExecute")


def tolerated(taint: JSON, tolerations: list[Any]) -> bool:
    for tol in tolerations:
        if not isinstance(tol, dict):
            continue
        op = tol.get("operator") or "Equal"
        if tol.get("key") not in (None, "") and tol.get("key") != taint.get("key"):
            continue
        if tol.get("key") in (None, "") and op != "Exists":
            continue
        if tol.get("effect") not in (None, "") and tol.get("effect") != taint.get("effect"):
            continue
        if op == "Equal" and (tol.get("value") or "") != (taint.get("value") or ""):
            continue
        return True
    return False


def untolerated(node: JSON, tolerations: list[Any]) -> list[str]:
    """The node's blocking taints the tolerations do not cover, as ``key=value:Effect``."""
    out = []
    for taint in items(node, "spec", "taints"):
        blocking = isinstance(taint, dict) and taint.get("effect") in BLOCKING
        if blocking and not tolerated(taint, tolerations):
            value = f"={taint['value']}" if taint.get("value") else ""
            out.append(f"{taint.get('key')}{value}:{taint.get('effect')}")
    return out


def _expression(expr: JSON, node_labels: dict[str, str]) -> bool:
    key, op = expr.get("key"), expr.get("operator")
    values = [str(v) for v in items(expr, "values")]
    has = isinstance(key, str) and key in node_labels
    if op == "In":
        return has and node_labels[str(key)] in values
    if op == "NotIn":
        return not has or node_labels[str(key)] not in values
    if op == "Exists":
        return has
    if op == "DoesNotExist":
        return not has
    return True  # Gt/Lt: not judged here


def selector_mismatch(pod_spec: JSON, node: JSON) -> str | None:
    """Why the pod's nodeSelector or required node affinity excludes the node; ``None`` if not."""
    node_labels = labels(node)
    selector = pod_spec.get("nodeSelector")
    for key, value in selector.items() if isinstance(selector, dict) else ():
        if node_labels.get(key) != str(value):
            return f"nodeSelector {key}={value}"
    terms = get(
        pod_spec,
        "affinity",
        "nodeAffinity",
        "requiredDuringSchedulingIgnoredDuringExecution",
        "nodeSelectorTerms",
    )
    if isinstance(terms, list) and terms:
        fits = any(
            all(
                _expression(e, node_labels)
                for e in items(t, "matchExpressions")
                if isinstance(e, dict)
            )
            for t in terms
            if isinstance(t, dict)
        )
        if not fits:
            return "required node affinity"
    return None
