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
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from gpustack.synth import fsswap
from gpustack.synth.errors import SynthError
from gpustack.synth.index import (
    CLUSTER_NAME,
    INDEX_DIR,
    PACKAGED_DEFAULT,
    Digests,
    IndexEntry,
    OwnershipIndex,
    digest,
    index_path,
    profile_exists,
    read_index,
)
from gpustack.synth.layout import ClusterOutput

CLUSTERS_DIR = "clusters"
_LEFTOVER_MARKERS = (".gpustack-tmp-", ".gpustack-old-")
#: Seconds a run waits for another one writing the same output folder before it gives up.
LOCK_WAIT = 300.0
#: Hand-edited files named in one error line; the rest are counted.
_NAMED = 5
#: Digest recorded for a symbolic link: gpustack never writes one, so it is always a hand edit.
_LINK = "symlink"


@dataclass(frozen=True)
class SourcedCluster:
    """A cluster's files and the index reference of the profile that produced them."""

    output: ClusterOutput
    profile: str


@dataclass(frozen=True)
class Removal:
    """An owned cluster folder this run would delete, and why."""

    name: str
    reason: str


@dataclass(frozen=True)
class Plan:
    """What a run will do to ``out``; built by :func:`make_plan`, carried out by :func:`apply`."""

    out: Path
    write: tuple[SourcedCluster, ...]
    remove: tuple[str, ...]
    before: OwnershipIndex
    after: OwnershipIndex
    #: The index file's bytes when the plan was made (``None``: there was none).
    before_bytes: bytes | None = None
    force: bool = False
    prune: bool = False
    #: Owned folders to delete that still exist (deleting them needs ``prune``).
    removals: tuple[Removal, ...] = ()
    #: Files in owned folders that were changed or added by hand and would be lost.
    overwrites: tuple[Path, ...] = ()
    hand_edits: tuple[tuple[Path, str], ...] = ()
    #: Digests of what each folder to replace holds now (recorded while it is swapped).
    current: Mapping[str, Digests] = field(default_factory=dict)

    def cluster_dir(self, name: str) -> Path:
        """``<out>/clusters/<name>``; refuses any name that is not one folder right inside."""
        if not CLUSTER_NAME.fullmatch(name):
            raise SynthError(f"cluster name {name!r} is no folder inside {self.out}/clusters")
        return self.out / CLUSTERS_DIR / name


@dataclass(frozen=True)
class Difference:
    """One file that ``--check`` found out of date (or a leftover of a killed run)."""

    kind: Literal["differs", "missing", "extra", "leftover"]
    path: Path


@dataclass(frozen=True)
class Summary:
    """What :func:`apply` did, per cluster name."""

    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[str, ...]


#: Placeholders that keep an empty folder in git; they don't make a folder someone else's.
_PLACEHOLDERS = frozenset({".gitkeep", ".keep"})


def _is_empty_dir(path: Path) -> bool:
    return all(p.name in _PLACEHOLDERS for p in path.iterdir())


def shown(ref: str, out: Path) -> str:
    """A profile reference as the user can find it: index references are relative to ``out``,
    which means nothing on the command line, so show them relative to where ``out`` is."""
    if ref == PACKAGED_DEFAULT:
        return "the packaged default profile"
    return os.path.normpath(os.path.join(out, ref))


def _check_output(out: Path) -> None:
    existing = next((p for p in (out, *out.parents) if os.path.lexists(p)), None)
    if existing is not None and not existing.is_dir():
        what = "" if existing == out else f" ({existing} is a file)"
        raise SynthError(f"output {out} is not a folder{what}; choose another --out")


