"""``gpu-node-toleration``: a GPU pod tolerates the taints the profile's GPU nodes carry.

The profile's ``cluster.tolerations`` are what the stack's own pods need to run on the GPU
nodes, so they name the nodes' taints (by default ``nvidia.com/gpu:NoSchedule``). A GPU pod
without a matching toleration can only land on untainted nodes, which have no GPUs: Pending with
"node(s) had untolerated taint". (Clusters with the ExtendedResourceToleration admission plugin
add tolerations for taints keyed by the resource name; few enable it, so lint does not assume
it.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.pods import PodSite, listed
from gpustack.lint.rules.common import in_profile, wants_gpu
from gpustack.profile.finding import Finding
from gpustack.profile.model import Toleration

#: Effects that keep a pod off a node (PreferNoSchedule only discourages).
BLOCKING = ("NoSchedule", "NoExecute")


def tolerates(tol: dict[str, Any], taint: Toleration) -> bool:
    """Whether one pod toleration matches the taint ``taint`` stands for (Kubernetes' rules:
    an empty key with Exists matches every key, an empty effect every effect)."""
    key, op = tol.get("key"), tol.get("operator") or "Equal"
    if key in (None, "") and op == "Exists":
        pass
    elif key != taint.key:
        return False
    effect = tol.get("effect")
    if effect not in (None, "") and taint.effect is not None and effect != taint.effect:
        return False
    if op == "Equal" and taint.operator == "Equal":
        return (tol.get("value") or "") == (taint.value or "")
    return True


def show(taint: Toleration) -> str:
    value = f"={taint.value}" if taint.operator == "Equal" and taint.value else ""
    return f"{taint.key}{value}:{taint.effect or 'NoSchedule'}"


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    if not wants_gpu(site, ctx):
        return
    tols = [t for t in listed(site.spec.get("tolerations")) if isinstance(t, dict)]
    for taint in ctx.taints:
        if not taint.key or taint.effect not in (*BLOCKING, None):
            continue  # tolerate-everything or a soft taint: nothing to demand
        if any(tolerates(t, taint) for t in tols):
            continue
        at = (*site.path, "tolerations") if "tolerations" in site.spec else site.path
        effect = taint.effect or "NoSchedule"
        yield Finding(
            at,
            f"{site.where} asks for a GPU but does not tolerate the taint {show(taint)} that "
            f"the GPU nodes carry (cluster.tolerations{in_profile(ctx)}), so it never lands "
            "on one",
            f"add to the pod spec: tolerations: [{{key: {taint.key}, operator: Exists, "
            f"effect: {effect}}}]",
        )
