"""``gpu-claim-and-limit``: a pod asks for GPUs one way, by a DRA claim of NVIDIA's GPU driver
or by the device plugin's ``nvidia.com/gpu`` (or MIG, or shared) limits, not both.

When the profile's DRA driver hands out GPUs, a node's GPUs go to DRA (``dra.nodeSelector``'s
pool) or to the device plugin (every other GPU node), never to both: a pod that asks for both
fits no node and stays Pending. With ``dra.extendedResourceName`` DRA serves ``nvidia.com/gpu``
limits too, and the rule is quiet. Claims are followed to their templates in the linted
manifests; one defined elsewhere is not judged.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.pods import PodSite
from gpustack.lint.context import LintContext
from gpustack.lint.rules.common import claimed_gpus, in_profile, wants_gpu
from gpustack.profile.finding import Finding


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    if not ctx.dra_gpus or ctx.dra_extended_resource:
        return
    wanted = wants_gpu(site, ctx)
    if not wanted:
        return
    for claim, cls, path in claimed_gpus(site, ctx):
        yield Finding(
            path,
            f"{site.where} asks for {', '.join(wanted)} (the device plugin) and for GPUs by its "
            f"claim {claim} ({cls}, DRA); in the cluster{in_profile(ctx)} a node's GPUs go to one "
            "or the other (dra.nodeSelector), so no node offers both and the pod stays Pending",
            "ask for GPUs one way: drop the resource limits or the claim (or turn on "
            "dra.extendedResourceName, so that DRA serves nvidia.com/gpu too)",
        )
        return
