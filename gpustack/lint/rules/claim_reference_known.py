"""``claim-reference-known``: a pod's ``resourceClaims`` name a ResourceClaim or
ResourceClaimTemplate that the linted manifests define, in the pod's namespace.

A template that does not exist leaves the pod Pending ("ResourceClaim not created yet"; the
resourceclaim controller's event says the template was not found), a claim that does not exist
too ("resourceclaim ... not found"), and nothing times out: the pod waits for ever. A pod uses
claims and templates of its own namespace only (``PodResourceClaim`` has no namespace field), and
a manifest without ``metadata.namespace`` lands in ``default``. Like kube-linter's
dangling-reference checks, every reference is judged; one that is created apart (by another
team, a Helm chart, an operator) is declared on the pod template or the workload with
:data:`EXTERNAL_ANNOTATION` (comma-separated names), or the rule is ``--disable``-d.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.claims import TEMPLATE, PodClaim, in_namespace, pod_claims
from gpustack.kube.pods import PodSite
from gpustack.kube.suggest import did_you_mean
from gpustack.lint.context import LintContext
from gpustack.lint.rules.common import namespace_of
from gpustack.profile.finding import Finding

ID = "claim-reference-known"
#: Claims and templates a pod uses that exist in the cluster without being in the linted files.
EXTERNAL_ANNOTATION = "gpustack.dev/lint-external-claims"


def external(site: PodSite) -> frozenset[str]:
    """The names :data:`EXTERNAL_ANNOTATION` declares (on the pod template, else the object)."""
    note = site.annotation(EXTERNAL_ANNOTATION)
    return frozenset(n.strip() for n in note[0].split(",") if n.strip()) if note else frozenset()


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    ns = namespace_of(site)
    elsewhere = external(site)
    for claim in pod_claims(site.spec, site.path):
        if claim.kind is None or claim.target is None or claim.target in elsewhere:
            continue
        if ctx.defined.find(claim.kind, claim.target, ns) is None:
            yield _finding(site, claim, claim.target, claim.kind, ctx)


def _finding(site: PodSite, claim: PodClaim, target: str, kind: str, ctx: LintContext) -> Finding:
    ns = in_namespace(namespace_of(site))
    here = [d.name for d in ctx.defined.of(kind) if in_namespace(d.namespace) == ns]
    there = sorted({in_namespace(d.namespace) for d in ctx.defined.of(kind) if d.name == target})
    stuck = "ResourceClaim not created yet" if kind == TEMPLATE else "resourceclaim not found"
    if there:
        what = (
            f"which the linted manifests define in namespace {', '.join(there)} only, and a "
            f"pod uses claims of its own namespace ({ns})"
        )
    else:
        listed = f"they define {', '.join(sorted(set(here)))}" if here else "they define none"
        what = f"which none of the linted manifests define in namespace {ns} ({listed})"
    guess = did_you_mean(target, here)
    fix = f"define it in namespace {ns} too, or run the pod in {there[0]}" if there else guess
    return Finding(
        claim.path,
        f"{site.where} uses {kind} {target}, {what}; unless it exists in the cluster, the pod "
        f"stays Pending for ever ({stuck})",
        f"{fix + '; ' if fix else ''}if it is created apart, lint its file along or annotate "
        f"the pod template with {EXTERNAL_ANNOTATION}: {target}",
    )
