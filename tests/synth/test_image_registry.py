"""``cluster.imageRegistry``: one setting moves every default image to a mirror; images a
profile sets explicitly are used as written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.checker import check_paths
from gpustack.profile.model import rehome

REPO = Path(__file__).resolve().parents[2]
MIRROR = "registry.corp.example:5000/mirror"


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("nvcr.io/nvidia/driver", f"{MIRROR}/nvidia/driver"),
        ("nvcr.io/nvidia/k8s/container-toolkit", f"{MIRROR}/nvidia/k8s/container-toolkit"),
        (
            "ghcr.io/gpustack-dev/gpustack-device-plugin",
            f"{MIRROR}/gpustack-dev/gpustack-device-plugin",
        ),
        ("docker.io/pytorch/pytorch:2.5.1", f"{MIRROR}/pytorch/pytorch:2.5.1"),
        ("localhost/x", f"{MIRROR}/x"),
        ("registry:5000/x", f"{MIRROR}/x"),
        ("pytorch/pytorch:2.5.1", f"{MIRROR}/pytorch/pytorch:2.5.1"),  # Docker Hub, no host
        ("busybox", f"{MIRROR}/busybox"),
    ],
)
def test_rehome_replaces_the_registry_part(image: str, expected: str) -> None:
    assert rehome(image, MIRROR) == expected


def _images(doc: Any) -> list[str]:
    found: list[str] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == "image" and isinstance(v, str):
                found.append(v)
            else:
                found.extend(_images(v))
    elif isinstance(doc, list):
        for v in doc:
            found.extend(_images(v))
    return found


def _synth_images(tmp_path: Path, text: str) -> list[str]:
    from gpustack.synth.pipeline import Source, synthesize_clusters

    profile = tmp_path / "p.yaml"
    profile.write_text(text)
    result = check_paths([profile])
    assert result.ok, result.issues
    (loaded,) = result.profiles
    (cluster,) = synthesize_clusters([Source(loaded.path, loaded.profile)], tmp_path / "dist")
    return sorted({i for f in cluster.output.files for i in _images(yaml.safe_load(f.content))})


EXAMPLE = (REPO / "profiles" / "airgapped-mirror.yaml").read_text()


@pytest.mark.parametrize("implementation", ["gpustack", "nvidia"])
def test_every_default_image_comes_from_the_mirror(tmp_path: Path, implementation: str) -> None:
    text = EXAMPLE + f"devicePlugin:\n  implementation: {implementation}\n"
    images = _synth_images(tmp_path, text)
    assert len(images) >= 4  # driver, toolkit, plugin, example
    assert [i for i in images if not i.startswith(MIRROR + "/")] == []
    plugin = "nvidia/k8s-device-plugin" if implementation == "nvidia" else "gpustack-dev/"
    assert any(i.startswith(f"{MIRROR}/{plugin}") for i in images)


@pytest.mark.parametrize(
    ("section", "explicit"),
    [
        ('driver:\n  version: "595.91.07"\n  image: other.example/drv\n', "other.example/drv:"),
        ("toolkit:\n  image: other.example/tk\n", "other.example/tk:"),
        ("devicePlugin:\n  image: other.example/dp\n", "other.example/dp:"),
    ],
)
def test_an_explicit_image_wins(tmp_path: Path, section: str, explicit: str) -> None:
    text = EXAMPLE.replace('driver:\n  version: "595.91.07"\n', "") + section
    images = _synth_images(tmp_path, text)
    assert any(i.startswith(explicit) for i in images), images
    assert [i for i in images if not i.startswith((MIRROR + "/", explicit))] == []


def test_without_a_registry_images_are_the_published_ones(tmp_path: Path) -> None:
    text = EXAMPLE.replace(f"  imageRegistry: {MIRROR}\n", "")
    images = _synth_images(tmp_path, text)
    assert any(i.startswith("nvcr.io/nvidia/driver:") for i in images)
    assert not any(MIRROR in i for i in images)
