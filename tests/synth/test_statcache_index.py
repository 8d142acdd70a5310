"""The stat cache vouches for the index file too: a no-op whose index is as gpustack last wrote
or compared it does not encode the index again (a 55 MB encode for 10,000 clusters), and every
change to the file (other bytes that parse the same, the same bytes rewritten, a record of
another file) is compared again, and rewritten when it is not what gpustack writes."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpustack.synth.index import OwnershipIndex, index_path
from gpustack.synth.statcache import CACHE_DIR, CACHE_FILE, StatCache
from gpustack.synth.writer import apply, make_plan

from .objects import cluster


@pytest.fixture
def encodes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many times an index was encoded (written, or compared as it was encoded)."""
    calls: list[int] = []
    real = OwnershipIndex.write_to

    def counting(self: OwnershipIndex, stream: object) -> None:
        calls.append(len(self.clusters))
        real(self, stream)  # type: ignore[arg-type]

    monkeypatch.setattr(OwnershipIndex, "write_to", counting)
    yield calls


def synth(out: Path, *names: str) -> None:
    apply(make_plan(out, [cluster(n) for n in names]))


def recorded(out: Path) -> str | None:
    doc = json.loads((out / CACHE_DIR / CACHE_FILE).read_bytes())
    index = doc.get("index")
    assert index is None or isinstance(index, str)
    return index


def test_a_written_index_is_recorded_and_a_no_op_does_not_encode_it(
    tmp_path: Path, encodes: list[int]
) -> None:
    out = tmp_path / "dist"
    synth(out, "a", "b")
    assert encodes  # written (the claims while swapping, then the final index)
    writes = len(encodes)
    assert recorded(out) is not None
    before = index_path(out).read_bytes()
    synth(out, "a", "b")
    assert len(encodes) == writes  # proved by its stat facts: not encoded again
    assert index_path(out).read_bytes() == before


def test_the_same_bytes_written_again_are_compared_once_then_trusted(
    tmp_path: Path, encodes: list[int]
) -> None:
    out = tmp_path / "dist"
    synth(out, "a")
    writes = len(encodes)
    first = recorded(out)
    path = index_path(out)
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data)  # as a checkout writes it: a new inode and ctime
    synth(out, "a")
    assert len(encodes) == writes + 1  # compared as it was encoded, not written
    assert path.read_bytes() == data
    assert recorded(out) not in (None, first)
    synth(out, "a")
    assert len(encodes) == writes + 1


def test_an_index_reformatted_by_hand_is_rewritten_as_gpustack_writes_it(
    tmp_path: Path, encodes: list[int]
) -> None:
    out = tmp_path / "dist"
    synth(out, "a")
    writes = len(encodes)
    path = index_path(out)
    canonical = path.read_bytes()
    path.write_text(json.dumps(json.loads(canonical)))  # parses the same, other bytes
    synth(out, "a")
    assert path.read_bytes() == canonical
    assert len(encodes) == writes + 2  # compared (differs), written again


def test_a_record_of_another_file_is_not_trusted(tmp_path: Path, encodes: list[int]) -> None:
    """The key is the file's facts: the record of the index of one output folder vouches for
    nothing in another, even with the same bytes (copied record, copied index)."""
    one, two = tmp_path / "one", tmp_path / "two"
    synth(one, "a")
    synth(two, "a")
    path = index_path(two)
    path.write_text(json.dumps(json.loads(path.read_bytes())))
    os.replace(one / CACHE_DIR / CACHE_FILE, two / CACHE_DIR / CACHE_FILE)
    synth(two, "a")
    assert path.read_bytes() == index_path(one).read_bytes()


def test_a_racy_index_is_not_recorded(tmp_path: Path) -> None:
    """Facts as recent as the stamp are never recorded, however long the wait allows."""
    out = tmp_path / "dist"
    synth(out, "a")
    cache = StatCache.load(str(out))
    cache.stamp = lambda: 0  # type: ignore[method-assign]  # a clock before every file
    assert cache.remember_index(str(index_path(out)), lambda p: True, wait=0) is None
    assert cache.index is None


def test_a_failed_check_drops_the_record(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    synth(out, "a")
    cache = StatCache.load(str(out))
    assert cache.index is not None
    assert cache.remember_index(str(index_path(out)), lambda p: False) is False
    assert cache.index is None
