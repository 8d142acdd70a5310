"""Planning a write (pure: reads the output folder, writes nothing).

:func:`make_plan` decides what gets written, what gets removed, whether a folder belongs to
someone else and which files in owned folders were changed by hand; :mod:`gpustack.synth.writer`
carries the :class:`Plan` out and :mod:`gpustack.synth.compare` compares it (``--check``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from gpustack.synth.errors import SynthError
from gpustack.synth.index import (
    CLUSTER_NAME,
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
from gpustack.synth.lock import check_output

CLUSTERS_DIR = "clusters"
#: Digest recorded for a symbolic link: gpustack never writes one, so it is always a hand edit.
_LINK = "symlink"


@dataclass(frozen=True)
class SourcedCluster:
    """A cluster's files and the index reference of the profile that produced them."""

    output: ClusterOutput
    profile: str
    #: What it was synthesized from (:mod:`gpustack.synth.digest`), recorded in the index.
    digest: str | None = None
    inputs: Mapping[str, str] = field(default_factory=dict)
    delivery: bool = False


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
    #: Digests of what each folder to replace holds now, where that is not what the run writes
    #: (recorded while it is swapped; a folder that already holds it is not swapped).
    current: Mapping[str, Digests] = field(default_factory=dict)
    #: Clusters of this run that were not synthesized again: fresh, as the index records them.
    kept: tuple[str, ...] = ()

    def cluster_dir(self, name: str) -> Path:
        """``<out>/clusters/<name>``; refuses any name that is not one folder right inside."""
        if not CLUSTER_NAME.fullmatch(name):
            raise SynthError(f"cluster name {name!r} is no folder inside {self.out}/clusters")
        return self.out / CLUSTERS_DIR / name


_PLACEHOLDERS = frozenset({".gitkeep", ".keep"})


def _is_empty_dir(path: Path) -> bool:
    return all(p.name in _PLACEHOLDERS for p in path.iterdir())


def shown(ref: str, out: Path) -> str:
    """A profile reference as the user can find it: index references are relative to ``out``,
    which means nothing on the command line, so show them relative to where ``out`` is."""
    if ref == PACKAGED_DEFAULT:
        return "the packaged default profile"
    return os.path.normpath(os.path.join(out, ref))


def make_plan(
    out: Path,
    clusters: Sequence[SourcedCluster],
    *,
    force: bool = False,
    prune: bool = False,
    kept: Mapping[str, IndexEntry] | None = None,
    index_bytes: bytes | None | Literal[False] = False,
    not_a_profile: Callable[[str], str | None] | None = None,
    index: OwnershipIndex | None = None,
) -> Plan:
    """Decide what to write and remove; raises :class:`SynthError` for anything unsafe.

    ``not_a_profile`` says, for a profile reference whose file this run looked at without
    making a cluster of it, why (:func:`gpustack.synth.gate.covered_by`): its cluster is
    removed like that of a deleted profile, not kept aside unchecked.

    Removals and hand edits are recorded, not refused, so ``--check`` can list them; :func:`apply`
    refuses them unless ``prune`` (removals) or ``force`` (hand edits) is set.

    ``kept`` are clusters of this run that :mod:`gpustack.synth.fresh` found fresh in the index
    read as ``index_bytes``: they stay as they are (an index that changed since is an error);
    ``index`` is what the caller parsed from those bytes (:func:`read_before`).

    Five phases, each its own function: names, the output folder, the index as it is, who owns
    each target folder, and what this run removes, records and finds edited by hand.
    """
    fresh = dict(kept or {})
    check_names(out, clusters, fresh)
    check_output_root(out)
    before, before_bytes = read_before(out, force=force, index_bytes=index_bytes, index=index)
    run_profiles = {c.profile for c in clusters} | {e.profile for e in fresh.values()}
    check_ownership(out, clusters, before, run_profiles, force=force)
    produced = {c.output.name for c in clusters} | set(fresh)
    remove, removals, kept_aside = plan_removals(
        out, before, produced, run_profiles, not_a_profile or _none
    )
    after = {**kept_aside, **fresh, **recorded(clusters, before)}
    current, edits = find_hand_edits(out, clusters, remove, before, after)
    return Plan(
        out=out,
        write=tuple(clusters),
        remove=tuple(remove),
        before=before,
        after=OwnershipIndex(clusters=after, gitops=before.gitops),
        before_bytes=before_bytes,
        force=force,
        prune=prune,
        removals=tuple(removals),
        overwrites=tuple(p for p, _ in edits),
        hand_edits=tuple(edits),
        current=current,
        kept=tuple(sorted(fresh)),
    )


