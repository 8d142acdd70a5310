"""``runtime-class-known``: a GPU pod's ``runtimeClassName`` is one the profile synthesizes.

A pod naming a RuntimeClass that does not exist is refused by the API server; one naming a
class whose handler the toolkit did not register fails to start ("no runtime for ... is
configured"). gpustack declares ``toolkit.runtimeClass`` (and ``nvidia-cdi``/``nvidia-legacy``
with CDI), the list :func:`gpustack.profile.derive.runtime_classes` gives. Pods without GPUs may
use any class (gVisor, Kata).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.pods import PodSite
from gpustack.lint.context import LintContext
from gpustack.lint.rules.common import in_profile, wants_gpu
from gpustack.profile.finding import Finding


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    name = site.spec.get("runtimeClassName")
    if name is None or name in ctx.runtime_classes or not wants_gpu(site, ctx):
        return
    classes = ", ".join(ctx.runtime_classes)
    yield Finding(
        (*site.path, "runtimeClassName"),
        f"{site.where} uses runtimeClassName {name}, which the stack{in_profile(ctx)} does not "
        f"declare ({'it declares ' + classes if classes else 'it declares none'})",
        f"use {ctx.runtime_classes[0]}" if classes else "remove runtimeClassName",
    )
