"""Which files a ``validate``/``synth`` path means: profile files, and folders that cannot be read.

Apart from the checker because two commands and the synth freshness check walk the same way,
and walking needs no YAML, schema or rules.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PROFILE_SUFFIXES = (".yaml", ".yml")


def _is_hidden(part: str) -> bool:
    return part.startswith("_") or part.startswith(".")


def _under_base(path: Path, top: Path) -> bool:
    """Whether ``path`` lies in a ``_`` folder inside ``top`` (where bases live)."""
    try:
        return any(part.startswith("_") for part in path.relative_to(top).parts)
    except ValueError:
        return False


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found: profile files, and folders it could not read (each an error:
    a profile in an unreadable folder is a profile nobody checked)."""

    files: tuple[Path, ...]
    unreadable: tuple[tuple[Path, str], ...] = ()
    #: ``*.yaml``/``*.yml`` files skipped because a name on their way starts with ``_`` (bases
    #: for ``extends``): a complete profile among them is no cluster, which the user is told.
    bases: tuple[Path, ...] = ()


def scan(paths: Sequence[Path]) -> Scan:
    """Profile files for ``paths``: files as given; folders searched recursively for
    ``*.yaml``/``*.yml`` (sorted), skipping anything under a ``_``- or ``.``-prefixed name inside
    the folder, which is where bases for ``extends`` live (``profiles/_bases/``). Every entry
    with a profile suffix that is not a folder is kept (a broken symlink, a FIFO), so that
    checking it reports it instead of silently dropping a profile; links to folders are not
    followed. A folder that cannot be listed is reported in :attr:`Scan.unreadable`. The
    ``*.yaml``/``*.yml`` files skipped under ``_`` names are listed in :attr:`Scan.bases`.

    Raises ``FileNotFoundError`` for a path that does not exist.
    """
    found: list[Path] = []
    unreadable: list[tuple[Path, str]] = []
    bases: list[Path] = []

    def failed(exc: OSError, top: Path) -> None:
        folder = Path(str(exc.filename))
        if not _under_base(folder, top):  # a base folder nobody can read holds no cluster
            unreadable.append((folder, exc.strerror or str(exc)))

    for path in paths:
        if path.is_dir():
            # a profile as the parts of its path: sorted as tuples of strings, they are in the
            # order of the paths (which compare by parts), at a fraction of the cost of sorting
            # and making 10,000 Path objects (a fleet's no-op scans twice)
            inner: list[tuple[str, ...]] = []
            for root, dirs, names in os.walk(path, onerror=functools.partial(failed, top=path)):
                here = Path(root)
                parts = here.parts
                in_base = _under_base(here, path)
                # "_" folders are walked only to notice a complete profile put there
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for n in names:
                    if os.path.splitext(n)[1] not in PROFILE_SUFFIXES or n.startswith("."):
                        continue
                    if in_base or n.startswith("_"):
                        bases.append(here / n)
                    else:
                        inner.append((*parts, n))
            inner.sort()
            found.extend(Path(*p) for p in inner)
        elif os.path.lexists(path):
            found.append(path)
        else:
            raise FileNotFoundError(str(path))
    unique: dict[Path, None] = {}
    for p in found:
        unique.setdefault(p, None)
    return Scan(tuple(unique), tuple(unreadable), tuple(sorted(bases)))


def discover(paths: Sequence[Path]) -> list[Path]:
    """The profile files of :func:`scan` (see there)."""
    return list(scan(paths).files)
