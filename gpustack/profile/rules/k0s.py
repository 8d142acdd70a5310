"""Rules on k0s, whose container runtime changed with its 1.36 release.

k0s ships its own containerd, so the Kubernetes release names it: containerd 1.7 with version-2
config snippets up to 1.35, containerd 2.3 with version-3 snippets only from 1.36 (see
:data:`gpustack.profile.model.runtime.K0S_CONTAINERD_V3_SINCE`). gpustack derives the toolkit's
settings from ``kubernetesVersion``; a ``cluster.runtime.version`` that contradicts it would make
the installer write a snippet the node's k0s rejects (its worker then does not start) or one its
containerd cannot read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile
from gpustack.profile.model.runtime import K0S_CONTAINERD_V3_SINCE, k0s_containerd_v3


def k0s_containerd_matches_release(p: Profile) -> Iterator[Finding]:
    runtime = p.cluster.runtime
    if runtime.distribution != "k0s" or runtime.version is None:
        return
    by_release = k0s_containerd_v3(replace(runtime, version=None), p.cluster.kubernetes_version)
    if k0s_containerd_v3(runtime, p.cluster.kubernetes_version) == by_release:
        return
    since = ".".join(str(x) for x in K0S_CONTAINERD_V3_SINCE)
    ships = "containerd 2.3 (version-3 config)" if by_release else "containerd 1.7"
    yield Finding(
        ("cluster", "runtime", "version"),
        f"k0s {p.cluster.kubernetes_version} ships {ships}, but cluster.runtime.version is"
        f" {runtime.version} (k0s moved to containerd 2.x in {since})",
        "remove cluster.runtime.version (gpustack derives it from kubernetesVersion on k0s),"
        " or set kubernetesVersion to the nodes' k0s release",
    )
