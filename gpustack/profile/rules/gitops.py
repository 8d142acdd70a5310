"""Rules on ``gitops``: an enabled tool has a source to read the cluster folder from.

Argo CD and Flux's git source read ``repoURL``; Flux's OCI source reads ``ociURL``. Without one
the objects gpustack would write point nowhere, so the profile is refused, not the sync.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile


def gitops_source_set(p: Profile) -> Iterator[Finding]:
    g = p.gitops
    if g.argocd.enabled and g.repo_url is None:
        yield Finding(
            ("gitops", "argocd", "enabled"),
            "Argo CD is enabled but gitops.repoURL is not set",
            "set gitops.repoURL to the repository that holds the committed output",
        )
    if g.flux.enabled and g.flux.source == "git" and g.repo_url is None:
        yield Finding(
            ("gitops", "flux", "enabled"),
            "Flux with source git is enabled but gitops.repoURL is not set",
            "set gitops.repoURL, or use source: oci with gitops.flux.ociURL",
        )
    if g.flux.enabled and g.flux.source == "oci" and g.flux.oci_url is None:
        yield Finding(
            ("gitops", "flux", "source"),
            "Flux with source oci needs gitops.flux.ociURL",
            "set gitops.flux.ociURL, e.g. oci://registry.example.com/gpu/gpu-clusters",
        )