def make_plan(
    out: Path,
    clusters: Sequence[SourcedCluster],
    *,
    force: bool = False,
    prune: bool = False,
) -> Plan:
    """Decide what to write and remove; raises :class:`SynthError` for anything unsafe.

    Removals and hand edits are recorded, not refused, so ``--check`` can list them; :func:`apply`
    refuses them unless ``prune`` (removals) or ``force`` (hand edits) is set.
    """
    seen: dict[str, str] = {}
    for c in clusters:
        if not CLUSTER_NAME.fullmatch(c.output.name):
            raise SynthError(f"cluster name {c.output.name!r} can't be a folder name")
        other = seen.get(c.output.name)
        if other is not None:
            raise SynthError(
                f"profiles {shown(other, out)} and {shown(c.profile, out)} both define cluster "
                f"{c.output.name!r} (metadata.name); give each profile its own name"
            )
        seen[c.output.name] = c.profile

    _check_output(out)
    clusters_root = out / CLUSTERS_DIR
    if clusters_root.is_symlink() or (clusters_root.exists() and not clusters_root.is_dir()):
        raise SynthError(f"{clusters_root} must be a plain folder, not a link or a file")

    before_bytes = _read(index_path(out))
    try:
        before = read_index(out)
    except SynthError:
        if not force:
            raise
        before = None
    if before is None:
        if out.is_dir() and not _is_empty_dir(out) and not force:
            raise SynthError(
                f"{out} is not empty and was not written by gpustack (no {index_path(out)}); "
                "choose an empty --out, or pass --force to take it over"
            )
        before = OwnershipIndex()

    run_profiles = {c.profile for c in clusters}
    for c in clusters:
        name = c.output.name
        target = clusters_root / name
        owner = before.clusters.get(name)
        if owner is None and os.path.lexists(target) and not force:
            raise SynthError(
                f"{target} exists but gpustack did not create it; move it away, or pass --force "
                "to replace it"
            )
        if (
            owner is not None
            and owner.profile != c.profile
            and owner.profile not in run_profiles
            and profile_exists(owner.profile, out)
        ):
            raise SynthError(
                f"cluster {name!r} from {shown(c.profile, out)} is already synthesized from "
                f"{shown(owner.profile, out)}, which this run does not include; rename one of "
                "them, or synthesize both together"
            )

    produced = {c.output.name for c in clusters}
    remove: list[str] = []
    removals: list[Removal] = []
    kept: dict[str, IndexEntry] = {}
    for name, entry in sorted(before.clusters.items()):
        if name in produced:
            continue
        if entry.profile in run_profiles or not profile_exists(entry.profile, out):
            remove.append(name)  # its profile was renamed, now names another cluster, or is gone
            if os.path.lexists(clusters_root / name):
                removals.append(Removal(name, _why_removed(entry.profile, run_profiles, out)))
        else:
            kept[name] = entry  # its profile exists but was not part of this run

    after = dict(kept)
    for c in clusters:
        files = {f.path: digest(f.content) for f in c.output.files}
        after[c.output.name] = IndexEntry(profile=c.profile, files=files)

    # What the folders to replace or delete hold now, and which of it gpustack did not write.
    current: dict[str, Digests] = {}
    edits: list[tuple[Path, str]] = []
    targets = [(c.output.name, after[c.output.name].files) for c in clusters]
    for name, new in [*targets, *((n, {}) for n in remove)]:
        folder = clusters_root / name
        found = _digests(folder)
        if not found:
            continue
        current[name] = found
        owner = before.clusters.get(name)
        if owner is None:
            continue  # a foreign folder, refused above unless forced
        for rel, d in sorted(found.items()):
            if new.get(rel) == d or owner.knows(rel, d):
                continue  # gpustack's own file, or exactly what it is about to write
            known = rel in owner.files or rel in owner.previous
            edits.append((folder / rel, "changed" if known else "added"))

    return Plan(
        out=out,
        write=tuple(clusters),
        remove=tuple(remove),
        before=before,
        after=OwnershipIndex(clusters=after),
        before_bytes=before_bytes,
        force=force,
        prune=prune,
        removals=tuple(removals),
        overwrites=tuple(p for p, _ in edits),
        hand_edits=tuple(edits),
        current=current,
    )


def _why_removed(ref: str, run_profiles: set[str], out: Path) -> str:
    if ref == PACKAGED_DEFAULT:
        return "it came from the packaged default profile, which this run does not use"
    if ref in run_profiles:
        return f"{shown(ref, out)} now names another cluster"
    return f"its profile {shown(ref, out)} is gone"


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


def _digests(folder: Path) -> dict[str, str]:
    """Digest of every file under ``folder`` (a symlink gets :data:`_LINK`)."""
    found: dict[str, str] = {}
    for rel, p in _existing_files(folder).items():
        content = _read(p)
        found[rel] = _LINK if content is None else digest(content)
    return found


def _existing_files(folder: Path) -> dict[str, Path]:
    """Every file under ``folder`` by its POSIX path relative to it (symlinks count as files)."""
    found: dict[str, Path] = {}
    if not folder.is_dir() or folder.is_symlink():
        return found
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for n in sorted(names) + [d for d in dirs if Path(root, d).is_symlink()]:
            p = Path(root, n)
            found[p.relative_to(folder).as_posix()] = p
    return found


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def _cluster_differences(plan: Plan, c: ClusterOutput) -> list[Difference]:
    folder = plan.cluster_dir(c.name)
    if os.path.lexists(folder) and (folder.is_symlink() or not folder.is_dir()):
        return [Difference("differs", folder)]
    existing = _existing_files(folder)
    diffs: list[Difference] = []
    for f in c.files:
        path = folder / f.path
        if f.path not in existing:
            diffs.append(Difference("missing", path))
        elif _read(path) != f.content:
            diffs.append(Difference("differs", path))
    wanted = set(c.paths())
    diffs.extend(Difference("extra", p) for rel, p in existing.items() if rel not in wanted)
    return diffs