def check_names(
    out: Path, clusters: Sequence[SourcedCluster], fresh: Mapping[str, IndexEntry]
) -> None:
    """Phase 1: every cluster name is a folder name, and no two profiles share one."""
    seen: dict[str, str] = {}
    named = [(c.output.name, c.profile) for c in clusters]
    for name, ref in [*named, *((n, e.profile) for n, e in fresh.items())]:
        if not CLUSTER_NAME.fullmatch(name):
            raise SynthError(f"cluster name {name!r} can't be a folder name")
        other = seen.get(name)
        if other is not None:
            raise SynthError(
                f"profiles {shown(other, out)} and {shown(ref, out)} both define cluster "
                f"{name!r} (metadata.name); give each profile its own name"
            )
        seen[name] = ref


def check_output_root(out: Path) -> None:
    """Phase 2: ``out`` and ``out/clusters`` are folders gpustack may write in."""
    check_output(out)
    clusters_root = out / CLUSTERS_DIR
    if clusters_root.is_symlink() or (clusters_root.exists() and not clusters_root.is_dir()):
        raise SynthError(f"{clusters_root} must be a plain folder, not a link or a file")


def read_before(
    out: Path,
    *,
    force: bool,
    index_bytes: bytes | None | Literal[False],
    index: OwnershipIndex | None = None,
) -> tuple[OwnershipIndex, bytes | None]:
    """Phase 3: the ownership index as it is (empty for an empty or forced ``out``), and its
    bytes; the index must not have changed since ``index_bytes`` were read. ``index``: what the
    caller parsed from ``index_bytes``, taken as it is rather than parsed again (a fleet's
    index is tens of MB, and its parsed form several times that: issue #37)."""
    if index_bytes is not False:
        if not holds(index_path(out), index_bytes):
            raise SynthError(
                f"{index_path(out)} changed while this run was reading it (another gpustack "
                "synth?); run again"
            )
        before_bytes = index_bytes  # compared a chunk at a time: one copy held, not two
    else:
        before_bytes = read_plain(index_path(out))
    if index is not None and index_bytes is not False:
        return index, before_bytes
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
    return before, before_bytes


def check_ownership(
    out: Path,
    clusters: Sequence[SourcedCluster],
    before: OwnershipIndex,
    run_profiles: set[str],
    *,
    force: bool,
) -> None:
    """Phase 4: each target folder is gpustack's (or forced), and no other existing profile
    this run leaves out already owns its cluster."""
    clusters_root = out / CLUSTERS_DIR
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


def _none(_: str) -> None:
    return None


def plan_removals(
    out: Path,
    before: OwnershipIndex,
    produced: set[str],
    run_profiles: set[str],
    not_a_profile: Callable[[str], str | None] = _none,
) -> tuple[list[str], list[Removal], dict[str, IndexEntry]]:
    """Phase 5a: the owned clusters this run does not produce: removed (their profile was
    renamed, names another cluster, is gone, or is in the run's paths but no profile any more;
    with the reason where the folder exists) or kept aside (their profile exists but is not
    part of this run)."""
    clusters_root = out / CLUSTERS_DIR
    remove: list[str] = []
    removals: list[Removal] = []
    kept_aside: dict[str, IndexEntry] = {}
    for name, entry in sorted(before.clusters.items()):
        if name in produced:
            continue
        gone = entry.profile in run_profiles or not profile_exists(entry.profile, out)
        why = None if gone else not_a_profile(entry.profile)
        if gone or why is not None:
            remove.append(name)
            if os.path.lexists(clusters_root / name):
                reason = (
                    f"its profile {shown(entry.profile, out)} {why}"
                    if why is not None
                    else _why_removed(entry.profile, run_profiles, out)
                )
                removals.append(Removal(name, reason))
        else:
            kept_aside[name] = entry
    return remove, removals, kept_aside


