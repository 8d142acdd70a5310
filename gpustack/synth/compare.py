"""``synth --check``: what a plan would change on disk, without changing it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from gpustack.synth.errors import SynthError
from gpustack.synth.index import INDEX_DIR, OwnershipIndex, index_path
from gpustack.synth.layout import ClusterOutput
from gpustack.synth.plan import CLUSTERS_DIR, Plan, existing_files, read_plain

_LEFTOVER_MARKERS = (".gpustack-tmp-", ".gpustack-old-")


@dataclass(frozen=True)
class Difference:
    """One file that ``--check`` found out of date (or a leftover of a killed run)."""

    kind: Literal["differs", "missing", "extra", "leftover"]
    path: Path


def cluster_differences(plan: Plan, c: ClusterOutput) -> list[Difference]:
    folder = plan.cluster_dir(c.name)
    if os.path.lexists(folder) and (folder.is_symlink() or not folder.is_dir()):
        return [Difference("differs", folder)]
    existing = existing_files(folder)
    diffs: list[Difference] = []
    for f in c.files:
        path = folder / f.path
        if f.path not in existing:
            diffs.append(Difference("missing", path))
        elif read_plain(path) != f.content:
            diffs.append(Difference("differs", path))
    wanted = set(c.paths())
    diffs.extend(Difference("extra", p) for rel, p in existing.items() if rel not in wanted)
    made = {str(d) for rel in wanted for d in PurePosixPath(rel).parents}
    diffs.extend(Difference("extra", p) for p in empty_folders(folder, made))
    return diffs


def empty_folders(folder: Path, made: set[str]) -> list[Path]:
    """Folders under ``folder`` holding nothing, other than those in ``made`` (where the run
    writes files: emptied by a deleted file, which is named already): gpustack writes none
    and git commits none, so in a checkout one is a submodule (a gitlink) that a GitOps tool
    may fetch and sync."""
    found: list[Path] = []
    if not folder.is_dir() or folder.is_symlink():
        return found
    for root, dirs, names in os.walk(folder):
        rel = Path(root).relative_to(folder).as_posix()
        if not dirs and not names and rel != "." and rel not in made:
            found.append(Path(root))
    return sorted(found)


def leftovers(out: Path) -> list[Path]:
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


def _same_ownership(current: bytes, plan: Plan, where: str) -> bool:
    try:
        found = OwnershipIndex.from_bytes(current, where)
    except SynthError:
        return False
    return found.ownership().to_bytes() == plan.after.ownership().to_bytes()


def compare(plan: Plan) -> list[Difference]:
    """Every file :func:`apply` would change, and every leftover of a killed run it would
    delete, in a stable order; empty when up to date."""
    diffs: list[Difference] = []
    for sc in plan.write:
        diffs.extend(cluster_differences(plan, sc.output))
    for name in plan.remove:
        folder = plan.cluster_dir(name)
        diffs.extend(Difference("extra", p) for p in existing_files(folder).values())
    index = index_path(plan.out)
    current = read_plain(index)
    if current is None:
        diffs.append(Difference("missing", index))
    elif current != plan.after.to_bytes() and not _same_ownership(current, plan, str(index)):
        diffs.append(Difference("differs", index))
    diffs.extend(Difference("leftover", p) for p in leftovers(plan.out))
    return diffs
