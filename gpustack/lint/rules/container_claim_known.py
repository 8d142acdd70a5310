"""``container-claim-known``: each ``resources.claims[].name`` of a container names an entry of
the pod's ``spec.resourceClaims``.

The container picks the pod's claims by those names; the API server refuses a pod whose container
names a claim the pod does not list, which a Helm chart that templates the two apart hits only at
deploy time.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.claims import pod_claims
from gpustack.kube.pods import PodSite, listed
from gpustack.kube.suggest import did_you_mean
from gpustack.lint.context import LintContext
from gpustack.profile.finding import Finding


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    names = sorted({c.name for c in pod_claims(site.spec, site.path) if c.name is not None})
    for c in site.containers():
        res = c.data.get("resources")
        for j, entry in enumerate(listed(res.get("claims") if isinstance(res, dict) else None)):
            name = entry.get("name") if isinstance(entry, dict) else None
            if not isinstance(name, str) or name in names:
                continue
            listed_names = ", ".join(names) if names else "none"
            yield Finding(
                (*c.path, "resources", "claims", j, "name"),
                f"container {c.name} uses claim {name}, which is no entry of the pod's "
                f"resourceClaims (it lists {listed_names}); the API server refuses the pod",
                did_you_mean(name, names)
                or f"add {{name: {name}, resourceClaimTemplateName: ...}} to spec.resourceClaims",
            )
