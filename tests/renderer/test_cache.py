"""The renderer's cache in one process: a hit only for the same bytes on the same day, nothing
kept that may have changed while it rendered, and its size bounded."""

from __future__ import annotations

import time
from datetime import date
from pathlib import Path

import pytest

from gpustack.renderer import cache
from gpustack.renderer.cache import OutputCache

FILES = ["a.yaml", "_bases/b.yaml"]


@pytest.fixture
def src(tmp_path: Path) -> Path:
    """An unpacked source path: a profile and the base it extends."""
    folder = tmp_path / "profiles"
    (folder / "_bases").mkdir(parents=True)
    (folder / "a.yaml").write_text("extends: _bases/b.yaml\n")
    (folder / "_bases" / "b.yaml").write_text("cluster: {}\n")
    return folder


def _after_the_files() -> int:
    """A render start the files predate by more than the racy gap (they were written before)."""
    return time.time_ns() + 2 * cache.RACY_NS


def test_the_same_bytes_in_a_fresh_unpack_are_a_hit(src: Path, tmp_path: Path) -> None:
    kept = OutputCache("gen", 1 << 20)
    kept.store(str(src), "a.yaml", FILES, b"manifests", _after_the_files())
    again = tmp_path / "again" / "profiles"
    again.parent.mkdir()
    src.rename(again)  # Argo CD unpacks each call into a new folder
    assert kept.lookup(str(again), "a.yaml") == b"manifests"


def test_a_changed_base_is_a_miss(src: Path) -> None:
    kept = OutputCache("gen", 1 << 20)
    kept.store(str(src), "a.yaml", FILES, b"manifests", _after_the_files())
    (src / "_bases" / "b.yaml").write_text("cluster: {x: 1}\n")
    assert kept.lookup(str(src), "a.yaml") is None


def test_another_generator_or_day_is_another_key(src: Path) -> None:
    today = date(2026, 12, 7)
    key = cache.input_key("gen", str(src), "a.yaml", FILES, today)
    assert key is not None
    assert cache.input_key("gen2", str(src), "a.yaml", FILES, today) != key
    assert cache.input_key("gen", str(src), "a.yaml", FILES, date(2026, 12, 8)) != key


def test_a_render_whose_file_changed_after_it_began_is_not_kept(src: Path) -> None:
    kept = OutputCache("gen", 1 << 20)
    started = time.time_ns() - 10 * cache.RACY_NS  # the files are written after this
    (src / "a.yaml").write_text("extends: _bases/b.yaml\n# edited while rendering\n")
    kept.store(str(src), "a.yaml", FILES, b"manifests", started)
    assert kept.lookup(str(src), "a.yaml") is None


def test_the_least_recently_used_output_leaves_first(src: Path) -> None:
    kept = OutputCache("gen", 10)
    for name, body in (("a.yaml", b"123456"), ("c.yaml", b"abcdef")):
        (src / name).write_text(f"# {name}\n")
        kept.store(str(src), name, [name], body, _after_the_files())
    assert kept.lookup(str(src), "a.yaml") is None
    assert kept.lookup(str(src), "c.yaml") == b"abcdef"
    assert kept.size == 6