def recorded(
    clusters: Sequence[SourcedCluster], before: OwnershipIndex | None = None
) -> dict[str, IndexEntry]:
    """Phase 5b: the index entries of the clusters this run writes. A cluster whose files the
    index ``before`` records with the same digests keeps the index's own map of them: a fleet
    rendered again (every profile touched, a gpustack upgrade) holds one copy of its digests,
    not two (issue #37)."""
    entries = {}
    for c in clusters:
        files: Digests = {f.path: digest(f.content) for f in c.output.files}
        old = None if before is None else before.clusters.get(c.output.name)
        if old is not None and old.files == files:
            files = old.files
        entries[c.output.name] = IndexEntry(
            profile=c.profile,
            files=files,
            digest=c.digest,
            inputs=c.inputs,
            delivery=c.delivery,
        )
    return entries


def find_hand_edits(
    out: Path,
    clusters: Sequence[SourcedCluster],
    remove: Sequence[str],
    before: OwnershipIndex,
    after: Mapping[str, IndexEntry],
) -> tuple[dict[str, Digests], list[tuple[Path, str]]]:
    """Phase 5c: what the folders to replace or delete hold now (where that is not what this
    run writes there), and which of it gpustack did not write (changed or added by hand)."""
    clusters_root = out / CLUSTERS_DIR
    current: dict[str, Digests] = {}
    edits: list[tuple[Path, str]] = []
    targets = [(c.output.name, after[c.output.name].files) for c in clusters]
    for name, new in [*targets, *((n, {}) for n in remove)]:
        folder = clusters_root / name
        found = digests_of(folder)
        if not found:
            continue
        if found != new:  # a folder that holds what it will hold is not swapped
            current[name] = found
        owner = before.clusters.get(name)
        if owner is None:
            continue  # a foreign folder, refused above unless forced
        for rel, d in sorted(found.items()):
            if new.get(rel) == d or owner.knows(rel, d):
                continue  # gpustack's own file, or exactly what it is about to write
            known = rel in owner.files or rel in owner.previous
            edits.append((folder / rel, "changed" if known else "added"))
    return current, edits


def _why_removed(ref: str, run_profiles: set[str], out: Path) -> str:
    if ref == PACKAGED_DEFAULT:
        return "it came from the packaged default profile, which this run does not use"
    if ref in run_profiles:
        return f"{shown(ref, out)} now names another cluster"
    return f"its profile {shown(ref, out)} is gone"


def digests_of(folder: Path) -> dict[str, str]:
    """Digest of every file under ``folder`` (a symlink gets :data:`_LINK`)."""
    found: dict[str, str] = {}
    for rel, p in existing_files(folder).items():
        content = read_plain(p)
        found[rel] = _LINK if content is None else digest(content)
    return found


def existing_files(folder: Path) -> dict[str, Path]:
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


def holds(path: Path, expected: bytes | None) -> bool:
    """Whether ``read_plain(path)`` would be ``expected``, read a MiB at a time: a fleet's
    index is tens of MB, and comparing it must not hold a second copy (issue #37)."""
    if expected is None:
        return read_plain(path) is None
    try:
        if not path.is_file() or path.is_symlink():
            return False
        with path.open("rb") as f:
            view = memoryview(expected)
            done = 0
            while chunk := f.read(1 << 20):
                if view[done : done + len(chunk)] != chunk:
                    return False
                done += len(chunk)
            return done == len(expected)
    except OSError:
        return False


def read_plain(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None
