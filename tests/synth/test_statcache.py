"""The stat cache proves a folder unchanged without reading it, and never vouches for a change.

Each case writes a cluster through the writer, then asks the fresh check's output pass which
folders hold what the index records, counting the folders it had to read: a proof from the
cache reads none; every change (content with its mtime set back, a file gone or added, an
index digest edited) is read and found; a folder as recent as the stamp is never recorded.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpustack.synth import fresh
from gpustack.synth.digest import cluster_digest, file_digest
from gpustack.synth.index import IndexEntry, OwnershipIndex, profile_ref, read_index
from gpustack.synth.statcache import CACHE_DIR, CACHE_FILE, FolderFacts, StatCache
from gpustack.synth.writer import apply, make_plan

from .objects import cluster

#: Shifts the stamp ten seconds ahead: no file written by a test is racy then.
LATER = 10 * 10**9


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The folders the fresh check read and hashed (rather than proved by the cache)."""
    folders: list[str] = []
    real = fresh._plain_digests

    def counting(folder: str) -> dict[str, str] | None:
        folders.append(os.path.basename(folder))
        return real(folder)

    monkeypatch.setattr(fresh, "_plain_digests", counting)
    yield folders


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clock ten seconds on: what a run finds once the writes' tick has long passed."""
    real = StatCache.stamp

    def later(self: StatCache) -> int | None:
        now = real(self)
        return None if now is None else now + LATER

    monkeypatch.setattr(StatCache, "stamp", later)


def written(tmp_path: Path, *names: str) -> tuple[Path, OwnershipIndex]:
    out = tmp_path / "dist"
    apply(make_plan(out, [cluster(n) for n in names]))
    index = read_index(out)
    assert index is not None
    return out, index


def fresh_names(out: Path, index: OwnershipIndex) -> set[str]:
    candidates = [(Path(n), n, e) for n, e in index.clusters.items()]
    found = fresh._fresh_outputs(candidates, str(out), index.clusters)
    return {f.name for f in found.values()}


def a_file(out: Path, name: str = "a") -> Path:
    return next(p for p in sorted((out / "clusters" / name).rglob("*.yaml")) if p.is_file())


@pytest.mark.usefixtures("settled")
def test_a_written_folder_is_proved_unchanged_without_reading_it(
    tmp_path: Path, reads: list[str]
) -> None:
    out, index = written(tmp_path, "a", "b")
    assert fresh_names(out, index) == {"a", "b"}
    assert reads == []


