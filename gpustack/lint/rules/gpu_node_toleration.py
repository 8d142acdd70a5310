"""``gpu-node-toleration``: a GPU pod tolerates the taints the profile's GPU nodes carry.

The taints are ``cluster.nodeTaints``, a fact of their own: the stack's ``cluster.tolerations``
say what its pods may tolerate, not what the nodes carry (many clusters do not taint GPU nodes at
all, and the default tolerations are harmless there). A GPU pod without a matching toleration can
only land on untainted nodes, which have no GPUs: Pending with "node(s) had untolerated taint".
With ``cluster.extendedResourceToleration`` (the ExtendedResourceToleration admission plugin,
which GKE and AKS run), the API server gives every pod a ``NoSchedule`` toleration keyed by each
extended resource it requests (Kubernetes ``plugin/pkg/admission/extendedresourcetoleration``),
so only the rest need one in the manifest. A pod that gets its GPUs by a DRA claim of NVIDIA's GPU
driver (followed to its template in the linted manifests) lands on the same tainted GPU nodes, and
no admission plugin tolerates for a claim.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpustack.kube.pods import PodSite, listed
from gpustack.lint.context import LintContext
from gpustack.lint.rules.common import claimed_gpus, in_profile, wants_gpu
from gpustack.profile.finding import Finding
from gpustack.profile.model import Taint

#: Effects that keep a pod off a node (PreferNoSchedule only discourages).
BLOCKING = ("NoSchedule", "NoExecute")


def tolerates(tol: dict[str, Any], taint: Taint) -> bool:
    """Whether one pod toleration (as written in the manifest) matches ``taint``."""
    return taint.tolerated_by(
        tol.get("key"), tol.get("operator"), tol.get("value"), tol.get("effect")
    )


def admitted(taint: Taint, requested: list[str], ctx: LintContext) -> bool:
    """Whether the ExtendedResourceToleration admission plugin tolerates ``taint`` for a pod
    requesting ``requested``: a NoSchedule toleration keyed by each extended resource."""
    return (
        ctx.extended_resource_toleration and taint.effect == "NoSchedule" and taint.key in requested
    )


def show(taint: Taint) -> str:
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    requested = wants_gpu(site, ctx)
    if not requested and not claimed_gpus(site, ctx):
        return
    tols = [t for t in listed(site.spec.get("tolerations")) if isinstance(t, dict)]
    for taint in ctx.taints:
        if taint.effect not in BLOCKING:
            continue  # a soft taint: nothing to demand
        if any(tolerates(t, taint) for t in tols) or admitted(taint, requested, ctx):
            continue
        at = (*site.path, "tolerations") if "tolerations" in site.spec else site.path
        yield Finding(
            at,
            f"{site.where} asks for a GPU but does not tolerate the taint {show(taint)} that "
            f"the GPU nodes carry (cluster.nodeTaints{in_profile(ctx)}), so it never lands "
            "on one",
            f"add to the pod spec: tolerations: [{{key: {taint.key}, operator: Exists, "
            f"effect: {taint.effect}}}]",
        )
