"""Run validated profiles through the cdk8s constructs: the only place that imports cdk8s.

``gpustack validate`` never comes here, so it stays fast and works without Node. Node is checked
(and its banners silenced) before the first cdk8s import; see :mod:`gpustack.synth.node`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gpustack.profile.model import Profile
from gpustack.synth.digest import cluster_digest, generator_digest
from gpustack.synth.errors import SynthError
from gpustack.synth.fresh import input_digests, input_ref
from gpustack.synth.header import source_name, with_header
from gpustack.synth.index import profile_ref
from gpustack.synth.layout import ClusterOutput, ManifestFile, check_cluster_name
from gpustack.synth.node import prepare_node
from gpustack.synth.parallel import Progress
from gpustack.synth.spool import SPOOL_MIN, Spool
from gpustack.synth.writer import SourcedCluster


@dataclass(frozen=True)
class Source:
    """A validated profile and the file it was read from."""

    path: Path
    profile: Profile
    #: ``True`` for the packaged default profile (recorded as such in the index).
    packaged: bool = False
    #: Every file it was read from: the profile, then its bases (default: the profile alone).
    files: tuple[Path, ...] = ()


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


def synthesize_clusters(
    sources: Sequence[Source],
    out: Path,
    *,
    jobs: int = 1,
    on_done: Progress | None = None,
) -> list[SourcedCluster]:
    """Synthesize and lay out every profile (in ``jobs`` processes; see
    :mod:`gpustack.synth.parallel`); index references are relative to ``out``, and each cluster
    carries the digest of what it was made from (:mod:`gpustack.synth.digest`). A fleet's
    files are kept in a spool on disk from the moment each cluster arrives
    (:mod:`gpustack.synth.spool`)."""
    check_names(sources)
    prepare_node()
    from gpustack.synth.parallel import synthesize_many

    spool = Spool() if len(sources) >= SPOOL_MIN else None

    def keep(i: int, output: ClusterOutput) -> ClusterOutput:
        # as each cluster arrives: a fleet's files are never all in memory (issue #37)
        output = labelled(output, source_name(sources[i].path))
        return output if spool is None else spool.keep(output)

    outputs = synthesize_many([(s.path, s.profile) for s in sources], jobs, on_done, keep)
    generator = generator_digest()
    clusters = []
    for s, output in zip(sources, outputs, strict=True):
        read = s.files or (s.path,)
        inputs = input_digests([input_ref(f, out, packaged=s.packaged) for f in read], out)
        gitops = s.profile.gitops
        clusters.append(
            SourcedCluster(
                output=output,
                profile=profile_ref(None if s.packaged else s.path, out),
                digest=None if inputs is None else cluster_digest(generator, inputs),
                inputs=inputs or {},
                delivery=gitops.argocd.enabled or gitops.flux.enabled,
            )
        )
    return clusters


def labelled(output: ClusterOutput, source: str) -> ClusterOutput:
    """``output`` with the generated-file header (:mod:`gpustack.synth.header`) naming
    ``source`` on every file, the kustomization included."""
    return ClusterOutput(
        output.name,
        tuple(
            ManifestFile(f.path, with_header(f.content, (source,)), f.head) for f in output.files
        ),
    )
