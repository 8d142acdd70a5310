"""What ``synth --check`` finds besides files that differ: the gate's own findings (issue #33).

A check used as a merge gate must take its verdict only from what is committed and what
gpustack computes, never from what the change under review claims about itself. File by file
comparison (:mod:`.compare`) covers the folders a run writes; this module covers the rest:

* :func:`unowned`: every path under the output folder that no run writes: a cluster folder
  without an index entry (a GitOps tool syncing ``<out>/clusters/*`` deploys it all the same),
  a stray file or folder beside ``clusters/``, ``gitops/`` and ``.gpustack/``;
* :func:`covered_by`: which index entries name a profile this run looked at but that made no
  cluster (a file that stopped being a profile, a base under a ``_`` name): their folders are
  removed like those of a deleted profile (:mod:`.plan`), with a line that says why;
* :func:`left_out`: under ``--base`` and ``--full``, every index entry whose folder the check
  did not compare (its profile lies outside the paths checked) is a finding: a gate covers the
  whole fleet;
* :func:`index_lines`: under ``--base`` and ``--full``, the index is compared in full,
  provenance included, with what the run records, and each entry that differs gets a line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import replace
from pathlib import Path

from gpustack.synth.compare import Difference
from gpustack.synth.index import (
    INDEX_DIR,
    INDEX_FILE,
    PACKAGED_DEFAULT,
    IndexEntry,
    OwnershipIndex,
)
from gpustack.synth.plan import CLUSTERS_DIR, Plan, existing_files, shown
from gpustack.synth.statcache import CACHE_NAME

#: Names gpustack itself keeps right inside the output folder and inside ``.gpustack/``.
_TOP = frozenset({CLUSTERS_DIR, INDEX_DIR, "gitops"})
_RECORDS = frozenset({INDEX_FILE, "gitops.json"})
_PLACEHOLDERS = frozenset({".gitkeep", ".keep"})
_LEFTOVER_MARKERS = (".gpustack-tmp-", ".gpustack-old-")

#: For an index reference: why the run that looked at its file made no cluster of it, or
#: ``None`` when the run did not look at that file.
NotAProfile = Callable[[str], "str | None"]


def _leftover(name: str) -> bool:
    return name.startswith(".") and any(m in name for m in _LEFTOVER_MARKERS)


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        return sorted(os.scandir(folder), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []


def _files_of(path: Path) -> list[Path]:
    """``path`` itself when it is no folder, else every file under it."""
    if path.is_symlink() or not path.is_dir():
        return [path]
    found = list(existing_files(path).values())
    return found or [path]


def unowned(plan: Plan) -> tuple[list[str], list[Difference]]:
    """Lines and ``extra`` differences for every path under ``plan.out`` that no run writes
    (see the module docstring). Three folder listings: the cluster folders gpustack owns are
    compared elsewhere, file by file."""
    out = plan.out
    lines: list[str] = []
    diffs: list[Difference] = []
    for e in _entries(out):
        if e.name in _TOP or e.name in _PLACEHOLDERS:
            continue
        path = out / e.name
        lines.append(
            f"unowned: {path}: gpustack writes nothing there; delete it (only clusters/, "
            "gitops/ and .gpustack/ are gpustack's)"
        )
        diffs.extend(Difference("extra", p) for p in _files_of(path))
    for e in _entries(out / INDEX_DIR):
        if e.name in _RECORDS or _leftover(e.name):
            continue
        if e.name == CACHE_NAME and e.is_dir(follow_symlinks=False):
            continue  # the local stat cache (never read under --base, ignored by git)
        path = out / INDEX_DIR / e.name
        lines.append(f"unowned: {path}: not a file gpustack keeps in {out / INDEX_DIR}; delete it")
        diffs.extend(Difference("extra", p) for p in _files_of(path))
    owned = set(plan.after.clusters) | set(plan.remove)
    clusters = out / CLUSTERS_DIR
    for e in _entries(clusters) if not clusters.is_symlink() else []:
        if e.name in owned or e.name in _PLACEHOLDERS or _leftover(e.name):
            continue
        path = clusters / e.name
        lines.append(
            f"unowned: {path}: cluster folder in no index entry, made by no profile (a GitOps "
            f"tool syncing {clusters}/* deploys it all the same); delete it"
        )
        diffs.extend(Difference("extra", p) for p in _files_of(path))
    return lines, diffs


def covered_by(
    paths: Sequence[Path], out: Path, skipped: Mapping[str, str], made: Set[str]
) -> NotAProfile:
    """For an index reference whose file lies in ``paths`` (the run looked at it) and exists
    but is none of the profiles ``made`` (references of the run's clusters): why it made no
    cluster. ``skipped`` maps the references of files the checker skipped as Kubernetes
    manifests to what it found them to be."""
    folders = [os.path.normpath(os.path.abspath(p)) for p in paths if p.is_dir()]
    files = {os.path.normpath(os.path.abspath(p)) for p in paths if not p.is_dir()}
    root = os.path.realpath(out)  # as ref_file resolves it, once

    def why(ref: str) -> str | None:
        if ref in made or ref == PACKAGED_DEFAULT:
            return None
        at = os.path.normpath(os.path.join(root, ref))
        found = Path(at)
        inside = at in files or any(at.startswith(f + os.sep) for f in folders)
        if not inside or not found.is_file():
            return None
        what = skipped.get(ref)
        if what is not None:
            return f"is no longer a profile ({what})"
        return (
            "is no profile this run synthesizes (a base under a '_' name, a hidden file, or not "
            "YAML)"
        )

    return why


def not_a_profile_line(name: str, entry: IndexEntry, why: str, out: Path, at: str = "") -> str:
    """The line naming a cluster whose recorded profile stopped being one."""
    where = f" at {at}" if at else ""
    return (
        f"not a profile: {shown(entry.profile, out)} made cluster {name!r}{where} and {why}; "
        "restore its apiVersion (gpustack.dev/v1alpha1) and kind (Profile), or delete it and "
        "run `gpustack synth --prune`"
    )


def left_out(plan: Plan, mode: str) -> list[str]:
    """Under a gate (``mode``: ``--base REF`` or ``--full``): a line per index entry whose
    folder this check kept as it is without comparing it (its profile is not among the paths
    checked)."""
    compared = {sc.output.name for sc in plan.write} | set(plan.kept) | set(plan.remove)
    return [
        f"not compared: cluster {name!r} ({plan.cluster_dir(name)}) is recorded as made from "
        f"{shown(entry.profile, plan.out)}, which this check does not include; {mode} checks "
        "the whole fleet: name that profile too, or restore the index from git"
        for name, entry in sorted(plan.after.clusters.items())
        if name not in compared
    ]


def index_lines(current: OwnershipIndex | None, expected: OwnershipIndex) -> list[str]:
    """A line per cluster whose index entry (provenance included) is not what the run records,
    and one for the fleet digest of ``gitops/``."""
    have = current.clusters if current is not None else {}
    lines: list[str] = []
    only_digest = [
        n
        for n, b in expected.clusters.items()
        if (a := have.get(n)) is not None and a != b and replace(a, digest=b.digest) == b
    ]
    collapsed = len(only_digest) > 1 and len(only_digest) == len(expected.clusters)
    if collapsed:
        lines.append(
            f"index: the recorded digest of all {len(only_digest)} clusters is not what this "
            "gpustack computes (recorded by another gpustack version or code, or edited)"
        )
    for name in sorted(set(have) | set(expected.clusters)):
        if collapsed and name in only_digest:
            continue
        a, b = have.get(name), expected.clusters.get(name)
        if a == b:
            continue
        if a is None:
            lines.append(f"index: cluster {name!r} has no entry; the run records one")
            continue
        if b is None:
            lines.append(f"index: cluster {name!r} has an entry no profile of this run makes")
            continue
        what = [
            label
            for label, x, y in (
                ("profile", a.profile, b.profile),
                ("files", dict(a.files), dict(b.files)),
                ("previous", dict(a.previous), dict(b.previous)),
                ("digest", a.digest, b.digest),
                ("inputs", dict(a.inputs), dict(b.inputs)),
                ("delivery", a.delivery, b.delivery),
            )
            if x != y
        ]
        detail = _inputs_detail(a.inputs, b.inputs)
        lines.append(
            f"index: cluster {name!r}: recorded {', '.join(what)} not what gpustack computes"
            f"{detail}"
        )
    if current is not None and current.gitops != expected.gitops:
        lines.append("index: the fleet digest of gitops/ is not what gpustack computes")
    return lines


def _inputs_detail(recorded: Mapping[str, str], computed: Mapping[str, str]) -> str:
    for ref in sorted(set(recorded) | set(computed)):
        a, b = recorded.get(ref), computed.get(ref)
        if a != b:
            return f" ({ref}: {_short(a)} recorded, {_short(b)} computed)"
    return ""


def _short(d: str | None) -> str:
    return "nothing" if d is None else d[: len("sha256:") + 12]
