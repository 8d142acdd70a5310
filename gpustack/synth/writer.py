"""Plan, apply and check writes of cluster folders into an output directory.

gpustack never deletes what it cannot prove it owns. A run holds a lock on the output folder
(:func:`locked`; a second run waits for it) while it first builds a :class:`Plan` (pure: reads
the output directory, writes nothing), which decides what gets written, what gets removed, whether
a folder belongs to someone else and which files in owned folders were changed by hand. Only then
does :func:`apply` touch the disk, and only if the plan is confirmed: removing a cluster folder
needs ``prune``, overwriting hand edits needs ``force``, and the index must still be the one the
plan was made from. Then:

1. every changed cluster is written into a hidden staging folder inside ``<out>/.gpustack/`` (never
   under ``clusters/``, the path GitOps tools sync); leftovers of a killed run are deleted first;
   any failure here removes the staged folders and leaves the output exactly as it was;
2. the index is updated to claim the new clusters *before* they appear, recording for each
   replaced folder the digests of what it held, so whatever a crash leaves (old or new folder)
   is still known as gpustack's;
3. each staged folder is swapped in (atomically where the OS allows; see :mod:`fsswap`); if a
   swap fails, the swaps already done are undone;
4. replaced folders, and owned clusters to prune, are deleted; the final index is written last
   (atomically, via rename).

Nothing outside ``<out>/clusters/<name>`` and ``<out>/.gpustack/`` is ever created or removed,
and ``<name>`` is always a DNS label (see :mod:`index`). Clusters that are not in the index are
never touched unless ``force`` is set.

The steps live in modules of their own: :mod:`.lock` (the lock), :mod:`.plan` (planning),
:mod:`.compare` (``--check``); this module applies a plan, and re-exports what callers use.
"""

from __future__ import annotations

import contextlib
import filecmp
import hashlib
import os
import posixpath
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO, Literal

from gpustack.synth import fsswap
from gpustack.synth.compare import Difference, cluster_differences, compare, leftovers
from gpustack.synth.errors import SynthError
from gpustack.synth.index import INDEX_DIR, IndexEntry, OwnershipIndex, index_path
from gpustack.synth.layout import ClusterOutput
from gpustack.synth.lock import LOCK_WAIT, locked
from gpustack.synth.plan import (
    CLUSTERS_DIR,
    Plan,
    SourcedCluster,
    holds,
    make_plan,
    read_plain,
)
from gpustack.synth.statcache import FolderFacts, StatCache

#: ``(clusters staged, clusters to stage)``: the write phase's progress.
Staged = Callable[[int, int], None]

__all__ = [
    "CLUSTERS_DIR",
    "LOCK_WAIT",
    "Difference",
    "Outcome",
    "Plan",
    "SourcedCluster",
    "Summary",
    "apply",
    "compare",
    "locked",
    "make_plan",
    "run",
]

#: Hand-edited files named in one error line; the rest are counted.
_NAMED = 5


@dataclass(frozen=True)
class Summary:
    """What :func:`apply` did, per cluster name."""

    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    #: Cluster folders deleted.
    removed: tuple[str, ...]
    #: Index entries dropped whose folder was already gone (nothing on disk was removed for
    #: them: counting them as removed said "100000 removed" of an index edited by hand).
    forgotten: tuple[str, ...] = ()


def _confirm(plan: Plan) -> None:
    """Refuse, in one line, what needs the user's say-so: pruning clusters, losing hand edits."""
    if plan.removals and not plan.prune:
        folders = "; ".join(f"{plan.cluster_dir(r.name)} ({r.reason})" for r in plan.removals)
        these = "this cluster folder" if len(plan.removals) == 1 else "these cluster folders"
        raise SynthError(
            f"this run would delete {these}: {folders}; pass --prune to delete (a GitOps tool "
            "that prunes then uninstalls the GPU stack from that cluster), or restore the "
            "profile; nothing was written"
        )
    if plan.hand_edits and not plan.force:
        named = ", ".join(f"{p} ({how})" for p, how in plan.hand_edits[:_NAMED])
        more = len(plan.hand_edits) - _NAMED
        rest = f" and {more} more" if more > 0 else ""
        raise SynthError(
            f"files gpustack wrote were edited by hand and would be lost: {named}{rest}; move "
            "the change into the profile or undo it (`git checkout -- <file>`), or pass --force "
            "to overwrite; nothing was written"
        )


