"""What the mutation suites share: every path into a JSON document, and setting one by name.

The validate, lint and doctor suites each start from real documents (profiles, manifests,
``kubectl get -o json`` states) and break them the same two ways: aim a wrong value at a field
the code reads, or replace whatever sits at a random existing path.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path (map keys and list indexes) below ``node``, parents before children."""
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, value in items:
        yield (*prefix, key)
        yield from paths(value, (*prefix, key))


def set_field(doc: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``doc``'s field ``a.b.c`` to ``value``, making (or replacing) maps on the way. A
    label key holds dots, so whatever follows ``labels.`` is one key."""
    head, sep, label = dotted.partition("labels.")
    parts = [p for p in head.split(".") if p] + (["labels", label] if sep else [])
    *parents, last = parts
    for key in parents:
        if not isinstance(doc.get(key), dict):
            doc[key] = {}
        doc = doc[key]
    doc[last] = value
