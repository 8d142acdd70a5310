"""Give jsii back the objects of a finished rendering.

jsii never frees an object created from Python: its Python side keeps every proxy in a
registry, and its Node kernel keeps every object in a table, for the life of the process. A
cluster's rendering creates about 50 (an App, its Charts, every construct and API object), so a
worker that renders hundreds of distinct clusters grew by ~2–3 MiB per cluster, most of it in
Node. After a rendering is turned into plain dicts nothing refers to those objects again, so
:func:`released` drops them from both sides (jsii's documented ``del`` request for the kernel),
and a process no longer keeps every rendering it ever made (what is left is V8's own heap
growth, measured by ``bench/synth_fleet.py --distinct``).

A release is one jsii round trip per object, about 0.1 s for a cluster, which a process that
renders one cluster (``gpustack template``, ``synth`` of one profile) and then exits would pay
for nothing. So a rendering's objects are released when the *next* rendering starts (or by
:func:`release_pending`): a process holds at most one finished rendering's objects, and one
that renders once never pays.

This reaches into jsii's reference registry (``jsii._reference_map``: the registry of
objects created from Python, and the function that resolves objects the kernel returns), which
jsii does not document: where it is missing (another jsii) nothing is released, and
``tests/constructs/test_release.py`` fails, so an upgrade that breaks it is noticed here rather
than as memory growth in a fleet. Only objects created *inside* the block are released, and the
construct modules are imported before it (``gpustack.constructs.stack``), so no module-level
jsii object is ever handed back.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import Any

import jsii
from jsii import _reference_map


def _registry() -> MutableMapping[str, Any] | None:
    refs = getattr(getattr(_reference_map, "_refs", None), "_refs", None)
    return refs if isinstance(refs, dict) else None


def live_objects() -> int:
    """How many jsii objects this process holds (``-1``: this jsii can't tell)."""
    refs = _registry()
    return -1 if refs is None else len(refs)


#: Classes whose objects jsii hands to Python from static factories (``JsonPatch.add``): each
#: call makes a new object, registered in the kernel but not in Python's registry. Only these
#: are released among the objects the kernel returns; an object of another class might be a
#: JavaScript singleton that a later call returns again, which the kernel could then no longer
#: find.
FACTORY_VALUES = frozenset({"cdk8s.JsonPatch"})


#: The last rendering's objects, released when the next one starts: Python proxies' keys in
#: jsii's registry and references the kernel returned from factories.
_pending: tuple[list[str], list[Any]] = ([], [])

#: Whether :func:`released` first hands back what earlier renderings left pending. The warm
#: renderer turns it off (:func:`release_when_told`): a burst of parallel Applications would
#: otherwise wait, one after the other, for each other's releases; it releases between bursts.
_at_start = True


def release_when_told() -> None:
    """From now on renderings leave their objects pending until :func:`release_pending`."""
    global _at_start
    _at_start = False


def pending() -> int:
    """How many jsii objects wait to be released."""
    return len(_pending[0]) + len(_pending[1])


def release_pending(limit: int | None = None) -> int:
    """Release the objects of the renderings :func:`released` has deferred (at most
    ``limit`` of them); returns how many were released."""
    refs = _registry()
    keys, returned = _pending
    done = 0
    while keys and (limit is None or done < limit):
        key = keys.pop()
        done += 1
        if refs is not None and key in refs:
            jsii.kernel.delete(refs.pop(key).__jsii_ref__)
    while returned and (limit is None or done < limit):
        jsii.kernel.delete(returned.pop())
        done += 1
    return done


@contextmanager
def released() -> Iterator[None]:
    """Release every jsii object created in the block: when the next rendering starts (also
    after an error), or at :func:`release_pending`."""
    if _at_start:
        release_pending()
    refs = _registry()
    resolve = getattr(_reference_map, "resolve_reference", None)
    if refs is None or resolve is None:
        yield
        return
    before = set(refs)
    returned: dict[str, Any] = {}

    def recording(kernel: Any, ref: Any) -> Any:
        obj = resolve(kernel, ref)
        if ref.ref.rpartition("@")[0] in FACTORY_VALUES:
            returned[ref.ref] = ref
        return obj

    _reference_map.resolve_reference = recording
    try:
        yield
    finally:
        _reference_map.resolve_reference = resolve
        _pending[0].extend(r for r in refs if r not in before)
        _pending[1].extend(returned.values())
