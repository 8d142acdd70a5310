"""The cluster's state, read from a ``kubectl get nodes,pods,daemonsets,events -A -o json`` List.

Only the fields the diagnosis reads are looked at, each with a safe default, so a state recorded
from any Kubernetes release (or trimmed by hand) loads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]


class StateError(Exception):
    """The text is not what ``kubectl get -o json`` prints."""


def _get(data: Any, *path: str) -> Any:
    for part in path:
        data = data.get(part) if isinstance(data, dict) else None
    return data


@dataclass(frozen=True)
class ClusterState:
    nodes: list[JSON] = field(default_factory=list)
    pods: list[JSON] = field(default_factory=list)
    daemonsets: list[JSON] = field(default_factory=list)
    events: list[JSON] = field(default_factory=list)


def load(text: str, source: str = "state") -> ClusterState:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise StateError(f"{source}: not JSON ({exc})") from None
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise StateError(
            f"{source}: not a kubectl List; record it with "
            "`kubectl get nodes,pods,daemonsets,events -A -o json`"
        )
    state = ClusterState()
    by_kind = {
        "Node": state.nodes,
        "Pod": state.pods,
        "DaemonSet": state.daemonsets,
        "Event": state.events,
    }
    for item in items:
        if isinstance(item, dict) and item.get("kind") in by_kind:
            by_kind[item["kind"]].append(item)
    return state


def name(obj: JSON) -> str:
    return str(_get(obj, "metadata", "name") or "?")


def labels(obj: JSON) -> dict[str, str]:
    found = _get(obj, "metadata", "labels")
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def pod_ready(pod: JSON) -> bool:
    for cond in _get(pod, "status", "conditions") or ():
        if isinstance(cond, dict) and cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def events_for(state: ClusterState, kind: str, obj_name: str) -> list[JSON]:
    """Events about one object, oldest first (by ``lastTimestamp``, then as listed)."""
    found = [
        e
        for e in state.events
        if _get(e, "involvedObject", "kind") == kind
        and _get(e, "involvedObject", "name") == obj_name
    ]
    return sorted(found, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))


def get(data: Any, *path: str) -> Any:
    """``data[path[0]][path[1]]...``, or ``None`` where a step is missing."""
    return _get(data, *path)
