"""Write (or ``--check``) ``<out>/gitops/``: the Argo CD and Flux objects, owned like clusters.

The folder is gpustack's alone: its files' digests are recorded in
``<out>/.gpustack/gitops.json`` (outside any synced path). A run refuses, unless ``force``, a
``gitops/`` it did not write or whose files were edited by hand; removing files (a tool turned
off, a cluster gone) needs ``prune``, because a GitOps tool that prunes would delete what they
deliver (a Flux Kustomization with ``prune: true`` takes its cluster's stack with it). The new
folder is staged in ``<out>/.gpustack/`` and swapped in whole, like a cluster folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gpustack.gitops.objects import GITOPS_DIR
from gpustack.limits import Refused, read_limited
from gpustack.synth import fsswap
from gpustack.synth.errors import SynthError
from gpustack.synth.index import INDEX_DIR, MAX_INDEX_BYTES, digest

RECORD = "gitops.json"


@dataclass(frozen=True)
class GitOpsChange:
    """What ``<out>/gitops/`` needs: files to add, change and remove; hand edits found."""

    added: tuple[str, ...]
    changed: tuple[str, ...]
    removed: tuple[str, ...]
    hand_edits: tuple[str, ...]
    foreign: bool

    @property
    def stale(self) -> bool:
        return bool(self.added or self.changed or self.removed)


def _record_path(out: Path) -> Path:
    return out / INDEX_DIR / RECORD


def _read_record(out: Path) -> dict[str, str] | None:
    if not _record_path(out).exists():
        return None
    try:
        text = read_limited(_record_path(out), MAX_INDEX_BYTES, what="gpustack record")
        doc = json.loads(text)
    except (Refused, ValueError) as exc:
        why = exc.message if isinstance(exc, Refused) else str(exc)
        raise SynthError(f"{_record_path(out)} is unreadable ({why}); restore it from git") from exc
    files = doc.get("files") if isinstance(doc, dict) else None
    if not isinstance(files, dict):
        raise SynthError(f"{_record_path(out)} is not gpustack's; restore it from git")
    return {str(k): str(v) for k, v in files.items()}


def _existing(folder: Path) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    if folder.is_dir() and not folder.is_symlink():
        for p in sorted(folder.rglob("*")):
            if p.is_file() or p.is_symlink():
                found[p.relative_to(folder).as_posix()] = b"" if p.is_symlink() else p.read_bytes()
    return found


def compare(out: Path, files: Mapping[str, bytes]) -> GitOpsChange:
    """How ``<out>/gitops/`` differs from ``files`` (pure: reads only)."""
    folder = out / GITOPS_DIR
    existing = _existing(folder)
    record = _read_record(out)
    foreign = record is None and bool(existing)
    known = record or {}
    edits = (
        tuple(rel for rel, content in existing.items() if known.get(rel) != digest(content))
        if not foreign
        else ()
    )
    return GitOpsChange(
        added=tuple(r for r in files if r not in existing),
        changed=tuple(r for r in files if r in existing and existing[r] != files[r]),
        removed=tuple(r for r in existing if r not in files),
        hand_edits=edits,
        foreign=foreign,
    )


def confirm(out: Path, change: GitOpsChange, *, force: bool, prune: bool) -> None:
    """Refuse, in one line, what needs the user's say-so (run it before writing anything)."""
    folder = out / GITOPS_DIR
    if change.foreign and not force:
        raise SynthError(
            f"{folder} exists but gpustack did not write it; move it away, or pass --force"
        )
    if change.hand_edits and not force:
        named = ", ".join(str(folder / r) for r in change.hand_edits[:5])
        raise SynthError(
            f"files gpustack wrote were edited by hand and would be lost: {named}; move the "
            "change into the profiles' gitops section, or pass --force; nothing was written"
        )
    if change.removed and not prune:
        named = ", ".join(str(folder / r) for r in change.removed[:5])
        raise SynthError(
            f"this run would delete GitOps objects: {named}; a tool that prunes would then "
            "stop delivering (Flux: uninstall) those clusters' stacks; pass --prune to delete"
        )


def write(out: Path, files: Mapping[str, bytes], *, force: bool, prune: bool) -> GitOpsChange:
    """Make ``<out>/gitops/`` hold exactly ``files``; call with ``out`` locked."""
    change = compare(out, files)
    confirm(out, change, force=force, prune=prune)
    folder = out / GITOPS_DIR
    if not change.stale and not change.hand_edits:
        if files or _read_record(out) is None:
            _write_record(out, files)
        return change
    if not files:
        if os.path.lexists(folder):
            fsswap.remove(folder)
        _record_path(out).unlink(missing_ok=True)
        return change
    staged = fsswap.sibling(out / INDEX_DIR / GITOPS_DIR, "tmp")
    try:
        for rel, content in files.items():
            path = staged / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        old = fsswap.swap_in(staged, folder)
    except OSError as exc:
        if os.path.lexists(staged):
            fsswap.remove(staged)
        raise SynthError(f"cannot write {folder}: {exc.strerror}; it was left unchanged") from exc
    if old is not None:
        fsswap.remove(old)
    _write_record(out, files)
    return change


def _write_record(out: Path, files: Mapping[str, bytes]) -> None:
    if not files:
        return
    doc = {"generator": "gpustack", "files": {r: digest(c) for r, c in sorted(files.items())}}
    data = (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
    path = _record_path(out)
    if path.is_file() and path.read_bytes() == data:
        return
    tmp = fsswap.sibling(path, "tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