def record_gitops(out: Path, fleet: str | None, written: OwnershipIndex | None = None) -> None:
    """Record, after ``<out>/gitops/`` was written (or found current), the fleet digest it was
    generated from; the caller holds the lock. Written last, so a crash before it only costs
    the next run a regeneration. ``written``: the index this run's :func:`apply` wrote (under
    the same lock), so a fleet's index of tens of MB is not read back and parsed again."""
    if written is None:
        path = index_path(out)
        data = read_plain(path)
        if data is None:
            return
        written = OwnershipIndex.from_bytes(data, str(path))
    if written.gitops != fleet:
        cache = StatCache.load(str(out))
        _record_index(out, _write_index(out, replace(written, gitops=fleet)), cache)
        cache.save()


def _write_index(out: Path, index: OwnershipIndex) -> str:
    """Write the index through a hidden copy renamed over it, streamed (a fleet's index is
    tens of MB: :meth:`OwnershipIndex.write_to`); an index already holding those bytes is left
    alone. Returns the sha256 of the bytes written (to record the index in the stat cache)."""
    path = index_path(out)
    tmp = fsswap.sibling(path, "tmp")
    try:
        with open(tmp, "xb") as f:
            sink = _Hashing(f)
            index.write_to(sink)  # type: ignore[arg-type]
        if not (path.is_file() and not path.is_symlink() and filecmp.cmp(tmp, path, False)):
            os.replace(tmp, path)
    except OSError as exc:
        # Name the index, not the hidden copy it was written to.
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    finally:
        if os.path.lexists(tmp):
            tmp.unlink()
    return sink.hash.hexdigest()


def _record_index(out: Path, written: str, cache: StatCache) -> None:
    """Record in ``cache`` the index just written, whose bytes hash to ``written``: read back
    after its stat facts, so a later no-op trusts it by its facts (:mod:`.statcache`)."""
    cache.remember_index(str(index_path(out)), lambda p: _file_sha256(p) == written)


def _index_current(plan: Plan, original: bytes | None, cache: StatCache) -> bool:
    """Whether the index in place is already what :func:`_write_index` would write for
    ``plan.after``: the very index it parsed to, proven unchanged since gpustack wrote or
    compared it by the stat cache; else compared as it is encoded (and then recorded)."""
    if original is None:
        return False
    path = str(index_path(plan.out))
    try:
        parsed: OwnershipIndex | None = OwnershipIndex.from_bytes(original, path)
    except SynthError:
        parsed = None
    if parsed == plan.after and cache.index_unchanged(path):
        return True
    recorded = cache.remember_index(path, lambda p: _same_file(plan.after, p))
    if recorded is not None:
        return recorded
    return _same_text(plan.after, original)


class _Sink:
    """What :class:`io.TextIOWrapper` asks of the binary stream :meth:`OwnershipIndex.write_to`
    writes to; subclasses say what ``write`` does with the bytes."""

    def write(self, data: bytes) -> int:
        raise NotImplementedError

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return False

    def flush(self) -> None:
        pass

    @property
    def closed(self) -> bool:
        return False


class _Hashing(_Sink):
    """A binary sink that writes to ``file`` and hashes what it writes."""

    def __init__(self, file: BinaryIO) -> None:
        self.file = file
        self.hash = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.hash.update(data)
        return self.file.write(data)


