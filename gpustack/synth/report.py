"""What ``gpustack synth`` tells a person (or a program) while and after it runs.

* :class:`ProgressLine`: one self-overwriting count on stderr ("synthesizing 120/1000
  clusters"), only when stderr is a terminal and the work has already taken a moment, so logs
  and pipes never get it and short runs stay silent;
* :func:`write_json` / :func:`check_json`: ``--format json`` documents, one per run, per cluster
  ``written``/``unchanged``/``removed`` (``--check``: ``stale``/``unchanged``/``removed``) with
  its files;
* :func:`unified_diffs`: ``--check --diff``, the change a run would make to each file.

Exit statuses (documented in the README): 0 done or up to date, 1 invalid input or a refusal
(one ``Error:`` line), 2 usage error, :data:`STALE` ``--check`` found the output out of date.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from gpustack.synth.compare import Difference
from gpustack.synth.plan import Plan

#: ``synth --check``: the output is out of date (distinct from 1, invalid input).
STALE = 3


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
    plan: Plan, differences: Sequence[Difference], gitops: Sequence[tuple[str, Path]]
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
    for name in sorted(names | set(plan.remove)):
        changes = by_cluster.get(name, [])
        status = "removed" if name in plan.remove else "stale" if changes else "unchanged"
        clusters.append({"name": name, "status": status, "files": changes})
    return {
        "out": str(plan.out),
        "upToDate": not differences and not gitops,
        "clusters": clusters,
        "other": other,
    }


def _text(data: bytes | None) -> list[str]:
    if data is None:
        return []
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def unified_diffs(differences: Sequence[tuple[str, Path]], wanted: Mapping[Path, bytes]) -> str:
    """A unified diff per file that differs, is missing or is extra (what ``synth`` would do);
    other differences (the index, leftovers) are named in the listing only."""
    chunks: list[str] = []
    for kind, path in differences:
        if kind not in ("differs", "missing", "extra"):
            continue
        current = None if kind == "missing" else _read(path)
        new = wanted.get(path) if kind != "extra" else None
        lines = difflib.unified_diff(
            _text(current),
            _text(new),
            fromfile=f"a/{path}" if current is not None else "/dev/null",
            tofile=f"b/{path}" if new is not None else "/dev/null",
        )
        text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
        chunks.append(text)
    return "".join(chunks)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None
