"""``claim-reference-known``: a pod's ``resourceClaims`` name a ResourceClaim or
ResourceClaimTemplate that the linted manifests define.

A template that does not exist leaves the pod Pending ("ResourceClaim not created yet"; the
resourceclaim controller's event says the template was not found), a claim that does not exist
too ("resourceclaim ... not found"). Claims are often created apart from the workloads, so the
rule judges a kind only when the linted manifests define at least one object of it: then the
user linted the claims too, and a name that is none of them is most likely a typo. A claim made
elsewhere may still exist in the cluster: lint its file along, or ``--disable`` the rule.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.claims import TEMPLATE, pod_claims
from gpustack.kube.pods import PodSite
from gpustack.kube.suggest import did_you_mean
from gpustack.lint.context import LintContext
from gpustack.profile.finding import Finding

ID = "claim-reference-known"


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    meta = site.manifest.data.get("metadata")
    namespace = meta.get("namespace") if isinstance(meta, dict) else None
    ns = namespace if isinstance(namespace, str) else None
    for claim in pod_claims(site.spec, site.path):
        if claim.kind is None or claim.target is None:
            continue
        defined = ctx.defined.of(claim.kind)
        if not defined or ctx.defined.find(claim.kind, claim.target, ns) is not None:
            continue  # none defined here: they live elsewhere, and may well exist
        names = sorted({d.name for d in defined})
        stuck = (
            "ResourceClaim not created yet" if claim.kind == TEMPLATE else "resourceclaim not found"
        )
        yield Finding(
            claim.path,
            f"{site.where} uses {claim.kind} {claim.target}, which none of the linted manifests "
            f"define (they define {', '.join(names)}); unless it is created apart and exists in "
            f"the cluster, the pod stays Pending ({stuck})",
            f"{did_you_mean(claim.target, names)} If it exists in the cluster, lint its file "
            f"along or --disable {ID}",
        )
