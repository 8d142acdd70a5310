"""Run validated profiles through the cdk8s constructs: the only place that imports cdk8s.

``gpustack validate`` never comes here, so it stays fast and works without Node. Node is checked
(and its banners silenced) before the first cdk8s import; see :mod:`gpustack.synth.node`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gpustack.profile.model import Profile
from gpustack.synth.errors import SynthError
from gpustack.synth.index import profile_ref
from gpustack.synth.layout import check_cluster_name, layout_cluster
from gpustack.synth.node import prepare_node
from gpustack.synth.writer import SourcedCluster


@dataclass(frozen=True)
class Source:
    """A validated profile and the file it was read from."""

    path: Path
    profile: Profile
    #: ``True`` for the packaged default profile (recorded as such in the index).
    packaged: bool = False


def check_names(sources: Sequence[Source]) -> None:
    """Cluster names must be unique and usable as folder names, checked before Node starts."""
    first: dict[str, Path] = {}
    for s in sources:
        name = s.profile.metadata.name
        check_cluster_name(name)
        if name in first:
            raise SynthError(
                f"{first[name]} and {s.path} both have metadata.name {name!r}; each profile "
                "needs its own cluster name"
            )
        first[name] = s.path


def synthesize_clusters(sources: Sequence[Source], out: Path) -> list[SourcedCluster]:
    """Synthesize and lay out every profile; index references are relative to ``out``."""
    check_names(sources)
    prepare_node()
    from gpustack.constructs import synthesize  # imports cdk8s: keep it out of module scope

    clusters = []
    for s in sources:
        try:
            objects = synthesize(s.profile)
        except ValueError as exc:
            # Props reject a combination validation let through: still the user's input, so one
            # line naming the profile, not a traceback.
            raise SynthError(f"{s.path}: {exc}") from exc
        clusters.append(
            SourcedCluster(
                output=layout_cluster(s.profile.metadata.name, objects),
                profile=profile_ref(None if s.packaged else s.path, out),
            )
        )
    return clusters
