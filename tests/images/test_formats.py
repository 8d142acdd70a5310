"""The formats, parsed back: list (sorted, unique, SOURCE MIRROR where moved), json (per cluster,
with source, mirror, digest and users), oc-mirror's ImageSetConfiguration and skopeo sync's
YAML source (facts in gpustack/images/formats.py's docstring)."""

from __future__ import annotations

import json

import yaml

from gpustack.images.collect import Use
from gpustack.images.formats import render
from gpustack.images.imageset import ClusterImages, Image

MIRROR = "registry.corp.example:5000/mirror"
DIGEST = "sha256:" + "a" * 64
USE = Use("x", "DaemonSet/d", ("spec", "template", "spec", "containers", 0, "image"))

PLAIN = ClusterImages(
    "plain",
    None,
    (
        Image("busybox", "busybox", (USE,)),
        Image(f"nvcr.io/nvidia/driver:1@{DIGEST}", f"nvcr.io/nvidia/driver:1@{DIGEST}", (USE,)),
        Image(
            "nvcr.io/nvidia/k8s/container-toolkit:v1",
            "nvcr.io/nvidia/k8s/container-toolkit:v1",
            (USE,),
        ),
    ),
)
MOVED = ClusterImages(
    "moved",
    MIRROR,
    (
        Image(
            f"{MIRROR}/nvidia/k8s/container-toolkit:v1",
            "nvcr.io/nvidia/k8s/container-toolkit:v1",
            (USE,),
        ),
        Image("quay.io/own/image:2", "quay.io/own/image:2", (USE, USE)),
    ),
)
FLEET = (MOVED, PLAIN)


def test_list_is_sorted_unique_and_names_the_source_of_a_moved_image() -> None:
    assert render("list", FLEET).splitlines() == [
        "busybox",
        f"nvcr.io/nvidia/driver:1@{DIGEST}",
        "nvcr.io/nvidia/k8s/container-toolkit:v1",
        "quay.io/own/image:2",
        f"nvcr.io/nvidia/k8s/container-toolkit:v1 {MIRROR}/nvidia/k8s/container-toolkit:v1",
    ]


def test_json_per_cluster() -> None:
    doc = json.loads(render("json", FLEET))
    assert [c["name"] for c in doc["clusters"]] == ["moved", "plain"]
    moved, plain = doc["clusters"]
    assert moved["imageRegistry"] == MIRROR and plain["imageRegistry"] is None
    assert moved["images"][0] == {
        "image": f"{MIRROR}/nvidia/k8s/container-toolkit:v1",
        "source": "nvcr.io/nvidia/k8s/container-toolkit:v1",
        "mirror": f"{MIRROR}/nvidia/k8s/container-toolkit:v1",
        "digest": None,
        "usedBy": [{"object": "DaemonSet/d", "field": "spec.template.spec.containers[0].image"}],
    }
    assert moved["images"][1]["mirror"] is None and len(moved["images"][1]["usedBy"]) == 2
    assert [i["digest"] for i in plain["images"]] == [None, DIGEST, None]


def test_oc_mirror_image_set_lists_every_source_once() -> None:
    doc = yaml.safe_load(render("oc-mirror", FLEET))
    assert doc["apiVersion"] == "mirror.openshift.io/v2alpha1"
    assert doc["kind"] == "ImageSetConfiguration"
    assert doc["mirror"] == {
        "additionalImages": [
            {"name": "busybox"},
            {"name": f"nvcr.io/nvidia/driver:1@{DIGEST}"},
            {"name": "nvcr.io/nvidia/k8s/container-toolkit:v1"},
            {"name": "quay.io/own/image:2"},
        ]
    }


def test_skopeo_sync_source_by_registry_and_repository() -> None:
    doc = yaml.safe_load(render("skopeo", FLEET))
    assert doc == {
        "docker.io": {"images": {"library/busybox": ["latest"]}},
        "nvcr.io": {"images": {"nvidia/driver": [DIGEST], "nvidia/k8s/container-toolkit": ["v1"]}},
        "quay.io": {"images": {"own/image": ["2"]}},
    }
