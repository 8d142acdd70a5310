"""Hostile files shared by the reader tests (tests/test_hostile_inputs.py drives each command
line entry, tests/test_readers.py every file option and standard input): one builder per kind
of file, so both matrices attack readers with the same bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Final

#: Far above what a profile may be (``gpustack.limits.MAX_BYTES``, 1 MiB): a reader that reads it
#: whole shows in its memory.
LARGE_BYTES: Final = 40_000_000


def laughs() -> str:
    """Nine levels of nine aliases each: 387 million strings if a reader expands them."""
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for name, previous in zip("bcdefghi", "abcdefgh", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]")
    return "\n".join(lines) + "\n"


def write_large(path: Path) -> None:
    """:data:`LARGE_BYTES` of YAML comments, written a thousand lines at a time."""
    line = "# " + "x" * 77 + "\n"
    with path.open("w") as f:
        for _ in range(LARGE_BYTES // len(line) // 1000):
            f.write(line * 1000)
