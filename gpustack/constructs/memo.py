"""Reuse a component's rendered objects for every cluster whose props are the same.

A fleet is a few shapes repeated: a thousand profiles that extend a handful of bases differ in
their names and a few values, and most of their components get equal props (NFD, GFD, the
toolkit of every cluster on one distribution are the same objects). A construct is a function
of its props (they are resolved from the profile before cdk8s runs, and no construct reads
anything else; ``tests/constructs/test_memo.py`` holds every example profile to that), so a
component whose props equal ones already rendered in this process gets that rendering again
instead of a second round of jsii calls, which are most of a cluster's synthesis time.

The key is the component's name, its construct and the props' pickle: a pickle is a complete
value serialization of the frozen props dataclasses, so equal pickles mean equal props, and a
value that can't be pickled is simply not cached. Hits hand out the same manifest dicts: they
are read-only from here on (the layout serializes them, nothing edits them), which also lets the
layout serialize each shared object once (:mod:`gpustack.synth.layout`).

Bounded: at most :data:`MAX_ENTRIES` renderings are kept (least recently used go first), so a
fleet of all-different clusters costs a few MiB for it, not a copy of everything it rendered.
"""

from __future__ import annotations

import pickle
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

#: Renderings kept per process; a rendering is one component's manifests (a few KiB to ~50 KiB).
MAX_ENTRIES = 512

Manifests = Sequence[dict[str, Any]]


class RenderCache:
    """Least-recently-used map from (component, construct, props) to rendered manifests."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self._entries: OrderedDict[tuple[str, str, bytes], Manifests] = OrderedDict()
        self._max = max_entries
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(component: str, construct: str, props: object) -> tuple[str, str, bytes] | None:
        """The cache key, or ``None`` for props that can't be pickled (never cached)."""
        try:
            return component, construct, pickle.dumps(props, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            return None

    def get(self, key: tuple[str, str, bytes] | None) -> Manifests | None:
        if key is None:
            return None
        found = self._entries.get(key)
        if found is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return found

    def put(self, key: tuple[str, str, bytes] | None, manifests: Manifests) -> None:
        if key is None:
            return
        self._entries[key] = manifests
        self._entries.move_to_end(key)
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)


#: The process's cache (each synth worker has its own).
CACHE = RenderCache()
