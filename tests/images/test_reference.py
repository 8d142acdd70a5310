"""Image references split into registry, path, tag and digest (the distribution grammar)."""

from __future__ import annotations

import pytest

from gpustack.images.reference import parse

DIGEST = "sha256:" + "0" * 64


@pytest.mark.parametrize(
    ("reference", "registry", "path", "tag", "digest"),
    [
        (
            "nvcr.io/nvidia/driver:595.91.07-ubuntu24.04",
            "nvcr.io",
            "nvidia/driver",
            "595.91.07-ubuntu24.04",
            None,
        ),
        # a port is no tag: the last ':' before the last '/'
        (
            "registry.corp.example:5000/mirror/nvidia/driver",
            "registry.corp.example:5000",
            "mirror/nvidia/driver",
            None,
            None,
        ),
        ("busybox", "docker.io", "library/busybox", None, None),
        ("pytorch/pytorch:2.5.1", "docker.io", "pytorch/pytorch", "2.5.1", None),
        ("localhost/plugin:0.2.0", "localhost", "plugin", "0.2.0", None),
        (
            f"quay.io/openshift-release-dev/ocp-v4.0-art-dev@{DIGEST}",
            "quay.io",
            "openshift-release-dev/ocp-v4.0-art-dev",
            None,
            DIGEST,
        ),
        (
            f"nvcr.io/nvidia/gpu-operator:v25.10.1@{DIGEST}",
            "nvcr.io",
            "nvidia/gpu-operator",
            "v25.10.1",
            DIGEST,
        ),
    ],
)
def test_parse(
    reference: str, registry: str, path: str, tag: str | None, digest: str | None
) -> None:
    ref = parse(reference)
    assert (ref.registry, ref.path, ref.tag, ref.digest) == (registry, path, tag, digest)
    assert ref.name + ref.tail == reference  # nothing is lost
