"""A profile that pulls its images from a mirror, but leaves some at their public defaults.

Why: without ``cluster.imageRegistry`` only the images a profile names are pulled from its
mirror; every other image gpustack renders keeps its public default (nvcr.io, registry.k8s.io,
ghcr.io). Day-2 operands are on by default (Node Feature Discovery, GPU feature discovery, the
driver manager), and an upgrade of gpustack may add one, so a profile written for an air-gapped
cluster can silently render images the nodes cannot pull; without NFD no node is labelled and
nothing is placed. The rule reports each such image; where the nodes do reach the public
registry the profile accepts the finding with a comment.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields
from typing import Any

from gpustack.fields.declare import camel
from gpustack.profile import components
from gpustack.profile.document import JsonPath
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile
from gpustack.profile.model.device_plugin import PLUGIN_IMAGES

#: Registries images are published to (a mirror is any other).
PUBLIC_REGISTRIES = frozenset(
    {"nvcr.io", "registry.k8s.io", "ghcr.io", "docker.io", "quay.io", "gcr.io", "mcr.microsoft.com"}
)


def registry_of(image: str) -> str:
    """The registry host of an image reference (Docker Hub for a name without one)."""
    first, sep, _ = image.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def _default(section: Any, name: str) -> Any:
    return next(f.default for f in fields(section) if f.name == name)


#: Profile sections whose ``image`` field names their component's image.
_IMAGE_SECTIONS = (
    "driver",
    "toolkit",
    "gpu_feature_discovery",
    "node_feature_discovery",
    "mig_manager",
    "dcgm_exporter",
)


def _section_images(p: Profile) -> Iterator[tuple[JsonPath, str, bool]]:
    """(path, image, left at its default) for each image the stack renders but the examples'."""
    on = {c.name for c in components.enabled(p)}
    if not p.node_feature_discovery.enabled:
        # the component is then only the GPU node rule
        on.discard(components.for_section("node_feature_discovery").name)
    for attr in _IMAGE_SECTIONS:
        if components.for_section(attr).name in on:
            section = getattr(p, attr)
            yield (camel(attr), "image"), section.image, section.image == _default(section, "image")
    if components.for_section("device_plugin").name in on:
        dp = p.device_plugin
        default = PLUGIN_IMAGES[dp.implementation][0]
        yield ("devicePlugin", "image"), dp.image or default, dp.image in (None, default)
    upgrade = p.driver.upgrade
    if components.for_section("driver").name in on and upgrade.driver_manager:
        yield (
            ("driver", "upgrade", "image"),
            upgrade.image,
            upgrade.image == _default(upgrade, "image"),
        )
        if p.cluster.deploy_labels == "optional":
            kubectl = upgrade.kubectl_image
            yield (
                ("driver", "upgrade", "kubectlImage"),
                kubectl,
                kubectl == _default(upgrade, "kubectl_image"),
            )


def default_images_outside_mirror(p: Profile) -> Iterator[Finding]:
    if p.cluster.image_registry is not None:
        return  # every default image is rehomed to it
    rendered = list(_section_images(p))
    components_named = [image for _, image, default in rendered if not default]
    named = {registry_of(i) for i in components_named + [e.image for e in p.workloads.examples]}
    # a mirror profile: it names component images, and every image it names is on a mirror
    if not components_named or named & PUBLIC_REGISTRIES:
        return
    mirrors = sorted(named)
    mirror = mirrors[0]
    for path, image, default in rendered:
        registry = registry_of(image)
        if default and registry in PUBLIC_REGISTRIES:
            key = ".".join(str(k) for k in path)
            yield Finding(
                path,
                f"{key} is left at its default {image} on {registry}, but the profile pulls"
                f" its other images from {mirror}: an air-gapped cluster cannot pull it",
                f"set cluster.imageRegistry: {mirror} (every default image is then pulled from"
                f" the mirror), or set {key} to the mirror's copy; accept the finding where the"
                f" nodes reach {registry}",
            )
