"""``<out>/gitops/``: which Argo CD and Flux objects a synth run delivers, and writing or
comparing them (the ``synth`` command calls this; the objects themselves are
:mod:`gpustack.gitops.objects`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpustack.synth.errors import SynthError
from gpustack.synth.index import IndexEntry, OwnershipIndex
from gpustack.synth.pipeline import Source
from gpustack.synth.writer import SourcedCluster

if TYPE_CHECKING:
    from gpustack.gitops.objects import Delivered


@dataclass(frozen=True)
class Delivery:
    """``<out>/gitops/``'s files (``None``: leave the folder alone), the fleet digest to
    record once they are written (``None``: none) and a note for the user (why the folder was
    left alone)."""

    files: dict[str, bytes] | None
    fleet: str | None = None
    note: str | None = None


def delivery_files(
    sources: Sequence[Source],
    clusters: Sequence[SourcedCluster],
    kept: Mapping[str, IndexEntry],
    index: OwnershipIndex | None,
    out: Path,
    *,
    check: bool,
    force: bool,
    prune: bool,
    not_a_profile: Callable[[str], str | None] | None = None,
) -> Delivery:
    """The files of ``<out>/gitops/`` (see :mod:`gpustack.gitops`), refused before anything is
    written if they need ``--force`` or ``--prune``; ``None`` when this run must leave the folder
    alone: only a run covering every cluster of the output folder (whose profile still exists)
    touches it, since the ApplicationSet lists the whole fleet. When every delivered cluster is
    as it was when the folder was last generated (the fleet digest in the index) and the folder
    holds what gpustack wrote, nothing is computed: its files can't have changed."""
    from gpustack.gitops import output
    from gpustack.gitops.objects import GITOPS_DIR, gitops_files
    from gpustack.gitops.repository import check_output_path

    left_out = _left_out(clusters, kept, index, out, not_a_profile)
    if left_out and not _delivers(clusters, kept, index):
        return Delivery(None)
    if left_out:
        return Delivery(
            None,
            note=f"gpustack: {out / GITOPS_DIR} not updated: this run leaves out "
            f"{', '.join(left_out[:3])}{', ...' if len(left_out) > 3 else ''} (synthesize all "
            "profiles to update it)",
        )
    fleet = _fleet(clusters, kept, out)
    if fleet is not None and index is not None and _as_recorded(fleet, index, out):
        return Delivery(None)
    pairs = _delivered(sources, clusters, kept, out)
    for pair in pairs:
        if pair.profile.gitops.argocd.enabled or pair.profile.gitops.flux.enabled:
            check_output_path(pair.profile, out)
    files = gitops_files(pairs)
    if not check:
        output.confirm(out, output.compare(out, files), force=force, prune=prune)
    return Delivery(files, fleet)


def _left_out(
    clusters: Sequence[SourcedCluster],
    kept: Mapping[str, IndexEntry],
    index: OwnershipIndex | None,
    out: Path,
    not_a_profile: Callable[[str], str | None] | None,
) -> list[str]:
    """The output folder's clusters this run neither produces nor keeps, whose profile still
    exists. A cluster whose profile is part of this run but names another cluster now (a
    rename) is removed, not left out."""
    from gpustack.synth.index import profile_exists

    produced = {c.output.name for c in clusters} | set(kept)
    in_run = {c.profile for c in clusters} | {e.profile for e in kept.values()}
    return sorted(
        name
        for name, entry in (index.clusters.items() if index else ())
        if name not in produced
        and entry.profile not in in_run
        and profile_exists(entry.profile, out)
        and (not_a_profile is None or not_a_profile(entry.profile) is None)
    )


def _delivers(
    clusters: Sequence[SourcedCluster],
    kept: Mapping[str, IndexEntry],
    index: OwnershipIndex | None,
) -> bool:
    """Whether any cluster, of this run or of the index, delivers: with none, there is no
    folder to update."""
    return any(c.delivery for c in clusters) or any(
        e.delivery for e in [*kept.values(), *(index.clusters.values() if index else ())]
    )


