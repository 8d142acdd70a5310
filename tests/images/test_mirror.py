"""Under cluster.imageRegistry, each moved reference leads back to its upstream image; an image
the profile names itself is pulled from where it says."""

from __future__ import annotations

from typing import Any

import pytest

from gpustack.images.mirror import upstream, upstreams
from gpustack.profile.model import Profile

MIRROR = "registry.corp.example:5000/mirror"


def _profile(**sections: Any) -> Profile:
    return Profile.from_dict({"metadata": {"name": "m"}, **sections})


MIRRORED = _profile(
    cluster={"imageRegistry": MIRROR},
    toolkit={"image": "registry.other.example/tk/container-toolkit"},
    workloads={"examples": [{"name": "pytorch-smoke"}]},
)


@pytest.mark.parametrize(
    ("pulled", "source"),
    [
        (
            f"{MIRROR}/nvidia/driver:595.91.07-ubuntu24.04",
            "nvcr.io/nvidia/driver:595.91.07-ubuntu24.04",
        ),
        # the reference's own tag, not the default's (the kubectl image's default has one)
        (f"{MIRROR}/nvidia/gpu-operator:v9", "nvcr.io/nvidia/gpu-operator:v9"),
        (
            f"{MIRROR}/nfd/node-feature-discovery:v0.19.0",
            "registry.k8s.io/nfd/node-feature-discovery:v0.19.0",
        ),
        # Docker Hub's name as the model declares it; the device plugin's per-implementation image
        (
            f"{MIRROR}/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
            "docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
        ),
        (
            f"{MIRROR}/gpustack-dev/gpustack-device-plugin:0.2.0",
            "ghcr.io/gpustack-dev/gpustack-device-plugin:0.2.0",
        ),
        (f"{MIRROR}/nvidia/driver@sha256:{'1' * 64}", f"nvcr.io/nvidia/driver@sha256:{'1' * 64}"),
        # named by the profile: not moved, whatever registry it is on
        ("registry.other.example/tk/container-toolkit:v1.20.0", None),
        (f"{MIRROR}/team/own-image:1", None),
    ],
)
def test_upstream(pulled: str, source: str | None) -> None:
    assert upstream(pulled, upstreams(MIRRORED)) == source


def test_without_a_registry_nothing_moved() -> None:
    assert upstreams(_profile()) == {}
    assert upstream("nvcr.io/nvidia/driver:1", upstreams(_profile())) is None
