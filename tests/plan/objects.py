"""Base and head object sets made from a real cluster folder of ``dist/``: the base as
committed, the head a copy that one mutation changed (the way a profile change would)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpustack.plan.model import Ref
from gpustack.plan.objects import read_objects

DIST = Path(__file__).resolve().parents[2] / "dist" / "clusters"
NS = "gpustack-system"

Objects = dict[Ref, Any]
Mutation = Callable[[Objects], None]


def folder(cluster: str) -> dict[str, bytes]:
    root = DIST / cluster
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.yaml"))}


def load(cluster: str) -> Objects:
    return dict(read_objects(folder(cluster)))


def both(cluster: str, mutate: Mutation) -> tuple[Objects, Objects]:
    base = load(cluster)
    head = copy.deepcopy(base)
    mutate(head)
    return base, head


def ds(name: str) -> Ref:
    return Ref("DaemonSet", NS, name)


def cm(name: str) -> Ref:
    return Ref("ConfigMap", NS, name)


def containers(obj: Any) -> list[Any]:
    spec = obj["spec"]["template"]["spec"]
    return [*spec.get("initContainers", ()), *spec["containers"]]
