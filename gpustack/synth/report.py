"""What ``gpustack synth`` tells a person (or a program) while and after it runs.

* :class:`ProgressLine`: one self-overwriting count on stderr ("synthesizing 120/1000
  clusters"), only when stderr is a terminal and the work has already taken a moment, so logs
  and pipes never get it and short runs stay silent;
* :func:`write_json` / :func:`check_json`: ``--format json`` documents, one per run, per cluster
  ``written``/``unchanged``/``removed`` (``--check``: ``stale``/``unchanged``/``removed``) with
  its files;
* :func:`unified_diffs`: ``--check --diff``, the change a run would make to each file.

Exit statuses: :mod:`gpustack.exits` (``synth --help`` states them from there).
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from gpustack.exits import Exit
from gpustack.synth.compare import Difference
from gpustack.synth.plan import Plan

#: ``synth --check``: the output is out of date (distinct from 1, invalid input).
STALE = Exit.STALE


class ProgressLine:
    """A count of clusters on a terminal, redrawn at most every ``every`` seconds: ``verb`` says
    what is counted (``synthesized`` while rendering, ``wrote`` while the writer stages the
    cluster folders, so a large fleet's terminal is never silent for long)."""

    def __init__(
        self,
        stream: TextIO,
        total: int,
        *,
        enabled: bool,
        delay: float = 1.0,
        every: float = 0.1,
        verb: str = "synthesized",
    ) -> None:
        self.stream = stream
        self.total = total
        self.enabled = enabled
        self.start = time.monotonic()
        self.delay = delay
        self.every = every
        self.last = 0.0
        self.shown = False
        self.verb = verb

    def __call__(self, done: int, total: int | None = None) -> None:
        """``done`` of :attr:`total` clusters (``total``: a count known only now)."""
        if total is not None:
            self.total = total
        if not self.enabled or self.total <= 1:
            return
        now = time.monotonic()
        if now - self.start < self.delay or (now - self.last < self.every and done < self.total):
            return
        self.last = now
        self.shown = True
        self.stream.write(f"\r\033[Kgpustack: {self.verb} {done}/{self.total} clusters")
        self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


def _files(plan: Plan, name: str, *, before: bool = False) -> list[str]:
    index = plan.before if before else plan.after
    entry = index.clusters.get(name)
    return sorted(entry.files) if entry is not None else []


def write_json(
    plan: Plan,
    written: Sequence[str],
    unchanged: Sequence[str],
    removed: Sequence[str],
    gitops: Sequence[tuple[str, Path]],
) -> dict[str, Any]:
    clusters = [
        *({"name": n, "status": "written", "files": _files(plan, n)} for n in written),
        *({"name": n, "status": "unchanged", "files": _files(plan, n)} for n in unchanged),
        *({"name": n, "status": "removed", "files": _files(plan, n, before=True)} for n in removed),
    ]
    return {
        "out": str(plan.out),
        "clusters": sorted(clusters, key=lambda c: str(c["name"])),
        "gitops": [{"status": kind, "path": str(path)} for kind, path in gitops],
    }


def check_json(
    plan: Plan,
    differences: Sequence[Difference],
    gitops: Sequence[tuple[str, Path]],
    renamed: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    by_cluster: dict[str, list[dict[str, str]]] = {}
    other: list[dict[str, str]] = []
    root = plan.out / "clusters"
    for d in differences:
        try:
            rel = d.path.relative_to(root)
        except ValueError:
            other.append({"path": str(d.path), "change": d.kind})
            continue
        name = rel.parts[0]
        file = Path(*rel.parts[1:]).as_posix() if len(rel.parts) > 1 else ""
        by_cluster.setdefault(name, []).append({"path": file, "change": d.kind})
    other.extend({"path": str(p), "change": kind} for kind, p in gitops)
    names = {sc.output.name for sc in plan.write} | set(plan.kept)
    clusters = []
    for name in sorted(names | set(plan.remove) | set(by_cluster)):
        changes = by_cluster.get(name, [])
        status = (
            "removed"
            if name in plan.remove
            else "unowned"  # a folder in no index entry (:func:`gpustack.synth.gate.unowned`)
            if name not in names
            else "stale"
            if changes
            else "unchanged"
        )
        clusters.append({"name": name, "status": status, "files": changes})
    return {
        "out": str(plan.out),
        "upToDate": not differences and not gitops,
        "clusters": clusters,
        "other": other,
        "renamed": [{"from": a, "to": b} for a, b in renamed],
    }


def _text(data: bytes | None) -> list[str]:
    if data is None:
        return []
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def _diff(current: bytes | None, new: bytes | None, old_path: Path, new_path: Path) -> str:
    lines = difflib.unified_diff(
        _text(current),
        _text(new),
        fromfile=f"a/{old_path}" if current is not None else "/dev/null",
        tofile=f"b/{new_path}" if new is not None else "/dev/null",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _under(path: Path, folders: Iterable[tuple[Path, Path]]) -> bool:
    return any(path.is_relative_to(f) for pair in folders for f in pair)


def unified_diffs(
    differences: Sequence[tuple[str, Path]],
    wanted: Mapping[Path, bytes],
    *,
    skip: Sequence[tuple[Path, Path]] = (),
) -> str:
    """A unified diff per file that differs, is missing or is extra (what ``synth`` would do),
    but those in the renamed folders ``skip`` (:func:`renamed_diffs` shows them); leftovers of a
    killed run are named in the listing only."""
    chunks: list[str] = []
    for kind, path in differences:
        if kind not in ("differs", "missing", "extra") or _under(path, skip):
            continue
        current = None if kind == "missing" else _read(path)
        new = wanted.get(path) if kind != "extra" else None
        chunks.append(_diff(current, new, path, path))
    return "".join(chunks)


def renamed_diffs(renamed: Sequence[tuple[Path, Path]], wanted: Mapping[Path, bytes]) -> str:
    """Per renamed cluster folder ``(old, new)``, a diff of each file from its old folder to its
    new one, where the two differ (the rename itself is the summary's one line)."""
    from gpustack.synth.plan import existing_files

    chunks: list[str] = []
    for old, new in renamed:
        current = existing_files(old)
        made = {p.relative_to(new).as_posix() for p in wanted if p.is_relative_to(new)}
        names = set(current) | made
        for rel in sorted(names):
            before = _read(current[rel]) if rel in current else None
            after = wanted.get(new / rel)
            if before != after:
                chunks.append(_diff(before, after, old / rel, new / rel))
    return "".join(chunks)


def renamed_line(plan: Plan, old: str, new: str) -> str:
    """``renamed: <old folder> → <new folder> (N files, M changed)``, from the index."""
    before, after = plan.before.clusters[old].files, plan.after.clusters[new].files
    changed = sum(1 for rel, d in after.items() if before.get(rel) != d)
    return (
        f"renamed: {plan.cluster_dir(old)} → {plan.cluster_dir(new)} "
        f"({len(after)} files, {changed} changed)"
    )


def check_lines(
    plan: Plan, stale: Sequence[tuple[str, Path]], renamed: Sequence[tuple[str, str]]
) -> list[str]:
    """``--check``'s listing: one line per renamed cluster, then ``<change>: <path>`` per other
    out-of-date file."""
    folders = [(plan.cluster_dir(a), plan.cluster_dir(b)) for a, b in renamed]
    return [renamed_line(plan, a, b) for a, b in renamed] + [
        f"{kind}: {path}" for kind, path in stale if not _under(path, folders)
    ]


def write_lines(
    plan: Plan,
    written: Sequence[str],
    removed: Sequence[str],
    renamed: Sequence[tuple[str, str]],
) -> list[str]:
    """A write's listing: ``wrote``/``removed`` per cluster folder, ``renamed`` for a pair."""
    old, new = {a for a, _ in renamed}, {b for _, b in renamed}
    return (
        [f"renamed {plan.cluster_dir(a)} → {plan.cluster_dir(b)}" for a, b in renamed]
        + [f"wrote {plan.cluster_dir(n)}" for n in written if n not in new]
        + [f"removed {plan.cluster_dir(n)}" for n in removed if n not in old]
    )


def stale_error(plan: Plan, files: int, problems: int = 0, command: str = "gpustack synth") -> str:
    """``--check``'s error line: how many files are out of date (and findings beyond them,
    listed above it), and the command that will update them: ``command`` (the run's own PATHs
    and ``--out``), with ``--prune`` when it deletes a cluster folder and ``--force`` when files
    edited by hand are in the way, which a plain run refuses (issue #32: the advice was a
    command that then asked for ``--force``)."""
    if plan.removals and not plan.prune:
        command += " --prune"
    edited = ""
    if plan.hand_edits and not plan.force:
        command += " --force"
        n = len(plan.hand_edits)
        edited = f", which overwrites {n} {'file' if n == 1 else 'files'} edited by hand"
    noun = "file" if files == 1 else "files"
    more = f", {problems} finding{'s' if problems != 1 else ''} above" if problems else ""
    return (
        f"Error: {plan.out} is out of date ({files} {noun}{more}); run `{command}` to update "
        f"it{edited}"
    )


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None
