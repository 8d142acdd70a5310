"""Plan, apply and check writes of cluster folders into an output directory.

A run first builds a :class:`Plan` (pure: reads the output directory, writes nothing), which
decides what gets written, what gets removed and whether a folder belongs to someone else. Only
then does :func:`apply` touch the disk:

1. every changed cluster is written into a hidden sibling folder (``.<name>.gpustack-tmp-*``);
   any failure here removes those folders and leaves the output exactly as it was;
2. the index is updated to claim the new clusters *before* they appear, so a crash can never
   leave a folder gpustack would later refuse as foreign;
3. each staged folder is swapped in (atomically where the OS allows; see :mod:`fsswap`); if a
   swap fails, the swaps already done are undone;
4. replaced folders, and owned clusters whose profile is gone, are deleted; the final index is
   written last (atomically, via rename).

Nothing outside ``<out>/clusters/<name>`` and ``<out>/.gpustack/`` is ever created or removed.
Clusters that are not in the index are never touched unless ``force`` is set.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gpustack.synth import fsswap
from gpustack.synth.errors import SynthError
from gpustack.synth.index import (
    INDEX_DIR,
    PACKAGED_DEFAULT,
    IndexEntry,
    OwnershipIndex,
    index_path,
    profile_exists,
    read_index,
)
from gpustack.synth.layout import ClusterOutput

CLUSTERS_DIR = "clusters"
_LEFTOVER_MARKERS = (".gpustack-tmp-", ".gpustack-old-")


@dataclass(frozen=True)
class SourcedCluster:
    """A cluster's files and the index reference of the profile that produced them."""

    output: ClusterOutput
    profile: str


@dataclass(frozen=True)
class Plan:
    """What a run will do to ``out``; built by :func:`make_plan`, carried out by :func:`apply`."""

    out: Path
    write: tuple[SourcedCluster, ...]
    remove: tuple[str, ...]
    before: OwnershipIndex
    after: OwnershipIndex

    def cluster_dir(self, name: str) -> Path:
        return self.out / CLUSTERS_DIR / name


@dataclass(frozen=True)
class Difference:
    """One file that ``--check`` found out of date."""

    kind: Literal["differs", "missing", "extra"]
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


def make_plan(out: Path, clusters: Sequence[SourcedCluster], *, force: bool = False) -> Plan:
    """Decide what to write and remove; raises :class:`SynthError` for anything unsafe."""
    seen: dict[str, str] = {}
    for c in clusters:
        other = seen.get(c.output.name)
        if other is not None:
            raise SynthError(
                f"profiles {shown(other, out)} and {shown(c.profile, out)} both define cluster "
                f"{c.output.name!r} (metadata.name); give each profile its own name"
            )
        seen[c.output.name] = c.profile

    existing = next((p for p in (out, *out.parents) if os.path.lexists(p)), None)
    if existing is not None and not existing.is_dir():
        what = "" if existing == out else f" ({existing} is a file)"
        raise SynthError(f"output {out} is not a folder{what}; choose another --out")
    clusters_root = out / CLUSTERS_DIR
    if clusters_root.is_symlink() or (clusters_root.exists() and not clusters_root.is_dir()):
        raise SynthError(f"{clusters_root} must be a plain folder, not a link or a file")

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
    kept: dict[str, IndexEntry] = {}
    for name, entry in sorted(before.clusters.items()):
        if name in produced:
            continue
        if entry.profile in run_profiles or not profile_exists(entry.profile, out):
            remove.append(name)  # its profile was renamed, now names another cluster, or is gone
        else:
            kept[name] = entry  # its profile exists but was not part of this run

    after = dict(kept)
    for c in clusters:
        after[c.output.name] = IndexEntry(profile=c.profile, files=c.output.paths())
    return Plan(
        out=out,
        write=tuple(clusters),
        remove=tuple(remove),
        before=before,
        after=OwnershipIndex(clusters=after),
    )


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


def compare(plan: Plan) -> list[Difference]:
    """Every file :func:`apply` would change, in a stable order; empty when up to date."""
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
    return diffs


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``folder`` so two runs can't interleave their swaps."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise SynthError(
                f"another gpustack synth is writing {folder.parent}; wait for it to finish"
            ) from exc
        yield
    finally:
        os.close(fd)


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


def _stage(plan: Plan, c: ClusterOutput) -> Path:
    """Write ``c`` into a new hidden sibling of its folder; removes it again on failure."""
    target = plan.cluster_dir(c.name)
    staged = fsswap.sibling(target, "tmp")
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


def _remove_leftovers(*folders: Path) -> None:
    """Delete staging folders and index copies an interrupted run left behind (hidden, ours)."""
    for folder in folders:
        for p in folder.iterdir():
            if p.name.startswith(".") and any(m in p.name for m in _LEFTOVER_MARKERS):
                fsswap.remove(p)


def apply(plan: Plan) -> Summary:
    """Carry out ``plan``; on failure the output directory is left as it was."""
    out = plan.out
    created = [p for p in (out, out / INDEX_DIR, out / CLUSTERS_DIR) if not os.path.lexists(p)]
    try:
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
    try:
        (out / INDEX_DIR).mkdir(parents=True, exist_ok=True)
        clusters_root.mkdir(exist_ok=True)
    except OSError as exc:
        raise SynthError(f"cannot create {exc.filename or out}: {exc.strerror}") from exc

    with _locked(out / INDEX_DIR):
        original_index = _read(index_path(out))
        _remove_leftovers(clusters_root, out / INDEX_DIR)
        changed = [sc for sc in plan.write if _cluster_differences(plan, sc.output)]
        changed_names = {sc.output.name for sc in changed}
        unchanged = [sc.output.name for sc in plan.write if sc.output.name not in changed_names]

        staged = _stage_all(plan, [sc.output for sc in changed])

        # Claim every folder we are about to create before it exists.
        claimed = dict(plan.before.clusters)
        claimed.update(plan.after.clusters)
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
                doomed = fsswap.sibling(folder, "old")
                os.rename(folder, doomed)  # the folder vanishes in one step
                fsswap.remove(doomed)
        _write_index(out, plan.after)

    return Summary(
        written=tuple(sc.output.name for sc in changed),
        unchanged=tuple(unchanged),
        removed=plan.remove,
    )
