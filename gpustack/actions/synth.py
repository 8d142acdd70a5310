"""Synthesis as an action: :class:`SynthOptions` in, :func:`run`, :class:`SynthOutcome` out.

The way helm's ``pkg/action`` stands behind ``pkg/cmd``: everything ``gpustack synth`` does
lives here, in named phases (resolve the inputs, read the index, find the fresh clusters,
validate, render, deliver, write or compare), and the command only turns options into a
:class:`SynthOptions` and the outcome into text, JSON and an exit status. ``gpustack template``
renders one profile with :func:`render_one`, the same validate and render phases (the Argo CD
plugin's ``generate`` runs them as steps of its own: :mod:`gpustack.actions.argocd`).

Bad input is an outcome, not an exception: ``refused`` holds the validation result, and nothing
was written. Refusals of the output folder (a hand edit, a foreign folder) raise
:class:`~gpustack.synth.errors.SynthError` with one line; :class:`NoProfiles` is a usage error.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gpustack.actions.synth_check import Gate, compare, why_no_cluster
from gpustack.checker import CheckResult, check_paths
from gpustack.synth.baseline import trusted
from gpustack.synth.compare import Difference
from gpustack.synth.errors import SynthError
from gpustack.synth.fresh import Fresh
from gpustack.synth.index import IndexEntry, OwnershipIndex
from gpustack.synth.pipeline import Source
from gpustack.synth.plan import Plan, SourcedCluster
from gpustack.synth.sources import Inputs
from gpustack.synth.writer import Outcome as WriteOutcome
from gpustack.synth.writer import locked

if TYPE_CHECKING:
    from gpustack.gitops.delivery import Delivery


def _ignore(*_: object) -> None:
    return None


class NoProfiles(Exception):
    """The paths hold no profile at all (a usage error, not invalid input)."""


@dataclass(frozen=True)
class SynthOptions:
    """What to synthesize where, and how (``gpustack synth``'s options).

    - ``paths``: profile files or folders (none: ``profiles/``, or the packaged default).
    - ``check``: write nothing; compare. ``diff``: with ``check``, unified diffs of each change.
    - ``base``, ``full``: with ``check``, what the fresh check trusts: the index committed at git
      ref ``base``, or nothing (:mod:`gpustack.synth.baseline`); by default the working tree's.
    - ``force``, ``prune``: see :func:`gpustack.synth.writer.run`.
    - ``default_profile``: synthesize the packaged default profile.
    - ``jobs``: processes rendering changed clusters (``None``: the CPU count).
    - ``progress``: a progress line on stderr while rendering.
    - ``on_note``: gets each one-line note for the user when it arises: why the GitOps folder
      was left alone, and (unless ``quiet``) that the packaged default profile is used and
      each notice of the profiles checked (a Kubernetes release past its end of life; a cluster
      that is not checked again because nothing changed prints none).
      ``on_wait``: called when another run holds the output folder.
    """

    paths: tuple[Path, ...] = ()
    out: Path = Path("dist")
    check: bool = False
    diff: bool = False
    base: str | None = None
    full: bool = False
    force: bool = False
    prune: bool = False
    default_profile: bool = False
    jobs: int | None = None
    progress: bool = False
    quiet: bool = False
    on_note: Callable[[str], None] = field(default=_ignore, compare=False)
    on_wait: Callable[[], None] = field(default=_ignore, compare=False)


@dataclass(frozen=True)
class SynthOutcome:
    """What a run did (or, with ``check``, found).

    - ``refused``: the validation result when a profile is invalid (nothing else happened).
    - ``plan``: the plan carried out or compared.
    - ``written``, ``unchanged``, ``removed``: cluster names (a write).
    - ``stale``: ``(change, path)`` of every out-of-date file (``check``), GitOps files
      included; ``differences``: the cluster files' part of it, as compared.
    - ``gitops``: ``(what, path)`` of the GitOps folder's files written (or, with ``check``,
      differing).
    - ``diffs``: unified diffs of ``stale`` (``check`` with ``diff``).
    - ``renamed``: ``(old, new)`` cluster names whose folder this run renames (or would).
    - ``rollout``: notes on what the nodes take only when told (a driver or MIG layout change;
      :mod:`gpustack.synth.rollout`), after a write.
    """

    options: SynthOptions
    refused: CheckResult | None = None
    plan: Plan | None = None
    written: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    #: index entries whose folder was already gone, dropped from the index (a write)
    forgotten: tuple[str, ...] = ()
    stale: tuple[tuple[str, Path], ...] = ()
    differences: tuple[Difference, ...] = ()
    gitops: tuple[tuple[str, Path], ...] = ()
    diffs: str = ""
    renamed: tuple[tuple[str, str], ...] = ()
    rollout: tuple[str, ...] = ()
    #: ``check``: a line per finding beyond a file that differs (:mod:`gpustack.synth.gate`):
    #: a folder nobody owns, a profile that stopped being one, an index entry not as computed.
    problems: tuple[str, ...] = ()


def run(options: SynthOptions) -> SynthOutcome:
    """Synthesize (or check) ``options.paths`` into ``options.out``: validate every profile
    first (nothing is written when one is invalid), render the changed clusters, then write or
    compare them and the GitOps folder, under the output folder's lock."""
    from gpustack.synth.heap import keep_heap

    keep_heap()
    inputs = resolve(options)
    try:
        with locked(options.out, shared=options.check, on_wait=options.on_wait):
            index_bytes, index = read_state(options)
            trust = trusted(options.out, index, base=options.base, full=options.full)
            committed = trust.tree.committed if trust.tree is not None else None
            fresh = find_fresh(options, inputs, trust.index, committed)
            result = validate(inputs, fresh)
            for base in result.bases if not options.quiet else ():
                options.on_note(f"{base.file}: note: {base.what}")
            if not result.ok:
                raise _Refused(result)  # leaves the lock as a failure: no folder created stays
            for notice in result.notices if not options.quiet else ():
                options.on_note(str(notice))
            if not result.profiles and not fresh:
                paths = ", ".join(map(str, inputs.paths))
                raise NoProfiles(f"no *.yaml profiles found in {paths}")
            sources = [
                Source(p.path, p.profile, packaged=inputs.packaged, files=p.files)
                for p in result.profiles
            ]
            clusters = render(sources, options)
            # only the working tree's own index may vouch for the GitOps folder unchanged
            gitops_index = index if trust.own else None
            gate = Gate(trust, why_no_cluster(options.out, inputs, result, fresh), index)
            return write_or_check(
                options, sources, clusters, fresh, gitops_index, index_bytes, gate
            )
    except _Refused as refused:
        return SynthOutcome(options, refused=refused.result)


