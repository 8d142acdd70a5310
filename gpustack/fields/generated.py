"""Files derived from declarations (schemas, references) are committed; one way to write them.

Every generator's ``python -m ...`` entry point rewrites its files, and with ``--check`` exits
non-zero naming the first stale one, so CI and pre-commit can tell a forgotten regeneration.
A generator names its files relative to the repository root, and they are resolved against the
checkout this package is imported from, not the current folder: run from anywhere else, a
generator used to write a second, soon stale copy there (``tests/profile/cases/schemas/`` was
one). ``--root DIR`` puts them under another tree instead (a test's temporary folder).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

#: The checkout this package is imported from (an editable install's source tree).
REPO_ROOT: Final = Path(__file__).resolve().parents[2]


def _root(args: Sequence[str]) -> Path:
    """``--root DIR`` (or ``--root=DIR``) from ``args``; the checkout otherwise, refused where
    the package does not sit in one (an installed wheel has no committed files to keep)."""
    for i, arg in enumerate(args):
        if arg.startswith("--root="):
            return Path(arg.partition("=")[2])
        if arg == "--root":
            if i + 1 == len(args):
                sys.exit("--root needs a folder: --root DIR")
            return Path(args[i + 1])
    if not (REPO_ROOT / "pyproject.toml").is_file():
        sys.exit(f"{REPO_ROOT} is no gpustack checkout; run from one, or pass --root DIR")
    return REPO_ROOT


def _under(root: Path, path: Path) -> Path:
    """``path`` (relative to the repository root, or absolute inside the checkout) under
    ``root``."""
    if path.is_absolute() and path.is_relative_to(REPO_ROOT):
        path = path.relative_to(REPO_ROOT)
    return root / path


def write_or_check(
    files: Mapping[Path, str], command: str, argv: Sequence[str] | None = None
) -> None:
    """Write ``files`` (path relative to the repository root -> exact text) under the checkout
    or ``--root DIR``, or with ``--check`` in ``argv`` verify them and exit with ``<path> is
    stale; run: <command>`` at the first that differs."""
    args = sys.argv[1:] if argv is None else argv
    root = _root(args)
    if "--check" in args:
        for path, text in files.items():
            target = _under(root, path)
            if not target.is_file() or target.read_text(encoding="utf-8") != text:
                shown = target.relative_to(root) if target.is_relative_to(root) else target
                sys.exit(f"{shown} is stale; run: {command}")
        return
    for path, text in files.items():
        target = _under(root, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
