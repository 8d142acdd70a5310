"""The index's JSON text, as ``json.dump(value, indent=2, sort_keys=True, ensure_ascii=False)``
writes it, at a fraction of the cost.

Why: with an indent, the standard library encodes in pure Python, token by token; a fleet's
index of 10,000 clusters (~55 MB, ~750,000 strings) took seconds to write on every run, a
no-op included (issue #37). Here each string goes through the C escaper and each small map
(a cluster's entry, below :data:`_STREAMED` levels) is joined in one go, and the text is handed
over a map at a time, so memory stays flat. Anything not a map, list, string, bool, int or
``None`` (a float) is written by ``json.dumps`` itself; any mapping is written as a map (the
index's entries are written without copying them into dicts).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

#: The C string escaper ``json`` uses for ``ensure_ascii=False``.
_string = json.encoder.encode_basestring
#: Maps at these top levels are handed over entry by entry (the index's ``clusters``).
_STREAMED = 2


def chunks(value: Any, level: int = 0) -> Iterator[str]:
    """``value``'s text in pieces: each entry of a map above :data:`_STREAMED` levels deep is
    one piece (what the index writes as it goes)."""
    if type(value) is dict and value and level < _STREAMED:
        inner = "\n" + "  " * (level + 1)
        yield "{"
        for i, (key, item) in enumerate(sorted(value.items())):
            yield ("," if i else "") + inner + _key(key) + ": "
            yield from chunks(item, level + 1)
        yield "\n" + "  " * level + "}"
    else:
        yield text(value, level)


def text(value: Any, level: int = 0) -> str:
    """``value``'s whole text at indentation ``level``."""
    kind = type(value)
    if kind is str:
        return _string(value)
    if kind is dict or isinstance(value, Mapping):
        if not value:
            return "{}"
        inner = ",\n" + "  " * (level + 1)
        return (
            "{"
            + inner[1:]
            + inner.join(_key(k) + ": " + text(v, level + 1) for k, v in sorted(value.items()))
            + "\n"
            + "  " * level
            + "}"
        )
    if kind is list:
        if not value:
            return "[]"
        inner = ",\n" + "  " * (level + 1)
        return (
            "["
            + inner[1:]
            + inner.join(text(v, level + 1) for v in value)
            + "\n"
            + "  " * level
            + "]"
        )
    if value is None or kind is bool or kind is int:
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False)


def _key(key: Any) -> str:
    if type(key) is str:
        return _string(key)
    # json writes a non-string key as the string of its JSON text (True -> "true")
    return _string(key if isinstance(key, str) else json.dumps(key))