def _fleet(
    clusters: Sequence[SourcedCluster], kept: Mapping[str, IndexEntry], out: Path
) -> str | None:
    """The fleet digest of the delivered clusters; ``None`` when one of them has no digest."""
    from gpustack.gitops.repository import output_location
    from gpustack.synth.digest import fleet_digest, generator_digest

    delivered = [(c.output.name, c.digest) for c in clusters if c.delivery]
    delivered += [(n, e.digest) for n, e in kept.items() if e.delivery]
    digests = [(n, d) for n, d in delivered if d is not None]
    if len(digests) != len(delivered):
        return None
    return fleet_digest(generator_digest(), digests, output_location(out))


def _as_recorded(fleet: str, index: OwnershipIndex, out: Path) -> bool:
    """Whether the folder was generated for this fleet and still holds what gpustack wrote."""
    from gpustack.gitops import output
    from gpustack.gitops.objects import GITOPS_DIR
    from gpustack.synth.plan import digests_of

    if index.gitops != fleet:
        return False
    record = read_plain_json(out / ".gpustack" / output.RECORD)
    return digests_of(out / GITOPS_DIR) == record


def _delivered(
    sources: Sequence[Source],
    clusters: Sequence[SourcedCluster],
    kept: Mapping[str, IndexEntry],
    out: Path,
) -> list[Delivered]:
    """Each delivering cluster's profile and folder: this run's, then the fresh ones, whose
    profiles and folders are read back."""
    from gpustack.checker import check_paths
    from gpustack.gitops.objects import Delivered, plugin_inputs, plugin_source
    from gpustack.synth.fresh import kept_output, ref_path
    from gpustack.synth.header import source_name

    pairs = [
        Delivered(
            s.profile,
            c.output,
            plugin_source(s.profile, s.path, out),
            plugin_inputs(s.profile, s.files or (s.path,), out),
            source_name(s.path),
        )
        for s, c in zip(sources, clusters, strict=True)
    ]
    again = [(n, e) for n, e in sorted(kept.items()) if e.delivery]
    if not again:
        return pairs
    loaded = check_paths([ref_path(e.profile, out) for _, e in again])
    if not loaded.ok or len(loaded.profiles) != len(again):
        raise SynthError("profiles changed while synth was running; run again")
    return pairs + [
        Delivered(
            p.profile,
            kept_output(out, n),
            plugin_source(p.profile, p.path, out),
            plugin_inputs(p.profile, p.files or (p.path,), out),
            source_name(p.path),
        )
        for (n, _), p in zip(again, loaded.profiles, strict=True)
    ]


def read_plain_json(path: Path) -> dict[str, str]:
    """The ``files`` of gpustack's record of ``<out>/gitops/`` (empty when there is none)."""
    import json

    from gpustack.limits import Refused, read_limited
    from gpustack.synth.index import MAX_INDEX_BYTES

    try:
        doc = json.loads(read_limited(path, MAX_INDEX_BYTES, what="gpustack record"))
    except (Refused, ValueError):
        return {}
    files = doc.get("files") if isinstance(doc, dict) else None
    return dict(files) if isinstance(files, dict) else {}


def write_or_compare(
    files: dict[str, bytes] | None, out: Path, *, check: bool, force: bool, prune: bool
) -> list[tuple[str, Path]]:
    """Write or compare ``<out>/gitops/``: ``(what, path)`` pairs, the differences with
    ``check``, else what was written."""
    from gpustack.gitops import output
    from gpustack.gitops.objects import GITOPS_DIR
    from gpustack.synth.writer import locked

    if files is None:
        return []
    folder = out / GITOPS_DIR
    with locked(out, shared=check):
        change = (
            output.compare(out, files)
            if check
            else output.write(out, files, force=force, prune=prune)
        )
    if check:
        return [
            *(("missing", folder / r) for r in change.added),
            *(("differs", folder / r) for r in change.changed),
            *(("extra", folder / r) for r in change.removed),
        ]
    if change.removed and not files:
        return [("removed", folder)]
    return [("wrote", folder)] if change.stale else []
