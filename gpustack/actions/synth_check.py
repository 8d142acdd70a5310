"""What ``gpustack synth --check`` finds, beyond rendering: stale files, diffs, the gate.

A check compares what a run would write with what is there, and a gate's check (``--base REF``,
``--full``) also says what it could not vouch for: a folder nobody owns, a profile that stopped
being one, an index not as computed (:mod:`gpustack.synth.gate`). A write needs none of it, so
it stands here, beside :mod:`gpustack.actions.synth`, which runs it and turns :class:`Checked`
into its outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpustack.checker import CheckResult
from gpustack.synth.baseline import Trust
from gpustack.synth.compare import Difference
from gpustack.synth.fresh import Fresh
from gpustack.synth.index import OwnershipIndex
from gpustack.synth.plan import Plan
from gpustack.synth.sources import Inputs
from gpustack.synth.writer import Outcome as WriteOutcome


@dataclass(frozen=True)
class Gate:
    """What a run knows beyond its clusters, for the findings of :mod:`gpustack.synth.gate`:
    what it trusts, why a file it looked at made no cluster, and the working tree's index."""

    trust: Trust
    not_a_profile: Callable[[str], str | None] | None = None
    index: OwnershipIndex | None = None

    @property
    def mode(self) -> str | None:
        """``--base REF`` or ``--full`` for a gate's check; ``None`` for a plain one."""
        if self.trust.own:
            return None
        return f"--base {self.trust.ref}" if self.trust.ref is not None else "--full"


def why_no_cluster(
    out: Path, inputs: Inputs, result: CheckResult, fresh: dict[Path, Fresh]
) -> Callable[[str], str | None] | None:
    """Why a file among the run's paths (``out``: the output folder) made no cluster
    (:func:`gpustack.synth.gate.covered_by`)."""
    from gpustack.synth.gate import covered_by
    from gpustack.synth.index import profile_ref

    if inputs.packaged:
        return None
    prefix = "not a gpustack profile ("
    skipped = {
        profile_ref(Path(s.file), out): (
            s.what[len(prefix) : -1] if s.what.startswith(prefix) else s.what
        )
        for s in result.skipped
    }
    made = {profile_ref(p.path, out) for p in result.profiles}
    made.update(f.entry.profile for f in fresh.values())
    return covered_by(list(inputs.paths), out, skipped, made)


@dataclass(frozen=True)
class Checked:
    """What a check found (see :class:`gpustack.actions.synth.SynthOutcome`, whose fields of
    the same names these become)."""

    stale: tuple[tuple[str, Path], ...]
    differences: tuple[Difference, ...]
    diffs: str
    renamed: tuple[tuple[str, str], ...]
    problems: tuple[str, ...]


def compare(
    done: WriteOutcome,
    gitops: tuple[tuple[str, Path], ...],
    delivered: dict[str, bytes] | None,
    gate: Gate | None = None,
    fleet: str | None = None,
    *,
    diff: bool = False,
) -> Checked:
    """A ``check`` run's findings: every out-of-date file, and their diffs when asked for."""
    from gpustack.synth.index import index_path
    from gpustack.synth.renames import renames
    from gpustack.synth.report import renamed_diffs, unified_diffs

    plan, out = done.plan, done.plan.out
    problems, differences, expected = _gate_findings(plan, done.differences, gate, fleet, delivered)
    stale = tuple((d.kind, d.path) for d in differences) + gitops
    renamed = renames(plan)
    diffs = ""
    if diff:
        wanted = {
            plan.cluster_dir(sc.output.name) / f.path: f.content
            for sc in plan.write
            for f in sc.output.files
        }
        # the index as the run would write it: a diff of its entries, never a deletion
        wanted[index_path(out)] = expected or plan.after.to_bytes()
        if delivered is not None:
            from gpustack.gitops.objects import GITOPS_DIR

            wanted.update((out / GITOPS_DIR / r, c) for r, c in delivered.items())
        folders = [(plan.cluster_dir(a), plan.cluster_dir(b)) for a, b in renamed]
        diffs = renamed_diffs(folders, wanted) + unified_diffs(stale, wanted, skip=folders)
    return Checked(stale, differences, diffs, renamed, tuple(problems))


def _gate_findings(
    plan: Plan,
    differences: Sequence[Difference],
    gate: Gate | None,
    fleet: str | None,
    delivered: dict[str, bytes] | None,
) -> tuple[list[str], tuple[Difference, ...], bytes | None]:
    """The findings of :mod:`gpustack.synth.gate` for a check: lines, the differences with the
    paths nobody owns added (and, for a gate, the index when its provenance differs), and, for a
    gate, the index's bytes as the run would leave them."""
    from dataclasses import replace

    from gpustack.synth import gate as findings
    from gpustack.synth.index import index_path
    from gpustack.synth.plan import read_plain

    lines, extra = findings.unowned(plan)
    diffs = [*differences, *extra]
    expected = None  # a plain check compares ownership only (compare.py): no second dump
    if gate is None:
        return lines, tuple(diffs), expected
    not_a_profile = gate.not_a_profile or (lambda _: None)
    named: set[str] = set()
    at = gate.trust.ref if gate.trust.tree is not None else None
    sources = [(plan.before, "")] + ([(gate.trust.index, at)] if at and gate.trust.index else [])
    for index, where in sources:
        for name, entry in sorted(index.clusters.items()):
            if name in plan.after.clusters or name in named:
                continue
            why = not_a_profile(entry.profile)
            if why is not None:
                named.add(name)
                lines.append(findings.not_a_profile_line(name, entry, why, plan.out, where or ""))
    if gate.mode is not None:
        lines.extend(findings.left_out(plan, gate.mode))
        # a write records the fleet digest once it has written gitops/ (and only a known one)
        recorded = delivered is not None and fleet is not None
        after = replace(plan.after, gitops=fleet) if recorded else plan.after
        expected = after.to_bytes()
        path = index_path(plan.out)
        if read_plain(path) != expected:
            lines.extend(findings.index_lines(gate.index, after))
            if not any(d.path == path for d in diffs):
                diffs.append(Difference("differs", path))
    return lines, tuple(diffs), expected
