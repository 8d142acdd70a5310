"""Helpers the rules share: resource entries of a container, and how a name is shown."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpustack.lint.context import LintContext
from gpustack.lint.pods import Container, PodSite, looks_like_gpu, per_pod
from gpustack.profile.loader import JsonPath


def gpu_entries(c: Container, ctx: LintContext) -> Iterator[tuple[str, str, Any, JsonPath]]:
    """``(section, resource, value, path)`` for each GPU resource of ``limits`` then
    ``requests``."""
    for section in ("limits", "requests"):
        for name, value in c.resources(section).items():
            if looks_like_gpu(name, ctx.known):
                yield section, name, value, (*c.path, "resources", section, name)


def wants_gpu(site: PodSite, ctx: LintContext) -> list[str]:
    """The GPU resources the pod really needs (a positive amount), in first-seen order."""
    names: dict[str, None] = {}
    for c in site.containers():
        for _, name, _, _ in gpu_entries(c, ctx):
            if per_pod(site, name) > 0:
                names[name] = None
    return list(names)


def in_profile(ctx: LintContext) -> str:
    """`` in profiles/x.yaml`` for messages (empty without a profile)."""
    return f" in {ctx.source}" if ctx.source else ""
