"""synth.plan.holds compares a file with bytes a MiB at a time, exactly as reading it whole and
comparing would (what the index checks before planning and before writing rely on)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpustack.synth.plan import holds, read_plain

MIB = 1 << 20
BIG = bytes(range(256)) * (3 * MIB // 256) + b"tail"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", b""),
        (b"abc", b"abc"),
        (b"abc", b"abd"),
        (b"abc", b"abcd"),
        (b"abcd", b"abc"),
        (BIG, BIG),
        (BIG, BIG[:-1] + b"x"),
        (BIG, BIG[:MIB]),
        (BIG[:MIB], BIG),
        (BIG[: 2 * MIB], BIG[: 2 * MIB]),
        (b"abc", None),
    ],
)
def test_holds_is_reading_whole_and_comparing(
    tmp_path: Path, content: bytes, expected: bytes | None
) -> None:
    path = tmp_path / "index.json"
    path.write_bytes(content)
    assert holds(path, expected) == (read_plain(path) == expected)


@pytest.mark.parametrize("expected", [None, b"", b"abc"])
def test_what_is_no_plain_file(tmp_path: Path, expected: bytes | None) -> None:
    (tmp_path / "real").write_bytes(b"abc")
    os.symlink(tmp_path / "real", tmp_path / "link")
    (tmp_path / "folder").mkdir()
    for path in (tmp_path / "missing", tmp_path / "link", tmp_path / "folder"):
        assert read_plain(path) is None
        assert holds(path, expected) == (expected is None)
