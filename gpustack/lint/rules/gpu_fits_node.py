"""``gpu-fits-node``: a pod asks for no more of a resource than one node of the profile has.

A pod's containers land on one node, so a pod that needs more GPUs than any node pool offers
("0/3 nodes are available: 3 Insufficient nvidia.com/gpu") stays Pending forever; the
scheduler does not say that no node could ever fit it.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.pods import PodSite, per_pod, show
from gpustack.lint.context import LintContext
from gpustack.lint.rules.common import gpu_entries, in_profile
from gpustack.profile.derive import MIG_RESOURCE_PREFIX
from gpustack.profile.document import JsonPath
from gpustack.profile.finding import Finding


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    firsts: dict[str, JsonPath] = {}
    for c in site.containers():
        for _, name, _, path in gpu_entries(c, ctx):
            firsts.setdefault(name, path)
    for name, path in firsts.items():
        offers = [(o, p) for p in ctx.pools if (o := p.offers(name)) is not None]
        if not offers:
            continue  # unknown or not advertised (gpu-resource-known reports that)
        (most, what), pool = max(offers, key=lambda o: o[0][0])
        need = per_pod(site, name)
        if need > most:
            per_node = "gpus.perNode" if pool.name is None else f"node config {pool.name}"
            mig = [n for n, _, _ in pool.capacity if n.startswith(MIG_RESOURCE_PREFIX)]
            yield Finding(
                path,
                f"{site.where} needs {show(need)} {name} in one pod, but the largest node"
                f"{in_profile(ctx)} offers {most} {what} ({per_node}: {pool.per_node}), "
                "so it stays Pending",
                f"ask for at most {most} per pod; spread the work over more pods"
                if most
                else f"ask for a MIG resource: {', '.join(mig)}",
            )
