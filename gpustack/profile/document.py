"""A profile document: its data with the position of every value, how positions and paths are
shown, the error that stops a file from loading, and how an overlay merges onto its base.

Why apart from :mod:`gpustack.profile.loader` (which reads files, follows ``extends`` and keeps
them inside the profiles root): every reader of a finding's place (the rules, lint, nodestate,
the Kubernetes object readers) needs these types, not the file reading.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: A position as shown to users: (file, line, column), 1-based.
Loc = tuple[str, int, int]
#: A JSON path as a tuple of keys and list indexes; ``()`` is the document root.
JsonPath = tuple[str | int, ...]


def display_path(path: Path) -> str:
    """A profile's path as every report shows it (relative ones normalised)."""
    return os.path.normpath(path) if not path.is_absolute() else str(path)


class ProfileError(Exception):
    """A problem that stops a file from loading, located like a validation issue."""

    def __init__(self, loc: Loc, path: JsonPath, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.loc = loc
        self.json_path = path
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class Document:
    """A loaded (and possibly merged) profile: its data and the position of every path.

    ``where`` maps each path to ``(value position, key position)``; the root has no key, so its
    key position is the start of the file. ``written`` keeps the source text of every scalar
    YAML did not read as a string, so a message can quote ``1.30`` rather than the float ``1.3``.
    """

    data: dict[str, Any]
    where: dict[JsonPath, tuple[Loc, Loc]]
    file: str
    written: dict[JsonPath, str] = field(default_factory=dict)

    def locate(self, path: JsonPath, *, key: bool = False) -> Loc:
        """Position of ``path``; a path absent from the file (a default) maps to its nearest
        written ancestor, so every issue can still be shown at a line of the file."""
        for end in range(len(path), -1, -1):
            found = self.where.get(path[:end])
            if found is not None:
                return found[1] if key and end == len(path) else found[0]
        return (self.file, 1, 1)


def format_path(path: JsonPath) -> str:
    """``("driver", "version")`` -> ``$.driver.version``; odd keys are quoted, indexes bracketed."""
    out = ["$"]
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif part.isidentifier():
            out.append(f".{part}")
        else:
            out.append(f"[{part!r}]")
    return "".join(out)


def _leaves(data: dict[str, Any], path: JsonPath) -> Iterator[JsonPath]:
    """Paths an overlay replaces outright: every non-mapping value (null included)."""
    for key, value in data.items():
        child = (*path, key)
        if isinstance(value, dict):
            yield from _leaves(value, child)
        else:
            yield child


def _merge_data(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge_data(out[key], value)
        else:
            out[key] = value
    return out


def merge(base: Document, over: Document) -> Document:
    """``over`` on top of ``base``: data merged as :mod:`gpustack.profile.loader` documents,
    positions kept per value."""
    replaced = set(_leaves(over.data, ()))

    def kept(path: JsonPath) -> bool:
        return not any(path[:end] in replaced for end in range(1, len(path) + 1))

    where = {path: loc for path, loc in base.where.items() if kept(path)}
    where.update(over.where)
    for path in replaced:  # `key: null` removes the key, and with it the null's position
        if _lookup(over.data, path) is None:
            where.pop(path, None)
    written = {path: text for path, text in base.written.items() if kept(path)}
    written.update(over.written)
    return Document(
        data=_merge_data(base.data, over.data), where=where, file=over.file, written=written
    )


def _lookup(data: dict[str, Any], path: JsonPath) -> Any:
    value: Any = data
    for part in path:
        value = value[part]
    return value
