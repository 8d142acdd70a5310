"""Per-cluster labels stamped onto rendered objects, so clusters that differ only in their
``metadata.labels`` share one rendering.

A real fleet labels every object with its cluster (``fleet.example.com/cluster: c0042``) for cost
and observability, so with the labels in the props no two clusters share a component and the
render cache (:mod:`gpustack.constructs.memo`) never hits: every cluster costs a full round of
jsii calls. But the constructs only ever *copy* the profile's labels into label maps
(:class:`gpustack.constructs.labels.Identity`); so a component is rendered once with a stand-in
label (:data:`STAND_IN`) in place of the profile's labels, the maps that hold it are found, and
each cluster gets that rendering with the stand-in replaced by its own labels. cdk8s sorts every
map's keys, so a stamped map is sorted again and the bytes are those of a rendering with the real
labels.

What keeps it exact rather than hopeful: the stand-in must appear *only* as an entry of label
maps, with its own value; if it shows up anywhere else (inside a string, as a value under
another key, a map that holds nothing but it), the component is not stampable and is rendered
with the real labels instead. A cluster label that clashes with a key the rendering already
has (a recommended label, ``pod-security.kubernetes.io/*`` on the Namespace, a ServiceMonitor
label) is rendered for real too: which one wins is the construct's business. Equality with a
real rendering is held for every example profile by ``tests/constructs/test_stamp.py``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

#: The stand-in label: a key and value no profile can give (``.invalid`` is reserved, RFC 2606).
STAND_IN_KEY: Final = "stamp.gpustack.invalid/profile-labels"
STAND_IN_VALUE: Final = "gpustack-stamp-stand-in"
STAND_IN: Final = ((STAND_IN_KEY, STAND_IN_VALUE),)

Labels = tuple[tuple[str, str], ...]
#: Where the stand-in sits: a tree of keys (map keys and list indexes) whose leaves
#: (``None``) are the label maps to stamp.
Places = dict[Any, Any]


def find_places(manifests: Sequence[Mapping[str, Any]]) -> Places | None:
    """The label maps of ``manifests`` that hold the stand-in, by manifest index; ``None`` when
    the stand-in shows up anywhere else (the rendering can't be stamped)."""
    places: Places = {}
    found = 0

    def walk(value: Any, tree: Places, key: Any) -> None:
        nonlocal found
        if isinstance(value, Mapping):
            if value.get(STAND_IN_KEY) == STAND_IN_VALUE and len(value) > 1:
                tree[key] = None
                found += 1
                return
            sub: Places = {}
            for k, v in value.items():
                walk(v, sub, k)
            if sub:
                tree[key] = sub
        elif isinstance(value, list):
            sub = {}
            for i, v in enumerate(value):
                walk(v, sub, i)
            if sub:
                tree[key] = sub

    for i, manifest in enumerate(manifests):
        walk(manifest, places, i)
    # every other appearance (in a string, a key elsewhere, a map of the stand-in alone) makes
    # the text hold more copies than the maps found
    text = json.dumps(list(manifests))
    if text.count(STAND_IN_KEY) != found or text.count(STAND_IN_VALUE) != found:
        return None
    return places


def _sorted_keys(entries: dict[str, Any]) -> dict[str, Any]:
    # cdk8s sorts keys the way JavaScript does (UTF-16 code units); for the ASCII of label keys
    # that is Python's order
    return {k: entries[k] for k in sorted(entries, key=lambda k: k.encode("utf-16-be"))}


class Clash(Exception):
    """A cluster label is already a key of a map it would be stamped into."""


def _stamp(value: Any, tree: Places | None, labels: Labels) -> Any:
    if tree is None:  # a label map
        entries = {k: v for k, v in value.items() if k != STAND_IN_KEY}
        for k, v in labels:
            if k in entries:
                raise Clash(k)
            entries[k] = v
        return _sorted_keys(entries)
    if isinstance(value, list):
        out = list(value)
        for i, sub in tree.items():
            out[i] = _stamp(value[i], sub, labels)
        return out
    copy = dict(value)
    for k, sub in tree.items():
        copy[k] = _stamp(value[k], sub, labels)
    return copy


def stamp(
    manifests: Sequence[dict[str, Any]], places: Places, labels: Labels
) -> list[dict[str, Any]] | None:
    """``manifests`` with the stand-in replaced by ``labels`` (new dicts only along the way to
    a label map; the rest is shared); ``None`` when a label clashes (render for real)."""
    try:
        return [_stamp(m, places[i], labels) if i in places else m for i, m in enumerate(manifests)]
    except Clash:
        return None
