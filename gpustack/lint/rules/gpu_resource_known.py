"""``gpu-resource-known``: the GPU resource a container asks for is one the cluster advertises.

A typo (``nvidia.com/gpus``, ``nvidia/gpu``, ``nvidia.com/GPU``) or a MIG profile of another GPU
(``mig-1g.5gb`` where the nodes have ``mig-1g.10gb``) is accepted by the API server and leaves
the pod Pending with "Insufficient nvidia.com/gpus" forever. The fix names the nearest
advertised resource by edit distance.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.pods import PodSite
from gpustack.kube.suggest import nearest
from gpustack.lint.context import LintContext
from gpustack.lint.rules.common import gpu_entries, in_profile
from gpustack.profile.finding import Finding


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    for c in site.containers():
        seen: set[str] = set()
        for _, name, _, path in gpu_entries(c, ctx):
            if name in ctx.known or name in seen:
                continue
            seen.add(name)
            advertised = ", ".join(sorted(ctx.known)) if ctx.has_profile else None
            where = f"the cluster{in_profile(ctx)}" if ctx.has_profile else "NVIDIA's device plugin"
            yield Finding(
                path,
                f"container {c.name} asks for {name}, which {where} does not advertise, so the "
                "pod stays Pending",
                f"did you mean {nearest(name, ctx.known)}?"
                + (f" It advertises {advertised}." if advertised else ""),
            )