@pytest.mark.usefixtures("settled")
def test_an_edit_with_size_and_mtime_restored_is_read_and_found(
    tmp_path: Path, reads: list[str]
) -> None:
    out, index = written(tmp_path, "a", "b")
    path = a_file(out)
    before = path.stat()
    content = path.read_bytes()
    path.write_bytes(content[:-2] + (b"x\n" if content[-2:] != b"x\n" else b"y\n"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # touch -d back
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert fresh_names(out, index) == {"b"}
    assert reads == ["a"]


@pytest.mark.usefixtures("settled")
@pytest.mark.parametrize("change", ["delete", "add", "add a folder", "edit index digest"])
def test_every_other_change_is_read_and_found(
    tmp_path: Path, reads: list[str], change: str
) -> None:
    out, index = written(tmp_path, "a", "b")
    folder = out / "clusters" / "a"
    if change == "delete":
        a_file(out).unlink()
    elif change == "add":
        (folder / "extra.yaml").write_text("kind: ConfigMap\n")
    elif change == "add a folder":
        (folder / "empty").mkdir()
    else:  # the folder as written, the index's record of it not
        entry = index.clusters["a"]
        rel = sorted(entry.files)[0]
        files = {**entry.files, rel: "sha256:" + "0" * 64}
        index = OwnershipIndex({**index.clusters, "a": IndexEntry(entry.profile, files)})
    assert fresh_names(out, index) == {"b"}
    assert reads == ["a"]


@pytest.mark.usefixtures("settled")
def test_a_mode_change_is_read_then_proved_again(tmp_path: Path, reads: list[str]) -> None:
    out, index = written(tmp_path, "a")
    path = a_file(out)
    path.chmod(stat.S_IMODE(path.stat().st_mode) ^ stat.S_IXUSR)
    assert fresh_names(out, index) == {"a"}  # same bytes: still gpustack's output
    assert fresh_names(out, index) == {"a"}
    assert reads == ["a"]  # read once, recorded with its new facts


def test_a_folder_as_recent_as_the_stamp_is_never_recorded(
    tmp_path: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(StatCache, "stamp", lambda self: 0)  # every file is racy
    out, index = written(tmp_path, "a")
    assert StatCache.load(str(out)).keys == {}
    assert fresh_names(out, index) == {"a"}
    assert fresh_names(out, index) == {"a"}
    assert reads == ["a", "a"]


def test_remember_refuses_racy_folders() -> None:
    cache = StatCache("unused", {}, device=None)
    cache.remember("a", b"facts", newest=5, files={}, stamp=5)
    assert cache.keys == {}
    cache.remember("a", b"facts", newest=4, files={}, stamp=5)
    assert list(cache.keys) == ["a"]
    cache.remember("a", b"facts", newest=6, files={}, stamp=5)
    assert cache.keys == {}  # a racy folder also drops what was recorded


def test_the_stamp_is_the_filesystems_clock_after_earlier_writes(tmp_path: Path) -> None:
    out, _ = written(tmp_path, "a")
    path = a_file(out)
    path.write_bytes(path.read_bytes())
    stamp = StatCache.load(str(out)).stamp()
    assert stamp is not None
    assert stamp >= path.stat().st_ctime_ns


@pytest.mark.usefixtures("settled")
def test_check_reads_every_folder_whatever_the_cache_says(tmp_path: Path, reads: list[str]) -> None:
    """``synth --check`` (no recording) is the gate: a cache that would prove both folders is
    not consulted, and an edit with size and mtime restored is found by reading."""
    out, index = written(tmp_path, "a", "b")
    assert fresh_names(out, index) == {"a", "b"} and reads == []  # the cache proves both
    path = a_file(out)
    before = path.stat()
    content = path.read_bytes()
    path.write_bytes(content[:-2] + (b"x\n" if content[-2:] != b"x\n" else b"y\n"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    candidates = [(Path(n), n, e) for n, e in index.clusters.items()]
    found = fresh._fresh_outputs(candidates, str(out), index.clusters, record=False)
    assert {f.name for f in found.values()} == {"b"}
    assert sorted(reads) == ["a", "b"]


@pytest.mark.usefixtures("settled")
def test_under_base_the_cache_is_not_used(tmp_path: Path, reads: list[str]) -> None:
    out, index = written(tmp_path, "a")
    profile = tmp_path / "profiles" / "a.yaml"
    profile.parent.mkdir()
    profile.write_text("kind: Profile\n")
    ref = profile_ref(profile, out)
    inputs = {ref: file_digest(profile) or ""}
    files = index.clusters["a"].files
    entry = IndexEntry(ref, files, digest=cluster_digest("g", inputs), inputs=inputs)
    owned = OwnershipIndex({"a": entry})
    assert set(fresh.fresh_clusters([profile], out, owned, "g")) == {profile}
    assert reads == []
    base = fresh.fresh_clusters([profile], out, owned, "g", committed=lambda p, b: True)
    assert set(base) == {profile}
    assert reads == ["a"]


@pytest.mark.usefixtures("settled")
@pytest.mark.parametrize("junk", [b"not json", b'{"format": 99, "clusters": {}}', b"[]"])
def test_a_broken_cache_only_costs_a_read(tmp_path: Path, reads: list[str], junk: bytes) -> None:
    out, index = written(tmp_path, "a")
    (out / CACHE_DIR / CACHE_FILE).write_bytes(junk)
    assert fresh_names(out, index) == {"a"}
    assert reads == ["a"]
    assert fresh_names(out, index) == {"a"}
    assert reads == ["a"]  # recorded again


@pytest.mark.usefixtures("settled")
def test_a_cache_folder_that_is_a_link_is_not_followed(tmp_path: Path, reads: list[str]) -> None:
    out, index = written(tmp_path, "a")
    cache = out / CACHE_DIR
    elsewhere = tmp_path / "elsewhere"
    cache.rename(elsewhere)
    (elsewhere / CACHE_FILE).write_bytes(b"junk")
    cache.symlink_to(elsewhere)
    assert fresh_names(out, index) == {"a"}
    assert fresh_names(out, index) == {"a"}
    assert reads == ["a", "a"]  # neither read through the link nor written there
    assert (elsewhere / CACHE_FILE).read_bytes() == b"junk"


def test_the_cache_folder_ignores_itself_in_git(tmp_path: Path) -> None:
    out, _ = written(tmp_path, "a")
    assert (out / CACHE_DIR / ".gitignore").read_text().splitlines()[-1] == "*"


def test_folder_facts_refuse_links(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    facts = fresh.folder_facts(str(tmp_path))
    assert isinstance(facts, FolderFacts) and len(facts.rows) == 1
    (tmp_path / "link").symlink_to(tmp_path / "f")
    assert fresh.folder_facts(str(tmp_path)) is None
