"""Which clusters need no synthesis: inputs, generator and folder all as the index recorded.

A profile file is *fresh* when the index has a cluster made from it whose recorded digest
(:mod:`gpustack.synth.digest`) equals the digest of today's generator and today's bytes of every
file the profile was read from, and whose folder holds exactly the files the index records (no
interrupted swap either). Such a profile is not read, validated or synthesized: the run that
recorded it did all three on the very same bytes with the very same gpustack, and its folder is
provably what they produced. Anything else (a changed base, a new gpustack, a hand edit in the
folder, a file added there) makes the cluster go the whole way again, so hand edits are still
found and refused exactly as before.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from gpustack.synth.digest import cluster_digest
from gpustack.synth.index import (
    PACKAGED_DEFAULT,
    IndexEntry,
    OwnershipIndex,
    profile_ref,
    ref_file,
)
from gpustack.synth.layout import KUSTOMIZATION_FILE, ClusterOutput, ManifestFile
from gpustack.synth.plan import CLUSTERS_DIR
from gpustack.synth.sources import packaged_default_profile
from gpustack.synth.statcache import StatCache, folder_facts

#: Whether a file's bytes are those committed at the trusted base (``--base``).
Committed = Callable[[Path, bytes], bool]


@dataclass(frozen=True)
class Fresh:
    """A cluster kept as it is: its name, the profile file and its (unchanged) index entry."""

    name: str
    path: Path
    entry: IndexEntry


def input_ref(path: Path, out: Path, *, packaged: bool = False) -> str:
    """How the index names a file a profile was read from (see :func:`profile_ref`)."""
    return profile_ref(None if packaged else path, out)


def ref_path(ref: str, out: Path) -> Path:
    """The file an input reference names."""
    return packaged_default_profile() if ref == PACKAGED_DEFAULT else ref_file(ref, out)


def input_digests(
    refs: Sequence[str],
    out: Path,
    committed: Committed | None = None,
    *,
    root: str | None = None,
) -> dict[str, str] | None:
    """Today's digest of each input; ``None`` when one is not a readable regular file, or,
    given ``committed``, is not the file committed at the base (see :mod:`.baseline`).
    ``root``: ``out`` resolved (:func:`ref_file`), when the caller resolved it once for many
    calls (10,000 ``realpath`` calls were a tenth of a fleet's no-op)."""
    base = os.path.realpath(out) if root is None else root
    found: dict[str, str] = {}
    for ref in refs:
        if ref == PACKAGED_DEFAULT:
            path = str(packaged_default_profile())
        else:
            path = os.path.join(base, ref)
        content = _read_regular(path)
        if content is None:
            return None
        if committed is not None and not committed(Path(path), content):
            return None
        found[ref] = "sha256:" + hashlib.sha256(content).hexdigest()
    return found


def _read_regular(path: str) -> bytes | None:
    """The bytes of the regular file at ``path`` (links followed, as ``is_file`` does); ``None``
    for anything else or an unreadable one. Opened without blocking: a FIFO is not waited on."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def fresh_clusters(
    files: Sequence[Path],
    out: Path,
    index: OwnershipIndex | None,
    generator: str,
    *,
    packaged: bool = False,
    on_stale: Callable[[int], None] | None = None,
    committed: Committed | None = None,
    record: bool = True,
) -> dict[Path, Fresh]:
    """The fresh ones among profile ``files`` (see the module docstring), by file; given
    ``committed``, only those whose every input is also the file committed at the base.
    ``record``: use the stat cache (:mod:`.statcache`) and update it with the folders read.
    ``--check`` passes False: it is the gate a pull request's CI runs, so it trusts no local
    record (a cache committed by force, or left by an earlier checkout) and reads every file.

    Two passes: the inputs' digests first (a few files per profile), then the outputs of the
    profiles that passed (every file of their folders, most of the time). In between,
    ``on_stale`` learns how many profiles certainly need synthesis, so the caller can start
    cdk8s while this reads the output folders.
    """
    if index is None:
        if on_stale is not None and files:
            on_stale(len(files))
        return {}
    by_ref = {e.profile: (n, e) for n, e in index.clusters.items() if e.digest is not None}
    candidates: list[tuple[Path, str, IndexEntry]] = []
    out_real = os.path.realpath(out)
    for path in files:
        # profile_ref's reference, with ``out`` resolved once rather than per file
        ref = (
            PACKAGED_DEFAULT
            if packaged
            else Path(os.path.relpath(os.path.abspath(path), out_real)).as_posix()
        )
        hit = by_ref.get(ref)
        if hit is None:
            continue
        name, entry = hit
        if entry.previous or ref not in entry.inputs:
            continue
        now = input_digests(list(entry.inputs), out, committed, root=out_real)
        if now != entry.inputs or cluster_digest(generator, now) != entry.digest:
            continue
        candidates.append((path, name, entry))
    if on_stale is not None and len(candidates) < len(files):
        on_stale(len(files) - len(candidates))
    if committed is not None:  # under --base the checkout is the change's: read every file
        return {
            path: Fresh(name, path, entry)
            for path, name, entry in candidates
            if _plain_digests(os.path.join(out, CLUSTERS_DIR, name)) == entry.files
        }
    return _fresh_outputs(candidates, str(out), index.clusters, record=record)


def _fresh_outputs(
    candidates: list[tuple[Path, str, IndexEntry]],
    out: str,
    owned: Iterable[str],
    *,
    record: bool = True,
) -> dict[Path, Fresh]:
    """The candidates whose folders hold what the index records: proven by the stat cache
    (:mod:`.statcache`) where it can, else read and hashed (and then recorded in the cache).
    Without ``record`` no cache is read either: every folder is read and hashed."""
    cache = StatCache.load(out) if record else StatCache(out, {}, None)
    cache.keep_only(owned)
    stamp: int | None = None
    fresh: dict[Path, Fresh] = {}
    for path, name, entry in candidates:
        folder = os.path.join(out, CLUSTERS_DIR, name)
        facts = folder_facts(folder)
        if facts is not None and cache.unchanged(name, facts, entry.files):
            fresh[path] = Fresh(name, path, entry)
            continue
        if stamp is None and record:  # the clock before the facts recorded below
            stamp = cache.stamp() or -1
            facts = folder_facts(folder)
        if _plain_digests(folder) != entry.files:
            cache.forget(name)
            continue
        if facts is not None and stamp is not None and stamp > 0:
            cache.remember(name, facts.digest(), facts.newest, entry.files, stamp)
        fresh[path] = Fresh(name, path, entry)
    if record:
        cache.save()
    return fresh


def _plain_digests(folder: str) -> dict[str, str] | None:
    """Like :func:`~gpustack.synth.plan.digests_of`, but fast and only for the fresh check:
    ``None`` as soon as anything is not a plain file or folder (gpustack never writes one)."""
    found: dict[str, str] = {}
    todo = [("", folder)]
    while todo:
        prefix, here = todo.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            return None
        if not entries and prefix:
            return None  # an empty folder: gpustack writes none (a submodule checks out so)
        for e in entries:
            rel = prefix + e.name
            if e.is_symlink():
                return None
            if e.is_dir():
                todo.append((rel + "/", e.path))
            elif e.is_file():
                try:
                    found[rel] = "sha256:" + hashlib.sha256(_read(e.path)).hexdigest()
                except OSError:
                    return None
            else:
                return None
    return found


def _read(path: str) -> bytes:
    """A file's bytes through plain ``os.read``: half the cost of ``open().read()`` for the
    tens of thousands of small files a fleet's fresh check reads (no buffered file object)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks)


def kept_output(out: Path, name: str) -> ClusterOutput:
    """A fresh cluster's files as :func:`~gpustack.synth.layout.layout_cluster` made them, read
    back from its folder (manifests in kustomization order, the kustomization last)."""
    folder = out / CLUSTERS_DIR / name
    kustomization = (folder / KUSTOMIZATION_FILE).read_bytes()
    resources = yaml.safe_load(kustomization).get("resources", [])
    files = [ManifestFile(rel, (folder / rel).read_bytes()) for rel in resources]
    files.append(ManifestFile(KUSTOMIZATION_FILE, kustomization))
    return ClusterOutput(name=name, files=tuple(files))