class _Refused(Exception):
    def __init__(self, result: CheckResult) -> None:
        super().__init__("invalid profiles")
        self.result = result


def resolve(options: SynthOptions) -> Inputs:
    """Phase 1: the profile paths (explicit, ``profiles/``, or the packaged default)."""
    from gpustack.synth.sources import NoProfilesHere, resolve_inputs

    try:
        return resolve_inputs(options.paths, out=options.out, default=options.default_profile)
    except NoProfilesHere as exc:
        raise NoProfiles(str(exc)) from None


def read_state(options: SynthOptions) -> tuple[bytes | None, OwnershipIndex | None]:
    """Phase 2: the index's bytes and content (``None`` for a broken one with ``force``)."""
    from gpustack.synth.index import index_path, read_index
    from gpustack.synth.plan import read_plain

    index_bytes = read_plain(index_path(options.out))
    try:
        return index_bytes, read_index(options.out)
    except SynthError:
        if not options.force:
            raise
        return index_bytes, None


def find_fresh(
    options: SynthOptions,
    inputs: Inputs,
    index: OwnershipIndex | None,
    committed: Callable[[Path, bytes], bool] | None = None,
) -> dict[Path, Fresh]:
    """Phase 3: the clusters whose inputs, generator and folder are as the index records
    (neither validated nor rendered again); Node starts in the background once one is not.
    ``committed``: under ``--base``, whether an input is the file committed there."""
    from gpustack.scan import scan
    from gpustack.synth.digest import generator_digest
    from gpustack.synth.fresh import fresh_clusters
    from gpustack.synth.parallel import default_jobs, prepare_to_synthesize

    jobs = options.jobs or default_jobs()
    return fresh_clusters(
        scan(list(inputs.paths)).files,
        options.out,
        index,
        generator_digest(),
        packaged=inputs.packaged,
        on_stale=lambda n: prepare_to_synthesize(n, jobs),
        committed=committed,
        record=not options.check,
    )


def validate(inputs: Inputs, fresh: dict[Path, Fresh]) -> CheckResult:
    """Phase 4: every profile that is not fresh, checked as ``gpustack validate`` does."""
    return check_paths(list(inputs.paths), skip=fresh.__contains__)


def render(sources: Sequence[Source], options: SynthOptions) -> list[SourcedCluster]:
    """Phase 5: each source's cluster folder, rendered (in ``options.jobs`` processes)."""
    from gpustack.synth.parallel import default_jobs
    from gpustack.synth.pipeline import synthesize_clusters
    from gpustack.synth.report import ProgressLine

    if not sources:
        return []
    progress = ProgressLine(sys.stderr, len(sources), enabled=options.progress)
    try:
        jobs = options.jobs or default_jobs()
        return synthesize_clusters(sources, options.out, jobs=jobs, on_done=progress)
    finally:
        progress.close()


def write_or_check(
    options: SynthOptions,
    sources: Sequence[Source],
    clusters: Sequence[SourcedCluster],
    fresh: dict[Path, Fresh],
    index: OwnershipIndex | None,
    index_bytes: bytes | None,
    gate: Gate | None = None,
) -> SynthOutcome:
    """Phase 6: the GitOps files, then the clusters and the GitOps folder written (or
    compared), and the fleet recorded once written."""
    from gpustack.gitops.delivery import write_or_compare
    from gpustack.synth.rollout import changes, notes

    out, check, force, prune = options.out, options.check, options.force, options.prune
    kept: dict[str, IndexEntry] = {f.name: f.entry for f in fresh.values()}
    not_a_profile = gate.not_a_profile if gate is not None else None
    delivery = deliver(options, sources, clusters, kept, index, not_a_profile)
    # what the nodes take only when told, read from the folders before the write replaces them
    rollout = () if check else tuple(notes(*changes(out, clusters)))
    parsed = gate.index if gate is not None else index  # what index_bytes hold, parsed
    done = write_clusters(options, clusters, kept, index_bytes, not_a_profile, parsed)
    gitops = tuple(write_or_compare(delivery.files, out, check=check, force=force, prune=prune))
    if check:
        return _checked(options, done, gitops, delivery.files, gate, delivery.fleet)
    return _written(options, done, gitops, delivery.fleet, rollout)


