"""The objects of a cluster folder, and the pairs of two sides.

Read through :mod:`gpustack.kube.manifests` from the files' bytes, so a folder read from git and
one rendered in memory are the same thing here. An object is known by kind, namespace and name;
the kustomization (a build file, not an object any cluster holds) is left out. Objects present on
one side only are matched once more, as moves (same kind and name, another namespace) and renames
(same kind, namespace and component label, one of each): both need the old object deleted.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from gpustack.kube.labels import COMPONENT_LABEL
from gpustack.kube.manifests import parse
from gpustack.plan.model import Ref

Obj = Mapping[str, Any]
_BUILD_GROUP = "kustomize.config.k8s.io/"


def meta(obj: Obj) -> Mapping[str, Any]:
    found = obj.get("metadata")
    return found if isinstance(found, dict) else {}


def labels(obj: Obj) -> Mapping[str, Any]:
    found = meta(obj).get("labels")
    return found if isinstance(found, dict) else {}


def ref_of(obj: Obj) -> Ref:
    return Ref(
        str(obj.get("kind", "")), str(meta(obj).get("namespace", "")), str(meta(obj)["name"])
    )


def component(obj: Obj) -> str:
    """The component label gpustack writes (``driver``, ``device-plugin``...), else ``""``."""
    return str(labels(obj).get(COMPONENT_LABEL, ""))


def read_objects(files: Mapping[str, bytes]) -> dict[Ref, Obj]:
    """Every object in ``files`` (path -> bytes), by reference; files that are not YAML or
    objects without a name are skipped (``synth --check`` is where a broken folder is found)."""
    found: dict[Ref, Obj] = {}
    for path, content in sorted(files.items()):
        if not path.endswith((".yaml", ".yml")):
            continue
        for manifest in parse(content.decode("utf-8", "replace"), path):
            data = manifest.data
            if str(data.get("apiVersion", "")).startswith(_BUILD_GROUP):
                continue
            if isinstance(meta(data).get("name"), str):
                found[ref_of(data)] = data
    return found


@dataclass(frozen=True)
class Pairs:
    """Both sides sorted out: ``both`` (present on each), ``moved``/``renamed`` (old, new),
    and what is left on one side only."""

    both: tuple[Ref, ...]
    moved: tuple[tuple[Ref, Ref], ...]
    renamed: tuple[tuple[Ref, Ref], ...]
    removed: tuple[Ref, ...]
    added: tuple[Ref, ...]


def pair(base: Mapping[Ref, Obj], head: Mapping[Ref, Obj]) -> Pairs:
    """``base`` against ``head``: the refs on both sides, then moves, then renames (objects
    without a component label are never called renamed: nothing says they are one thing)."""
    gone = sorted(base.keys() - head.keys())
    new = sorted(head.keys() - base.keys())
    moved = _match({r: (r.kind, r.name) for r in gone}, {r: (r.kind, r.name) for r in new})
    gone = [r for r in gone if r not in {m[0] for m in moved}]
    new = [r for r in new if r not in {m[1] for m in moved}]
    renamed = _match(
        {r: (r.kind, r.namespace, component(base[r])) for r in gone if component(base[r])},
        {r: (r.kind, r.namespace, component(head[r])) for r in new if component(head[r])},
    )
    gone = [r for r in gone if r not in {m[0] for m in renamed}]
    new = [r for r in new if r not in {m[1] for m in renamed}]
    both = tuple(sorted(base.keys() & head.keys()))
    return Pairs(both, tuple(moved), tuple(renamed), tuple(gone), tuple(new))


def _match(olds: Mapping[Ref, Hashable], news: Mapping[Ref, Hashable]) -> list[tuple[Ref, Ref]]:
    """Pairs of one removed and one added object with the same key, where the key is
    unambiguous on both sides (two candidates are two objects, not one renamed)."""
    by_old: dict[Hashable, list[Ref]] = {}
    by_new: dict[Hashable, list[Ref]] = {}
    for r, k in olds.items():
        by_old.setdefault(k, []).append(r)
    for r, k in news.items():
        by_new.setdefault(k, []).append(r)
    both = by_old.keys() & by_new.keys()
    return sorted(
        (by_old[k][0], by_new[k][0]) for k in both if len(by_old[k]) == len(by_new[k]) == 1
    )
