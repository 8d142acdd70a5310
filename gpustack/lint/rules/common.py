"""Helpers the rules share: resource entries of a container, and how a name is shown."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpustack import dra_upstream as upstream
from gpustack.kube.claims import class_kind, pod_claims
from gpustack.kube.pods import Container, PodSite, looks_like_gpu, per_pod
from gpustack.lint.context import LintContext
from gpustack.profile.document import JsonPath


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


def namespace_of(site: PodSite) -> str | None:
    meta = site.manifest.data.get("metadata")
    found = meta.get("namespace") if isinstance(meta, dict) else None
    return found if isinstance(found, str) else None


def claimed_gpus(site: PodSite, ctx: LintContext) -> list[tuple[str, str, JsonPath]]:
    """``(claim, DeviceClass, path)`` for each of the pod's claims that asks NVIDIA's GPU driver
    for a device (``gpu.nvidia.com``, ``mig.nvidia.com`` or a class of the manifests on that
    driver), followed to its claim or template in the linted manifests."""
    out = []
    ns = namespace_of(site)
    for claim in pod_claims(site.spec, site.path):
        if claim.kind is None or claim.target is None:
            continue
        named = ctx.defined.find(claim.kind, claim.target, ns)
        for choice in named.choices if named is not None else ():
            cls = choice.device_class
            kind = class_kind(cls, ctx.defined) if cls is not None else None
            if cls is not None and kind is not None and kind.driver == upstream.GPU_DRIVER:
                out.append((claim.name or "?", cls, claim.path))
                break
    return out


def in_profile(ctx: LintContext) -> str:
    """`` in profiles/x.yaml`` for messages (empty without a profile)."""
    return f" in {ctx.source}" if ctx.source else ""
