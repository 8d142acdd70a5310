"""Which files a ``validate``/``synth`` path means: profile files, and folders that cannot be read.

Apart from the checker because two commands and the synth freshness check walk the same way,
and walking needs no YAML, schema or rules.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PROFILE_SUFFIXES = (".yaml", ".yml")


def _is_hidden(part: str) -> bool:
    return part.startswith("_") or part.startswith(".")


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found: profile files, and folders it could not read (each an error:
    a profile in an unreadable folder is a profile nobody checked)."""

    files: tuple[Path, ...]
    unreadable: tuple[tuple[Path, str], ...] = ()


def scan(paths: Sequence[Path]) -> Scan:
    """Profile files for ``paths``: files as given; folders searched recursively for
    ``*.yaml``/``*.yml`` (sorted), skipping anything under a ``_``- or ``.``-prefixed name inside
    the folder, which is where bases for ``extends`` live (``profiles/_bases/``). Every entry
    with a profile suffix that is not a folder is kept (a broken symlink, a FIFO), so that
    checking it reports it instead of silently dropping a profile; links to folders are not
    followed. A folder that cannot be listed is reported in :attr:`Scan.unreadable`.

    Raises ``FileNotFoundError`` for a path that does not exist.
    """
    found: list[Path] = []
    unreadable: list[tuple[Path, str]] = []

    def failed(exc: OSError) -> None:
        unreadable.append((Path(str(exc.filename)), exc.strerror or str(exc)))

    for path in paths:
        if path.is_dir():
            inner: list[Path] = []
            for root, dirs, names in os.walk(path, onerror=failed):
                here = Path(root)
                dirs[:] = sorted(d for d in dirs if not _is_hidden(d))
                inner.extend(
                    here / n
                    for n in names
                    if Path(n).suffix in PROFILE_SUFFIXES and not _is_hidden(n)
                )
            found.extend(sorted(inner))
        elif os.path.lexists(path):
            found.append(path)
        else:
            raise FileNotFoundError(str(path))
    unique: dict[Path, None] = {}
    for p in found:
        unique.setdefault(p, None)
    return Scan(tuple(unique), tuple(unreadable))


def discover(paths: Sequence[Path]) -> list[Path]:
    """The profile files of :func:`scan` (see there)."""
    return list(scan(paths).files)