def _file_sha256(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


def _same_file(index: OwnershipIndex, path: str) -> bool:
    """Whether the file at ``path`` holds ``index``'s bytes, compared as they are encoded."""
    try:
        with open(path, "rb") as f:
            sink = _ComparingFile(f)
            index.write_to(sink)  # type: ignore[arg-type]
            return sink.same and not f.read(1)
    except OSError:
        return False


def _same_text(index: OwnershipIndex, current: bytes) -> bool:
    """Whether ``index``'s bytes are ``current``, compared piece by piece as they are encoded:
    a no-op of 10,000 clusters wrote its 55 MB index to a hidden copy only to compare it with
    the one in place (issue #37). Nothing is held beyond one piece."""
    sink = _Comparing(current)
    index.write_to(sink)  # type: ignore[arg-type]
    return sink.same and sink.at == len(current)


class _Comparing(_Sink):
    """A binary sink that compares what is written with ``expected`` (no copy is kept)."""

    def __init__(self, expected: bytes) -> None:
        self.expected = memoryview(expected)
        self.at = 0
        self.same = True

    def write(self, data: bytes) -> int:
        if self.same:
            end = self.at + len(data)
            self.same = end <= len(self.expected) and self.expected[self.at : end] == data
            self.at = end
        return len(data)


class _ComparingFile(_Comparing):
    """Like :class:`_Comparing`, reading what is expected from ``file`` as it goes (the file
    is tens of MB; only one piece of it is held)."""

    def __init__(self, file: BinaryIO) -> None:
        super().__init__(b"")
        self.file = file

    def write(self, data: bytes) -> int:
        if self.same:
            self.same = self.file.read(len(data)) == data
        return len(data)


def _aside(plan: Plan, name: str, tag: str) -> Path:
    """A hidden path for cluster ``name`` in ``<out>/.gpustack/``: outside ``clusters/``, so no
    GitOps tool syncs it, and on the same filesystem, so it can be swapped in."""
    return fsswap.sibling(plan.out / INDEX_DIR / name, tag)


def _stage(plan: Plan, c: ClusterOutput, facts: FolderFacts | None = None) -> Path:
    """Write ``c`` into a new hidden staging folder; removes it again on failure. ``facts``
    gathers each file's stat facts as written (for :mod:`.statcache`)."""
    target = plan.cluster_dir(c.name)
    staged = _aside(plan, c.name, "tmp")
    current = ""
    root = str(staged)
    made = {""}
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        staged.mkdir()
        # Plain strings and os calls: pathlib's parsing cost more than the writes for the ~40k
        # files of a fleet. Paths are the layout's checked relative POSIX paths.
        for f in c.files:
            current = f.path
            folder = posixpath.dirname(f.path)
            if folder not in made:  # creating entries is the slow part on most disks
                os.makedirs(os.path.join(root, folder), exist_ok=True)
                made.add(folder)
            fd = os.open(os.path.join(root, f.path), flags, 0o666)
            try:
                view = memoryview(f.content)
                while view:
                    view = view[os.write(fd, view) :]
                if facts is not None:
                    facts.add(f.path, os.fstat(fd))
            finally:
                os.close(fd)
    except OSError as exc:
        _discard(staged)
        # Name the file the user knows, not the hidden staging copy.
        raise OSError(
            exc.errno, exc.strerror, str(target / current if current else target)
        ) from exc
    except BaseException:
        _discard(staged)
        raise
    return staged


def _discard(staged: Path) -> None:
    """Remove a staging folder if it was created (on a read-only disk even a missing one's
    unlink fails, and that error would hide the real one)."""
    if os.path.lexists(staged):
        fsswap.remove(staged)


def _stage_all(
    plan: Plan,
    outputs: Sequence[ClusterOutput],
    on_staged: Staged | None = None,
    written: dict[str, tuple[bytes, int]] | None = None,
) -> dict[str, Path]:
    """Stage every cluster (``on_staged(done, total)`` after each, for a progress line); on any
    failure, remove the ones already staged and raise.

    Serial on purpose: writing clusters from a thread pool measured no faster (creating entries
    is bound by the filesystem's journal, not by Python). ``written`` gets each cluster's stat
    facts digest and newest time (:mod:`.statcache`).
    """
    staged: dict[str, Path] = {}
    try:
        for c in outputs:
            facts = FolderFacts() if written is not None else None
            staged[c.name] = _stage(plan, c, facts)
            if written is not None and facts is not None:
                written[c.name] = (facts.digest(), facts.newest)
            if on_staged is not None:
                on_staged(len(staged), len(outputs))
    except OSError as exc:
        for path in staged.values():
            fsswap.remove(path)
        where = exc.filename or plan.out
        raise SynthError(
            f"cannot write {where}: {exc.strerror}; {plan.out} was left unchanged"
        ) from exc
    except BaseException:  # an interrupt: no staged folder is left behind either
        for path in staged.values():
            fsswap.remove(path)
        raise
    return staged


def apply(plan: Plan, on_staged: Staged | None = None) -> Summary:
    """Carry out ``plan``; on failure the output directory is left as it was.

    Takes the output folder's lock unless this thread holds it already (as :func:`run` does
    around planning, too), and refuses a plan made from an index that has changed since.
    """
    _confirm(plan)
    out = plan.out
    created = [p for p in (out, out / INDEX_DIR, out / CLUSTERS_DIR) if not os.path.lexists(p)]
    try:
        with locked(out):
            return _apply_locked(plan, on_staged)
    except SynthError:
        for folder in reversed(created):  # a failed first run leaves no trace either
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _restore_index(out: Path, original: bytes | None) -> None:
    path = index_path(out)
    if original is None:
        # There was no index file: remove the one this run wrote, but never what stood in its
        # way (a folder named index.json is the user's to sort out).
        if path.is_symlink() or path.is_file():
            path.unlink()
    elif read_plain(path) != original:
        tmp = fsswap.sibling(path, "tmp")
        tmp.write_bytes(original)
        os.replace(tmp, path)


def _prepare(plan: Plan) -> bytes | None:
    """Refuse an index changed since planning, make the output's folders and clear what an
    interrupted run left; the index as it was (to restore on failure)."""
    out = plan.out
    if not holds(index_path(out), plan.before_bytes):
        raise SynthError(
            f"{index_path(out)} changed while this run was planning (another gpustack synth?); "
            "run again"
        )
    original_index = plan.before_bytes  # the same bytes: one copy held, not two
    try:
        (out / INDEX_DIR).mkdir(parents=True, exist_ok=True)
        (out / CLUSTERS_DIR).mkdir(exist_ok=True)
    except OSError as exc:
        raise SynthError(f"cannot create {exc.filename or out}: {exc.strerror}") from exc
    for p in leftovers(out):
        fsswap.remove(p)
    return original_index


def _swap_all(
    plan: Plan,
    staged: dict[str, Path],
    claimed: OwnershipIndex,
    original_index: bytes | None,
) -> list[tuple[str, Path | None]]:
    """Write the index claiming every folder, then swap each staged folder in; on failure undo
    the swaps and restore the index. Each cluster's folder it replaced (to remove)."""
    out = plan.out
    swapped: list[tuple[str, Path | None]] = []
    try:
        _write_index(out, claimed)
        for name, path in staged.items():
            swapped.append((name, fsswap.swap_in(path, plan.cluster_dir(name))))
    except BaseException as exc:  # an OSError, or an interrupt: undo the swaps done so far
        for name, old in reversed(swapped):
            fsswap.swap_back(plan.cluster_dir(name), old, staged[name])
        for path in staged.values():
            if os.path.lexists(path):
                fsswap.remove(path)
        _restore_index(out, original_index)
        if not isinstance(exc, OSError):
            raise
        where = exc.filename or out
        raise SynthError(
            f"cannot replace {where}: {exc.strerror}; {out} was left unchanged"
        ) from exc
    return swapped


def _remember(plan: Plan, written: Mapping[str, tuple[bytes, int]], index: str) -> None:
    """Record the folders just written in the stat cache (:mod:`.statcache`), so the next run
    proves them unchanged without reading them; the stamp is taken after every write. And the
    index, whose written bytes hash to ``index``."""
    cache = StatCache.load(str(plan.out))
    _record_index(plan.out, index, cache)
    cache.keep_only(plan.after.clusters)
    stamp = cache.stamp() if written else None
    for name, (facts, newest) in written.items():
        entry = plan.after.clusters.get(name)
        if entry is None or stamp is None:
            cache.forget(name)
        else:
            cache.remember(name, facts, newest, entry.files, stamp)
    cache.save()


def _remove_clusters(plan: Plan) -> list[str]:
    """Remove the folders of the clusters the plan drops; the names of those there were."""
    removed: list[str] = []
    for name in plan.remove:
        folder = plan.cluster_dir(name)
        if os.path.lexists(folder):
            doomed = _aside(plan, name, "old")
            os.rename(folder, doomed)  # the folder vanishes in one step
            fsswap.remove(doomed)
            removed.append(name)
    return removed


def _apply_locked(plan: Plan, on_staged: Staged | None = None) -> Summary:
    out = plan.out
    original_index = _prepare(plan)
    changed = [sc for sc in plan.write if cluster_differences(plan, sc.output)]
    changed_names = {sc.output.name for sc in changed}
    unchanged = sorted(
        [sc.output.name for sc in plan.write if sc.output.name not in changed_names] + [*plan.kept]
    )

    written: dict[str, tuple[bytes, int]] = {}
    staged = _stage_all(plan, [sc.output for sc in changed], on_staged, written)

    # Claim every folder we are about to create before it exists; a folder about to be replaced
    # is known by both its old and its new digests until the final index is written.
    claimed = dict(plan.before.clusters)
    for name, entry in plan.after.clusters.items():
        previous = plan.current.get(name, {}) if name in changed_names else {}
        claimed[name] = replace(entry, previous=previous)
    if not staged and not plan.remove:  # nothing to swap or delete: only the final index
        cache = StatCache.load(str(out))
        if not _index_current(plan, original_index, cache):
            _record_index(out, _write_index(out, plan.after), cache)
        cache.save()
        return Summary(written=(), unchanged=tuple(unchanged), removed=())
    swapped = _swap_all(plan, staged, OwnershipIndex(clusters=claimed), original_index)
    for _, old in swapped:
        if old is not None:
            fsswap.remove(old)
    removed = _remove_clusters(plan)
    _remember(plan, written, _write_index(out, plan.after))

    return Summary(
        written=tuple(sc.output.name for sc in changed),
        unchanged=tuple(unchanged),
        removed=tuple(removed),
        forgotten=tuple(n for n in plan.remove if n not in removed),
    )


@dataclass(frozen=True)
class Outcome:
    """What :func:`run` did: the plan, and the differences (``check``) or the summary."""

    plan: Plan
    differences: tuple[Difference, ...] = ()
    summary: Summary | None = None


def run(
    out: Path,
    clusters: Sequence[SourcedCluster],
    *,
    check: bool = False,
    force: bool = False,
    prune: bool = False,
    wait: float = LOCK_WAIT,
    on_wait: Callable[[], None] | None = None,
    kept: Mapping[str, IndexEntry] | None = None,
    index_bytes: bytes | None | Literal[False] = False,
    on_staged: Staged | None = None,
    not_a_profile: Callable[[str], str | None] | None = None,
    index: OwnershipIndex | None = None,
) -> Outcome:
    """Plan and apply (or, with ``check``, plan and compare) under one lock on ``out``; see
    :func:`make_plan` for ``kept``, ``index_bytes`` and ``index``, and :func:`_stage_all` for
    ``on_staged``."""
    with locked(out, shared=check, wait=wait, on_wait=on_wait):
        plan = make_plan(
            out,
            clusters,
            force=force,
            prune=prune,
            kept=kept,
            index_bytes=index_bytes,
            not_a_profile=not_a_profile,
            index=index,
        )
        if check:
            return Outcome(plan, differences=tuple(compare(plan)))
        return Outcome(plan, summary=apply(plan, on_staged))
