"""Per Pending GPU pod: which nodes have the resource, which are excluded, and whether any
node could ever hold the request; with the scheduler's own last word (FailedScheduling)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

from gpustack.doctor.finding import Diagnosis
from gpustack.doctor.state import JSON, ClusterState, events_for, get, name
from gpustack.doctor.taints import selector_mismatch, untolerated
from gpustack.lint.pods import looks_like_gpu, quantity


def _requests(pod: JSON) -> dict[str, Decimal]:
    """GPU resources the pod needs (containers summed; limits, else requests)."""
    need: dict[str, Decimal] = {}
    for c in get(pod, "spec", "containers") or ():
        res = c.get("resources") if isinstance(c, dict) else None
        for section in ("requests", "limits"):
            for r, v in ((res or {}).get(section) or {}).items():
                if looks_like_gpu(r) and (amount := quantity(v)) is not None:
                    need[r] = amount if section == "limits" else need.get(r, amount)
    return {r: v for r, v in need.items() if v > 0}


def diagnose_pod(state: ClusterState, pod: JSON) -> Diagnosis | None:
    need = _requests(pod)
    if not need:
        return None
    subject = f"pod/{get(pod, 'metadata', 'namespace')}/{name(pod)}"
    spec = get(pod, "spec") or {}
    tolerations = spec.get("tolerations") or []
    parts = []
    hint = None
    for resource, amount in need.items():
        offer = {
            name(n): quantity(get(n, "status", "allocatable", resource)) or Decimal(0)
            for n in state.nodes
        }
        having = [n for n in state.nodes if offer[name(n)] > 0]
        if not having:
            parts.append(f"no node offers {resource}")
            hint = hint or "see the node findings above: the stack is not up on any GPU node"
            continue
        listed = ", ".join(f"{name(n)} ({offer[name(n)]})" for n in having)
        parts.append(f"wants {amount} {resource}; nodes with it: {listed}")
        open_ = []
        for n in having:
            blocked = untolerated(n, tolerations)
            mismatch = selector_mismatch(spec, n)
            if blocked:
                parts.append(f"{name(n)} excluded by taint {blocked[0]}")
                hint = hint or f"add a toleration for {blocked[0]} to the pod"
            elif mismatch:
                parts.append(f"{name(n)} excluded by {mismatch}")
                hint = hint or f"fix the pod's {mismatch}"
            else:
                open_.append(n)
        most = max(offer[name(n)] for n in having)
        if amount > most:
            parts.append(f"the request exceeds every node (most: {most})")
            hint = hint or f"ask for at most {most} {resource} per pod"
        elif open_ and all(amount > offer[name(n)] for n in open_):
            parts.append("the request exceeds every node it may use")
    failed = [
        e for e in events_for(state, "Pod", name(pod)) if e.get("reason") == "FailedScheduling"
    ]
    if failed:
        parts.append(f"scheduler: {str(failed[-1].get('message', '')).strip()}")
    return Diagnosis(subject, "pod-pending", "; ".join(parts), hint)


def diagnose_pending(state: ClusterState) -> Iterator[Diagnosis]:
    for pod in state.pods:
        if get(pod, "status", "phase") == "Pending" and not get(pod, "spec", "nodeName"):
            found = diagnose_pod(state, pod)
            if found is not None:
                yield found
