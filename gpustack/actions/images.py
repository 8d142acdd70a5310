"""``gpustack images`` as an action: :class:`ImagesOptions` in, :func:`run`, :class:`ImagesOutcome`
out.

The profiles are found as ``gpustack synth`` finds them (the paths, else ``profiles/``),
validated and rendered in memory as ``gpustack template`` renders one
(:func:`gpustack.actions.synth.render`), writing nothing; each cluster's objects go to
:func:`gpustack.images.imageset.cluster_images`. So the list is the image set of what ``synth``
writes to ``dist/``, whether or not ``dist/`` is up to date.

Refusals are one line (:mod:`gpustack.actions.errors`): a path that does not exist, an invalid
profile (its first finding), a ``cluster`` no profile names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpustack.actions.errors import NothingFound, Refused

if TYPE_CHECKING:
    from gpustack.checker import CheckResult
    from gpustack.images.imageset import ClusterImages
    from gpustack.kube.manifests import Manifest
    from gpustack.synth.pipeline import Source
    from gpustack.synth.plan import SourcedCluster


@dataclass(frozen=True)
class ImagesOptions:
    """``paths``: profile files or folders (none: ``profiles/``); ``cluster``: only the cluster
    of that name (none: every cluster of the paths, the fleet)."""

    paths: tuple[Path, ...] = ()
    cluster: str | None = None


@dataclass(frozen=True)
class ImagesOutcome:
    """The images of each cluster, in the order of the names."""

    options: ImagesOptions
    clusters: tuple[ClusterImages, ...]


def run(options: ImagesOptions) -> ImagesOutcome:
    """Render the profiles of ``options.paths`` in memory and read each cluster's images."""
    from gpustack.images.imageset import cluster_images

    sources = _sources(options.paths)
    if options.cluster is not None:
        sources = _only(sources, options.cluster)
    rendered = _render(sources)
    clusters = [
        cluster_images(c.output.name, _manifests(c), s.profile)
        for s, c in zip(sources, rendered, strict=True)
    ]
    return ImagesOutcome(options, tuple(sorted(clusters, key=lambda c: c.name)))


def _sources(paths: tuple[Path, ...]) -> list[Source]:
    """The valid profiles of ``paths`` (``profiles/`` when none), as ``synth`` finds them."""
    from gpustack.actions.synth import NoProfiles, SynthOptions, resolve
    from gpustack.checker import check_paths
    from gpustack.synth.pipeline import Source

    for path in paths:
        if not path.exists():
            raise Refused(f"{path}: no such file or folder")
    try:
        inputs = resolve(SynthOptions(paths=paths))
    except NoProfiles as exc:
        raise NothingFound(str(exc)) from None
    result = check_paths(list(inputs.paths))
    if not result.ok:
        raise Refused(_first_finding(result))
    if not result.profiles:
        raise NothingFound(f"no profiles in {', '.join(map(str, inputs.paths))}")
    return [
        Source(p.path, p.profile, packaged=inputs.packaged, files=p.files) for p in result.profiles
    ]


def _first_finding(result: CheckResult) -> str:
    """validate's first finding, and how many more there are, as one line."""
    from gpustack.report import render_text

    lines = render_text(result).rstrip("\n").split("\n")
    findings = lines[:-1] or lines
    more = len(result.issues) - 1
    return findings[0] + (f" ({more} more; `gpustack validate` lists them)" if more else "")


def _only(sources: Sequence[Source], name: str) -> list[Source]:
    chosen = [s for s in sources if s.profile.name == name]
    if not chosen:
        names = ", ".join(sorted(s.profile.name for s in sources))
        raise Refused(f"no cluster named {name!r} (the profiles name: {names})")
    return chosen


def _render(sources: Sequence[Source]) -> list[SourcedCluster]:
    from gpustack.actions.synth import SynthOptions, render
    from gpustack.synth.errors import SynthError

    try:
        return render(sources, SynthOptions())
    except SynthError as exc:
        raise Refused(str(exc)) from None


def _manifests(cluster: SourcedCluster) -> list[Manifest]:
    """The cluster's objects, read from the files ``synth`` would write (not the kustomization)."""
    from gpustack.kube.manifests import parse
    from gpustack.synth.layout import KUSTOMIZATION_FILE

    name = cluster.output.name
    return [
        m
        for f in cluster.output.files
        if f.path != KUSTOMIZATION_FILE
        for m in parse(f.content.decode("utf-8"), f"{name}/{f.path}")
    ]
