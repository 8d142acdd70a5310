"""A cluster's images: each reference its objects pull, where it comes from, who uses it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpustack.images.collect import Use, uses
from gpustack.images.mirror import upstream, upstreams
from gpustack.images.reference import parse
from gpustack.kube.manifests import Manifest
from gpustack.profile.model import Profile


@dataclass(frozen=True)
class Image:
    """One reference the manifests pull. ``source`` is where the image comes from: the
    upstream reference when ``cluster.imageRegistry`` moved it (then ``reference`` is where it
    must be mirrored to), else ``reference`` itself."""

    reference: str
    source: str
    uses: tuple[Use, ...]

    @property
    def mirrored(self) -> bool:
        return self.source != self.reference

    @property
    def digest(self) -> str | None:
        """The digest the reference pins (``sha256:…``), if it pins one."""
        return parse(self.reference).digest


@dataclass(frozen=True)
class ClusterImages:
    """The images of one cluster, sorted by reference; ``registry`` is its
    ``cluster.imageRegistry``."""

    name: str
    registry: str | None
    images: tuple[Image, ...]


def cluster_images(name: str, manifests: Iterable[Manifest], profile: Profile) -> ClusterImages:
    """The images ``manifests`` pull, each with its source under ``profile``'s registry."""
    found: dict[str, list[Use]] = {}
    for use in uses(manifests):
        found.setdefault(use.reference, []).append(use)
    moved = upstreams(profile)
    images = tuple(
        Image(ref, upstream(ref, moved) or ref, tuple(found[ref])) for ref in sorted(found)
    )
    return ClusterImages(name, profile.cluster.image_registry, images)
