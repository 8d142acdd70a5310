"""Files derived from declarations (schemas, references) are committed; one way to write them.

Every generator's ``python -m ...`` entry point rewrites its files, and with ``--check`` exits
non-zero naming the first stale one, so CI and pre-commit can tell a forgotten regeneration.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path


def write_or_check(
    files: Mapping[Path, str], command: str, argv: Sequence[str] | None = None
) -> None:
    """Write ``files`` (path -> exact text), or with ``--check`` in ``argv`` verify them and exit
    with ``<path> is stale; run: <command>`` at the first that differs."""
    args = sys.argv[1:] if argv is None else argv
    if "--check" in args:
        for path, text in files.items():
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                sys.exit(f"{path} is stale; run: {command}")
        return
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
