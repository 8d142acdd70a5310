"""Per Pending GPU pod: which nodes have the resource, which are excluded, and whether any
node could ever hold the request; with the scheduler's own last word (FailedScheduling)."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

from gpustack.doctor.finding import Diagnosis
from gpustack.doctor.taints import selector_mismatch, untolerated
from gpustack.kube.pods import effective, is_sidecar, looks_like_gpu
from gpustack.kube.quantity import quantity
from gpustack.kube.state import JSON, ClusterState, events_for, get, items, mapping, name


def _asked(container: Any) -> dict[str, Decimal]:
    """GPU resources one container asks for: its limit, else its request."""
    res = container.get("resources") if isinstance(container, dict) else None
    need: dict[str, Decimal] = {}
    for section in ("requests", "limits"):
        found = res.get(section) if isinstance(res, dict) else None
        for r, v in found.items() if isinstance(found, dict) else ():
            if looks_like_gpu(str(r)) and (amount := quantity(v)) is not None:
                need[str(r)] = amount if section == "limits" else need.get(str(r), amount)
    return need


def _requests(pod: JSON) -> dict[str, Decimal]:
    """GPU resources the pod needs, as the scheduler counts them (:func:`effective`: main
    containers and sidecars summed, each init container beside the sidecars before it)."""
    main = [_asked(c) for c in items(pod, "spec", "containers")]
    inits = [(_asked(c), is_sidecar(c)) for c in items(pod, "spec", "initContainers")]
    names = dict.fromkeys(r for one in [*main, *(i for i, _ in inits)] for r in one)
    need = {
        r: effective(
            (one.get(r, Decimal(0)) for one in main),
            ((one.get(r, Decimal(0)), sidecar) for one, sidecar in inits),
        )
        for r in names
    }
    return {r: v for r, v in need.items() if v > 0}


def diagnose_pod(state: ClusterState, pod: JSON) -> Diagnosis | None:
    need = _requests(pod)
    if not need:
        return None
    subject = f"pod/{get(pod, 'metadata', 'namespace')}/{name(pod)}"
    spec = mapping(pod, "spec")
    tolerations = items(pod, "spec", "tolerations")
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
