"""``gpu-requests-match-limits``: a GPU in ``requests`` needs the same amount in ``limits``.

Extended resources cannot be overcommitted: the API server refuses a pod that requests a GPU
without a limit, or with a request that differs from it. Helm charts that template ``requests``
alone hit this only at deploy time.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.pods import PodSite
from gpustack.kube.quantity import quantity
from gpustack.lint.context import LintContext
from gpustack.lint.rules.common import gpu_entries
from gpustack.profile.finding import Finding


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    for c in site.containers():
        limits = c.resources("limits")
        for section, name, value, path in gpu_entries(c, ctx):
            if section != "requests":
                continue
            if name not in limits:
                yield Finding(
                    path,
                    f"container {c.name} requests {value} {name} without a limit; the API server "
                    "refuses extended resources that are not in limits",
                    f"set resources.limits[{name!r}]: {value} (a limit alone is enough)",
                )
            elif quantity(limits[name]) != quantity(value):
                yield Finding(
                    path,
                    f"container {c.name} requests {value} {name} but its limit is "
                    f"{limits[name]}; extended resources cannot be overcommitted",
                    "make requests equal limits, or drop the request",
                )
