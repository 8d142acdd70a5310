"""``gitops``: how a cluster's committed folder reaches the cluster (Argo CD and/or Flux).

With ``repoURL`` set and a tool enabled, ``gpustack synth`` writes that tool's objects next to
``dist/clusters/`` (in ``dist/gitops/``; see :mod:`gpustack.gitops`), so they are generated from
the same profile as the stack instead of copied from the docs. Put the section in a base
(``extends``) to set it once for a fleet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpustack.fields import key
from gpustack.profile.model.common import DNS_LABEL

#: A Flux duration (``10m``, ``1h30m``, ``45s``).
DURATION = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"
FluxSource = Literal["git", "oci"]
#: How Argo CD gets a cluster's manifests: the committed folder, or rendered by gpustack's
#: config management plugin from the profile.
ArgoRender = Literal["committed", "plugin"]


@dataclass(frozen=True)
class ArgoCd:
    """Argo CD: an ApplicationSet (one Application per cluster folder) and its AppProject."""

    enabled: bool = key(
        "Enabled",
        "Write the Argo CD ApplicationSet and AppProject into dist/gitops/argocd/.",
        default=False,
    )
    namespace: str = key(
        "Namespace",
        "Namespace Argo CD runs in (where ApplicationSets and AppProjects live).",
        default="argocd",
        pattern=DNS_LABEL,
    )
    project: str = key(
        "Project",
        "AppProject of the cluster's Application; gpustack writes it, allowing only this "
        "repository, the cluster and the kinds the stack holds.",
        default="gpustack",
        pattern=DNS_LABEL,
    )
    render: ArgoRender = key(
        "Render",
        "committed: each Application applies the committed cluster folder "
        "(<path>/clusters/<name>); plugin: Argo CD renders the cluster from this profile with "
        "gpustack's config management plugin (the sidecar built from cmp-image/), at the same "
        "revision. Clusters of one project share it.",
        default="committed",
    )


@dataclass(frozen=True)
class Flux:
    """Flux: per cluster a source (GitRepository or OCIRepository) and a Kustomization."""

    enabled: bool = key(
        "Enabled",
        "Write the cluster's Flux source and Kustomization into dist/gitops/flux/<cluster>/.",
        default=False,
    )
    namespace: str = key(
        "Namespace", "Namespace of the Flux objects.", default="flux-system", pattern=DNS_LABEL
    )
    source: FluxSource = key(
        "Source",
        "git: a GitRepository of repoURL (sparse checkout of the cluster folder); oci: an "
        "OCIRepository of ociURL, an artifact of the output folder (`flux push artifact`).",
        default="git",
    )
    oci_url: str | None = key(
        "OCI URL",
        "Repository of the OCI artifact (source: oci); its tag is gitops.revision.",
        default=None,
        name="ociURL",
        pattern=r"^oci://\S+$",
        examples=["oci://registry.example.com/gpu/gpu-clusters"],
    )
    interval: str = key("Interval", "How often Flux reconciles.", default="10m", pattern=DURATION)
    timeout: str = key(
        "Timeout",
        "How long the health checks may take (the driver compiles its module first).",
        default="30m",
        pattern=DURATION,
    )


@dataclass(frozen=True)
class GitOps:
    """How the committed output is delivered; nothing is written unless a tool is enabled."""

    repo_url: str | None = key(
        "Repository URL",
        "Git repository holding the committed output (dist/); needed by Argo CD and Flux's git "
        "source.",
        default=None,
        name="repoURL",
        pattern=r"^(https?://|ssh://|git@)\S+$",
        examples=["https://git.example.com/platform/gpu-clusters.git"],
    )
    revision: str = key(
        "Revision",
        "Branch (or, for source: oci, tag) the tools follow.",
        default="main",
        pattern=r"^\S+$",
    )
    path: str = key(
        "Output path",
        "Folder of gpustack's output inside the repository (the --out of gpustack synth).",
        default="dist",
        pattern=r"^(?!(.*/)?\.\.?(/|$))[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$",
    )
    argocd: ArgoCd = key("Argo CD", "Argo CD objects for this cluster.", factory=ArgoCd)
    flux: Flux = key("Flux", "Flux objects for this cluster.", factory=Flux)
