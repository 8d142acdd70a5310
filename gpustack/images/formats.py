"""The image set written for people and for the tools that fill a mirror.

Facts about the tools' files, and where they were read:

- oc-mirror v2: an ``ImageSetConfiguration`` of ``apiVersion: mirror.openshift.io/v2alpha1``
  (OKD's "oc-mirror migration v1 to v2": v1's ``v1alpha2`` becomes ``v2alpha1``, and
  ``storageConfig`` is gone) lists single images under ``mirror.additionalImages``, each an
  object with ``name``, a reference by tag or digest (OpenShift's "Image set configuration
  parameters"); a mirror-to-mirror run is ``oc-mirror --config FILE --workspace file://DIR
  docker://REGISTRY --v2`` (the migration page).
- skopeo sync (``docs/skopeo-sync.1.md`` and ``cmd/skopeo/sync.go`` of
  github.com/containers/skopeo): ``--src yaml`` reads a mapping of registry -> ``images`` ->
  repository (without the registry) -> a list of tags and digests (``sha256:…``) to copy; an
  empty list copies every tag. Without ``--scoped`` each image
  lands at DESTINATION/<last path component>, with it at DESTINATION/<registry>/<path>; neither
  is the layout ``cluster.imageRegistry`` pulls from (DESTINATION/<path>), so for a mirror the
  ``list`` format's ``SOURCE MIRROR`` lines are the exact copies to make.
- A reference with neither tag nor digest is pulled as ``latest`` (Kubernetes' ``image`` field).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import yaml

from gpustack.images.imageset import ClusterImages, Image
from gpustack.images.reference import parse

FORMATS = ("list", "json", "oc-mirror", "skopeo")
OC_MIRROR_API = "mirror.openshift.io/v2alpha1"


def _all(clusters: Sequence[ClusterImages]) -> list[Image]:
    return [image for cluster in clusters for image in cluster.images]


def render_list(clusters: Sequence[ClusterImages]) -> str:
    """One line per image, sorted and unique: the reference the manifests pull, after the
    upstream reference where ``cluster.imageRegistry`` moved it (``SOURCE MIRROR``)."""
    pairs = {(i.reference, i.source) for i in _all(clusters)}
    lines = [f"{src} {ref}" if src != ref else ref for ref, src in sorted(pairs)]
    return "".join(f"{line}\n" for line in lines)


def render_json(clusters: Sequence[ClusterImages]) -> str:
    """Per cluster, each image with its source, mirror, digest and the objects that use it."""
    doc = {"clusters": [_cluster_doc(c) for c in clusters]}
    return json.dumps(doc, indent=2) + "\n"


def _cluster_doc(cluster: ClusterImages) -> dict[str, Any]:
    return {
        "name": cluster.name,
        "imageRegistry": cluster.registry,
        "images": [
            {
                "image": i.reference,
                "source": i.source,
                "mirror": i.reference if i.mirrored else None,
                "digest": i.digest,
                "usedBy": [{"object": u.where, "field": u.field} for u in i.uses],
            }
            for i in cluster.images
        ],
    }


def _sources(clusters: Sequence[ClusterImages]) -> list[str]:
    return sorted({i.source for i in _all(clusters)})


def _mirrors(clusters: Sequence[ClusterImages]) -> list[str]:
    return sorted({c.registry for c in clusters if c.registry is not None})


def _yaml(header: list[str], doc: dict[str, Any]) -> str:
    comments = "".join(f"# {line}\n" for line in header)
    return comments + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def render_oc_mirror(clusters: Sequence[ClusterImages]) -> str:
    """An oc-mirror v2 ImageSetConfiguration of every image's source."""
    header = [
        "oc-mirror --v2 --config FILE --workspace file://DIR docker://REGISTRY",
        *(f"cluster.imageRegistry: {m}" for m in _mirrors(clusters)),
    ]
    doc = {
        "apiVersion": OC_MIRROR_API,
        "kind": "ImageSetConfiguration",
        "mirror": {"additionalImages": [{"name": s} for s in _sources(clusters)]},
    }
    return _yaml(header, doc)


def render_skopeo(clusters: Sequence[ClusterImages]) -> str:
    """A ``skopeo sync --src yaml`` file of every image's source: registry -> repository ->
    the tags and digests pulled (a pinned reference by its digest alone)."""
    registries: dict[str, dict[str, set[str]]] = {}
    for source in _sources(clusters):
        ref = parse(source)
        wanted = ref.digest or ref.tag or "latest"
        registries.setdefault(ref.registry, {}).setdefault(ref.path, set()).add(wanted)
    doc = {
        registry: {"images": {path: sorted(repos[path]) for path in sorted(repos)}}
        for registry, repos in sorted(registries.items())
    }
    header = [
        "skopeo sync --src yaml --dest docker FILE DESTINATION",
        *(
            f"cluster.imageRegistry: {m} (copy the `--format list` lines)"
            for m in _mirrors(clusters)
        ),
    ]
    return _yaml(header, doc)


def render(fmt: str, clusters: Sequence[ClusterImages]) -> str:
    """``clusters`` in ``fmt`` (one of :data:`FORMATS`)."""
    renderers = {
        "list": render_list,
        "json": render_json,
        "oc-mirror": render_oc_mirror,
        "skopeo": render_skopeo,
    }
    return renderers[fmt](clusters)