def _leftovers(out: Path) -> list[Path]:
    """Staging folders and index copies a killed run left behind (hidden, and ours by name)."""
    found: list[Path] = []
    for folder in (out / CLUSTERS_DIR, out / INDEX_DIR):
        if folder.is_dir() and not folder.is_symlink():
            found.extend(
                p
                for p in folder.iterdir()
                if p.name.startswith(".") and any(m in p.name for m in _LEFTOVER_MARKERS)
            )
    return sorted(found)


def compare(plan: Plan) -> list[Difference]:
    """Every file :func:`apply` would change, and every leftover of a killed run it would
    delete, in a stable order; empty when up to date."""
    diffs: list[Difference] = []
    for sc in plan.write:
        diffs.extend(_cluster_differences(plan, sc.output))
    for name in plan.remove:
        folder = plan.cluster_dir(name)
        diffs.extend(Difference("extra", p) for p in _existing_files(folder).values())
    index = index_path(plan.out)
    current = _read(index)
    if current is None:
        diffs.append(Difference("missing", index))
    elif current != plan.after.to_bytes():
        diffs.append(Difference("differs", index))
    diffs.extend(Difference("leftover", p) for p in _leftovers(plan.out))
    return diffs


_held = threading.local()


def _held_outs() -> set[str]:
    outs: set[str] | None = getattr(_held, "outs", None)
    if outs is None:
        outs = _held.outs = set()
    return outs


