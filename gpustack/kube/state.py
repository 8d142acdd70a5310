"""The cluster's state, read from the List that ``kubectl get nodes,pods,daemonsets,events,
resourceclaims,resourceslices,deviceclasses,devicetaintrules -A -o json`` prints
(:data:`gpustack.kube.kubectl.ARGS`).

Only the fields the diagnosis reads are looked at, each with a safe default, so a state recorded
from any Kubernetes release (or trimmed by hand) loads. A state recorded before doctor read
Dynamic Resource Allocation (without the last three kinds) loads too: :attr:`ClusterState.
has_dra` says whether any DRA object is in it, and the claim diagnosis then claims nothing about
slices or classes it cannot see.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from gpustack import limits
from gpustack.kube.kubectl import ARGS

JSON = dict[str, Any]
#: A recorded state of a cluster with a few thousand pods (a few KiB each) is tens of MiB;
#: past this it is refused before it is parsed, since parsed JSON takes several times its size
#: in memory, and a larger file given by mistake (a log, a dump) would take gigabytes.
MAX_BYTES = 32 << 20
WHAT = "recorded cluster state"


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
    resourceclaims: list[JSON] = field(default_factory=list)
    resourceslices: list[JSON] = field(default_factory=list)
    deviceclasses: list[JSON] = field(default_factory=list)
    devicetaintrules: list[JSON] = field(default_factory=list)

    @property
    def has_dra(self) -> bool:
        """Whether the state holds any ResourceClaim, ResourceSlice or DeviceClass (a cluster
        that serves DRA and was recorded with them has at least its DeviceClasses)."""
        return bool(self.resourceclaims or self.resourceslices or self.deviceclasses)


def read(path: Path | IO[bytes], source: str) -> str:
    """The text of a recorded state (a file, or a stream for standard input), read as
    :mod:`gpustack.limits` reads every file: a regular file of at most :data:`MAX_BYTES`."""
    try:
        if isinstance(path, Path):
            data = limits.read_limited(path, MAX_BYTES, what=WHAT)
        else:
            data = limits.read_stream(path, MAX_BYTES, what=WHAT)
        return limits.decode(data)
    except limits.Refused as exc:
        raise StateError(f"{source}: {exc}") from None


def load(text: str, source: str = "state") -> ClusterState:
    try:
        data = limits.load_json(text, what=WHAT)
    except limits.Refused as exc:
        where = f"{source}:{exc.line}:{exc.col}" if exc.line > 1 or exc.col > 1 else source
        raise StateError(f"{where}: {exc}") from None
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise StateError(f"{source}: not a kubectl List; record it with `kubectl {' '.join(ARGS)}`")
    state = ClusterState()
    by_kind = {
        "Node": state.nodes,
        "Pod": state.pods,
        "DaemonSet": state.daemonsets,
        "Event": state.events,
        "ResourceClaim": state.resourceclaims,
        "ResourceSlice": state.resourceslices,
        "DeviceClass": state.deviceclasses,
        "DeviceTaintRule": state.devicetaintrules,
    }
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("kind"), str) and item["kind"] in by_kind:
            by_kind[item["kind"]].append(item)
    return state


def name(obj: JSON) -> str:
    return str(_get(obj, "metadata", "name") or "?")


def labels(obj: JSON) -> dict[str, str]:
    found = _get(obj, "metadata", "labels")
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def pod_ready(pod: JSON) -> bool:
    for cond in items(pod, "status", "conditions"):
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


def items(data: Any, *path: str) -> list[Any]:
    """The list at ``path``; none where it is missing or not a list. A recorded state may hold
    any type anywhere (another release, a hand-edited file): the diagnosis reads a value of the
    wrong type as absent, and never raises on it."""
    found = _get(data, *path)
    return found if isinstance(found, list) else []


def mapping(data: Any, *path: str) -> dict[str, Any]:
    """The mapping at ``path``; empty where it is missing or not a mapping (see :func:`items`)."""
    found = _get(data, *path)
    return found if isinstance(found, dict) else {}
