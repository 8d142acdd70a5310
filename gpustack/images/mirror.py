"""Under ``cluster.imageRegistry``: which upstream image a mirrored reference stands for.

The manifests name only the mirror (``registry.corp.example:5000/mirror/nvidia/driver:…``);
whoever fills the mirror needs the upstream reference too (``nvcr.io/nvidia/driver:…``), and the
registry part that :func:`gpustack.profile.model.rehome` replaced cannot be read back from the
reference. It is known from the profile: ``cluster.imageRegistry`` rehomes exactly the image
fields (:data:`gpustack.profile.model.IMAGE_FIELDS`) left at their declared default, and the
device plugin's image of its implementation (:data:`gpustack.profile.model.PLUGIN_IMAGES`)
(:func:`gpustack.profile.model.with_image_registry`). A reference whose repository is one of
those defaults rehomed comes from that default, with the reference's own tag and digest. Any
other reference was named by the profile as written: it is pulled from where it says.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields, is_dataclass
from typing import Any

from gpustack.images.reference import parse
from gpustack.profile.model import IMAGE_FIELDS, PLUGIN_IMAGES, Profile, rehome


def default_images(value: Any) -> Iterator[str]:
    """The declared default of every image field of ``value`` (a profile, a section or a
    tuple of sections), nested sections and lists of items included."""
    if isinstance(value, tuple):
        for item in value:
            yield from default_images(item)
        return
    if not is_dataclass(value) or isinstance(value, type):
        return
    for f in fields(value):
        if f.name in IMAGE_FIELDS and isinstance(f.default, str):
            yield f.default
        yield from default_images(getattr(value, f.name))


def upstreams(profile: Profile) -> dict[str, str]:
    """Repository pulled -> upstream repository, for each image the profile's
    ``cluster.imageRegistry`` moved (empty without one)."""
    registry = profile.cluster.image_registry
    if registry is None:
        return {}
    defaults = {parse(image).name for image in default_images(profile)}
    defaults |= {image for image, _ in PLUGIN_IMAGES.values()}
    return {rehome(name, registry): name for name in sorted(defaults)}


def upstream(reference: str, moved: dict[str, str]) -> str | None:
    """The upstream reference of a pulled one (``None``: it is pulled from where it says)."""
    ref = parse(reference)
    name = moved.get(ref.name)
    return None if name is None else name + ref.tail