@contextlib.contextmanager
def locked(
    out: Path,
    *,
    shared: bool = False,
    wait: float = LOCK_WAIT,
    on_wait: Callable[[], None] | None = None,
) -> Iterator[None]:
    """Hold a lock on the output folder for a whole plan-and-write (``shared``: a read-only
    ``--check``), so two runs never plan from the same index. Another run's lock is waited for
    (``on_wait`` is called once if so) for up to ``wait`` seconds. ``flock`` on the folder
    itself: no lock file to commit, and the kernel drops it when a run dies, even by SIGKILL.

    Creates ``out`` (and its missing parents) to lock it, and removes them again when the block
    fails. Re-entrant within a thread; a missing ``out`` is not created for a shared lock.
    """
    key = os.path.realpath(out)
    if key in _held_outs():
        yield
        return
    _check_output(out)
    created: list[Path] = []
    if not os.path.lexists(out):
        if shared:
            yield  # nothing there to read or to protect
            return
        created = [p for p in (out, *out.parents) if not os.path.lexists(p)]
        try:
            out.mkdir(parents=True)
        except OSError as exc:
            raise SynthError(f"cannot create {exc.filename or out}: {exc.strerror}") from exc
    try:
        fd = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            _acquire(fd, out, fcntl.LOCK_SH if shared else fcntl.LOCK_EX, wait, on_wait)
            _held_outs().add(key)
            try:
                yield
            finally:
                _held_outs().discard(key)
        finally:
            os.close(fd)
    except BaseException:
        for folder in created:  # deepest first: a failed first run leaves no trace
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _acquire(fd: int, out: Path, op: int, wait: float, on_wait: Callable[[], None] | None) -> None:
    deadline = time.monotonic() + wait
    told = False
    while True:
        try:
            fcntl.flock(fd, op | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if not told and on_wait is not None:
                on_wait()
            told = True
            if time.monotonic() >= deadline:
                raise SynthError(
                    f"another gpustack synth has been writing {out} for {wait:g} s; wait for "
                    "it to finish, or stop it if it hangs, then run again"
                ) from None
            time.sleep(0.05)


def _write_index(out: Path, index: OwnershipIndex) -> None:
    path = index_path(out)
    data = index.to_bytes()
    if _read(path) == data:
        return
    tmp = fsswap.sibling(path, "tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as exc:
        # Name the index, not the hidden copy it was written to.
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    finally:
        if os.path.lexists(tmp):
            tmp.unlink()


def _aside(plan: Plan, name: str, tag: str) -> Path:
    """A hidden path for cluster ``name`` in ``<out>/.gpustack/``: outside ``clusters/``, so no
    GitOps tool syncs it, and on the same filesystem, so it can be swapped in."""
    return fsswap.sibling(plan.out / INDEX_DIR / name, tag)


def _stage(plan: Plan, c: ClusterOutput) -> Path:
    """Write ``c`` into a new hidden staging folder; removes it again on failure."""
    target = plan.cluster_dir(c.name)
    staged = _aside(plan, c.name, "tmp")
    current = target
    made = {staged}
    try:
        staged.mkdir()
        for f in c.files:
            current = target / f.path
            path = staged / f.path
            if path.parent not in made:  # creating entries is the slow part on most disks
                path.parent.mkdir(parents=True, exist_ok=True)
                made.add(path.parent)
            with open(path, "wb") as fh:
                fh.write(f.content)
    except OSError as exc:
        _discard(staged)
        # Name the file the user knows, not the hidden staging copy.
        raise OSError(exc.errno, exc.strerror, str(current)) from exc
    except BaseException:
        _discard(staged)
        raise
    return staged


def _discard(staged: Path) -> None:
    """Remove a staging folder if it was created (on a read-only disk even a missing one's
    unlink fails, and that error would hide the real one)."""
    if os.path.lexists(staged):
        fsswap.remove(staged)


def _stage_all(plan: Plan, outputs: Sequence[ClusterOutput]) -> dict[str, Path]:
    """Stage every cluster; on any failure, remove the ones already staged and raise.

    Serial on purpose: writing clusters from a thread pool measured no faster (creating entries
    is bound by the filesystem's journal, not by Python).
    """
    staged: dict[str, Path] = {}
    try:
        for c in outputs:
            staged[c.name] = _stage(plan, c)
    except OSError as exc:
        for path in staged.values():
            fsswap.remove(path)
        where = exc.filename or plan.out
        raise SynthError(
            f"cannot write {where}: {exc.strerror}; {plan.out} was left unchanged"
        ) from exc
    return staged


def apply(plan: Plan) -> Summary:
    """Carry out ``plan``; on failure the output directory is left as it was.

    Takes the output folder's lock unless this thread holds it already (as :func:`run` does
    around planning, too), and refuses a plan made from an index that has changed since.
    """
    _confirm(plan)
    out = plan.out
    created = [p for p in (out, out / INDEX_DIR, out / CLUSTERS_DIR) if not os.path.lexists(p)]
    try:
        with locked(out):
            return _apply_locked(plan)
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
    elif _read(path) != original:
        tmp = fsswap.sibling(path, "tmp")
        tmp.write_bytes(original)
        os.replace(tmp, path)


def _apply_locked(plan: Plan) -> Summary:
    out = plan.out
    clusters_root = out / CLUSTERS_DIR
    original_index = _read(index_path(out))
    if original_index != plan.before_bytes:
        raise SynthError(
            f"{index_path(out)} changed while this run was planning (another gpustack synth?); "
            "run again"
        )
    try:
        (out / INDEX_DIR).mkdir(parents=True, exist_ok=True)
        clusters_root.mkdir(exist_ok=True)
    except OSError as exc:
        raise SynthError(f"cannot create {exc.filename or out}: {exc.strerror}") from exc

    for p in _leftovers(out):
        fsswap.remove(p)
    changed = [sc for sc in plan.write if _cluster_differences(plan, sc.output)]
    changed_names = {sc.output.name for sc in changed}
    unchanged = [sc.output.name for sc in plan.write if sc.output.name not in changed_names]

    staged = _stage_all(plan, [sc.output for sc in changed])

    # Claim every folder we are about to create before it exists; a folder about to be replaced
    # is known by both its old and its new digests until the final index is written.
    claimed = dict(plan.before.clusters)
    for name, entry in plan.after.clusters.items():
        previous = plan.current.get(name, {}) if name in changed_names else {}
        claimed[name] = replace(entry, previous=previous)
    swapped: list[tuple[str, Path | None]] = []
    try:
        _write_index(out, OwnershipIndex(clusters=claimed))
        for name, path in staged.items():
            swapped.append((name, fsswap.swap_in(path, plan.cluster_dir(name))))
    except OSError as exc:
        for name, old in reversed(swapped):
            fsswap.swap_back(plan.cluster_dir(name), old, staged[name])
        for path in staged.values():
            if os.path.lexists(path):
                fsswap.remove(path)
        _restore_index(out, original_index)
        where = exc.filename or out
        raise SynthError(
            f"cannot replace {where}: {exc.strerror}; {out} was left unchanged"
        ) from exc

    for _, old in swapped:
        if old is not None:
            fsswap.remove(old)
    for name in plan.remove:
        folder = plan.cluster_dir(name)
        if os.path.lexists(folder):
            doomed = _aside(plan, name, "old")
            os.rename(folder, doomed)  # the folder vanishes in one step
            fsswap.remove(doomed)
    _write_index(out, plan.after)

    return Summary(
        written=tuple(sc.output.name for sc in changed),
        unchanged=tuple(unchanged),
        removed=plan.remove,
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
) -> Outcome:
    """Plan and apply (or, with ``check``, plan and compare) under one lock on ``out``."""
    with locked(out, shared=check, wait=wait, on_wait=on_wait):
        plan = make_plan(out, clusters, force=force, prune=prune)
        if check:
            return Outcome(plan, differences=tuple(compare(plan)))
        return Outcome(plan, summary=apply(plan))