def deliver(
    options: SynthOptions,
    sources: Sequence[Source],
    clusters: Sequence[SourcedCluster],
    kept: dict[str, IndexEntry],
    index: OwnershipIndex | None,
    not_a_profile: Callable[[str], str | None] | None,
) -> Delivery:
    """Step 6a: the GitOps folder's files for the fleet (refused before anything is written),
    and the note on why it is left alone, if it is."""
    from gpustack.gitops.delivery import delivery_files

    delivery = delivery_files(
        sources,
        clusters,
        kept,
        index,
        options.out,
        check=options.check,
        force=options.force,
        prune=options.prune,
        not_a_profile=not_a_profile,
    )
    if delivery.note:
        options.on_note(delivery.note)
    return delivery


def write_clusters(
    options: SynthOptions,
    clusters: Sequence[SourcedCluster],
    kept: dict[str, IndexEntry],
    index_bytes: bytes | None,
    not_a_profile: Callable[[str], str | None] | None,
    index: OwnershipIndex | None = None,
) -> WriteOutcome:
    """Step 6b: the cluster folders and the index written (or compared) by
    :func:`gpustack.synth.writer.run`, counted on the progress line while written."""
    from gpustack.synth import writer
    from gpustack.synth.report import ProgressLine

    # the write phase of a large fleet takes as long as rendering it: counted on the same line
    enabled = options.progress and not options.check
    progress = ProgressLine(sys.stderr, 0, enabled=enabled, verb="wrote")
    try:
        return writer.run(
            options.out,
            clusters,
            check=options.check,
            force=options.force,
            prune=options.prune,
            kept=kept,
            index_bytes=index_bytes,
            on_staged=progress,
            not_a_profile=not_a_profile,
            index=index,
        )
    finally:
        progress.close()


def _written(
    options: SynthOptions,
    done: WriteOutcome,
    gitops: tuple[tuple[str, Path], ...],
    fleet: str | None,
    rollout: tuple[str, ...],
) -> SynthOutcome:
    """Step 6c, a write's outcome: the fleet recorded in the index once ``gitops/`` is
    written, a warning per path left that gpustack does not own, the clusters by what
    happened to them."""
    from gpustack.synth import writer
    from gpustack.synth.gate import unowned
    from gpustack.synth.renames import renames

    if fleet is not None:
        writer.record_gitops(options.out, fleet, done.plan.after)
    for line in unowned(done.plan)[0]:  # gpustack deletes only what it owns: the user is told
        options.on_note(f"gpustack: warning: {line}")
    summary = done.summary
    assert summary is not None
    return SynthOutcome(
        options,
        plan=done.plan,
        written=tuple(summary.written),
        unchanged=tuple(summary.unchanged),
        removed=tuple(summary.removed),
        forgotten=tuple(summary.forgotten),
        gitops=gitops,
        renamed=renames(done.plan) if summary.removed else (),
        rollout=rollout,
    )


def _checked(
    options: SynthOptions,
    done: WriteOutcome,
    gitops: tuple[tuple[str, Path], ...],
    delivered: dict[str, bytes] | None,
    gate: Gate | None = None,
    fleet: str | None = None,
) -> SynthOutcome:
    """A ``check`` run's outcome: what :func:`gpustack.actions.synth_check.compare` found."""
    found = compare(done, gitops, delivered, gate, fleet, diff=options.diff)
    return SynthOutcome(
        options,
        plan=done.plan,
        stale=found.stale,
        differences=found.differences,
        gitops=gitops,
        diffs=found.diffs,
        renamed=found.renamed,
        problems=found.problems,
    )


@dataclass(frozen=True)
class Rendered:
    """One profile rendered without writing (``gpustack template``): its cluster, or the
    validation result that refused it."""

    cluster: SourcedCluster | None = None
    refused: CheckResult | None = None
    #: the files the cluster was made from (the profile, then each base it extends), as the
    #: loader named them: what the Argo CD plugin's warm renderer keys its cache on
    files: tuple[Path, ...] = ()


def render_one(profile: Path) -> Rendered:
    """Validate and render one profile, as :func:`run` does (phases 4 and 5), writing
    nothing."""
    result = check_paths([profile])
    if not result.ok or len(result.profiles) != 1:
        return Rendered(refused=result)
    (loaded,) = result.profiles
    (cluster,) = render([Source(loaded.path, loaded.profile)], SynthOptions(jobs=1))
    return Rendered(cluster=cluster, files=loaded.files)
