"""``shared-one-per-container``: one unit of a time-sliced or MPS resource per container.

Replicas of one GPU give no more GPU: a container asking for two gets two slices of the same
device. With ``failRequestsGreaterThanOne`` the plugin refuses such a container at admission
(``UnexpectedAdmissionError``) after the scheduler has already placed it.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.pods import PodSite, asked
from gpustack.lint.context import LintContext
from gpustack.lint.rules.common import gpu_entries, in_profile
from gpustack.profile.finding import Finding


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    refused = frozenset().union(*(p.refuses_many for p in ctx.pools))
    for c in site.containers():
        for section, name, value, path in gpu_entries(c, ctx):
            if section != "limits" or name not in refused:
                continue
            count = asked(c, name)
            if count is not None and count > 1:
                yield Finding(
                    path,
                    f"container {c.name} asks for {value} {name}, but sharing{in_profile(ctx)} "
                    "has failRequestsGreaterThanOne: the plugin refuses the pod at admission",
                    f"ask for 1 {name}; for more compute, ask for whole GPUs",
                )
