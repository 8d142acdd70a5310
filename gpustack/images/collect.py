"""Every image reference in a cluster's objects, and where each is written.

Where a reference can stand: the ``image`` of each container, init container and ephemeral
container of every pod spec (:func:`gpustack.kube.pods.pod_sites` knows where each workload kind
keeps its pod templates), and the value of an environment variable that names the image a
controller starts pods from. gpustack writes one: the ComputeDomain controller of NVIDIA's
DRA driver starts its per-domain daemon pods from the image in ``IMAGE_NAME``, set on the
controller container by :mod:`gpustack.constructs.dra_compute_domains` (its
``_controller_container``: "the image it starts daemons from"). Those pods are made at run time,
not by gpustack, so their image stands in no pod template of their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gpustack.kube.manifests import Manifest
from gpustack.kube.pods import PodSite, listed, pod_sites
from gpustack.profile.document import JsonPath

#: The pod spec's lists of containers, each of which pulls its ``image``.
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
#: Environment variables whose value is the image of pods a controller creates.
IMAGE_ENV = frozenset({"IMAGE_NAME"})


@dataclass(frozen=True)
class Use:
    """One place an object names an image: ``where`` is ``Kind/name`` (and the role, for the
    pod templates of multi-role kinds), ``path`` the JSON path of the value in the object."""

    reference: str
    where: str
    path: JsonPath

    @property
    def field(self) -> str:
        """The path as ``spec.template.spec.containers[0].image``, for people and JSON."""
        return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.path)[1:]


def uses(manifests: Iterable[Manifest]) -> Iterator[Use]:
    """Every image reference of ``manifests``, in their order."""
    for manifest in manifests:
        for site in pod_sites(manifest):
            yield from _site_uses(site)


def _site_uses(site: PodSite) -> Iterator[Use]:
    for section in CONTAINER_LISTS:
        for i, container in enumerate(listed(site.spec.get(section))):
            if not isinstance(container, dict):
                continue
            at = (*site.path, section, i)
            image = container.get("image")
            if isinstance(image, str) and image:
                yield Use(image, site.where, (*at, "image"))
            for j, var in enumerate(listed(container.get("env"))):
                if not isinstance(var, dict) or var.get("name") not in IMAGE_ENV:
                    continue
                value = var.get("value")
                if isinstance(value, str) and value:
                    yield Use(value, site.where, (*at, "env", j, "value"))
