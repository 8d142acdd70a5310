"""``make image-push``: the Makefile target's command line, pushed to offline transports."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tooling import require_tool

REPO = Path(__file__).resolve().parents[2]


def make_push(image: str, **env: str) -> subprocess.CompletedProcess[str]:
    args = ["make", "-s", "--no-print-directory", "image-push", f"IMAGE={image}"]
    args += [f"{k}={v}" for k, v in env.items()]
    return subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    ("image", "pushed_to"),
    [
        ("registry.example.com/gpu/plugin:0.1.0", "docker://registry.example.com/gpu/plugin:0.1.0"),
        ("docker://r.example/p:1", "docker://r.example/p:1"),
        ("oci-archive:/tmp/p.tar", "oci-archive:/tmp/p.tar"),
        ("dir:/tmp/p", "dir:/tmp/p"),
    ],
)
def test_destination_gets_a_transport(image: str, pushed_to: str) -> None:
    require_tool("make")
    done = make_push(image, SOURCE="localhost/x:1", DRY_RUN="1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(f"buildah push --quiet localhost/x:1 {pushed_to}")


@pytest.mark.parametrize("image", ["", "ftp://x/y"])
def test_a_missing_or_unknown_destination_is_a_usage_error(image: str) -> None:
    require_tool("make")
    done = make_push(image, SOURCE="localhost/x:1", DRY_RUN="1")
    assert done.returncode != 0
    assert "image-push" in done.stderr or "unknown transport" in done.stderr


def test_cmp_image_push_builds_the_sidecar(tmp_path: Path) -> None:
    """`make cmp-image-push` runs the push script with the sidecar's build script, whose
    printed tag is what gets pushed."""
    require_tool("make")
    planned = subprocess.run(
        ["make", "-n", "--no-print-directory", "cmp-image-push", "IMAGE=r.example/cmp:1"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert "BUILD=scripts/build-cmp-image.sh scripts/push-image.sh" in planned.stdout
    build = tmp_path / "build.sh"
    build.write_text("#!/bin/sh\necho localhost/gpustack-argocd-cmp:9\n")
    build.chmod(0o755)
    done = subprocess.run(
        [str(REPO / "scripts" / "push-image.sh"), "r.example/cmp:1"],
        env={**os.environ, "BUILD": str(build), "DRY_RUN": "1"},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "buildah push --quiet localhost/gpustack-argocd-cmp:9 docker://r.example/cmp:1"
    )


@pytest.fixture
def tiny_image() -> Iterator[str]:
    """A one-file image in local storage (the push, not the build, is under test here)."""
    require_tool("buildah")
    tag = f"localhost/gpustack-push-test:{uuid.uuid4().hex[:8]}"
    ctr = subprocess.run(
        ["buildah", "from", "scratch"], capture_output=True, text=True, check=True
    ).stdout.strip()
    try:
        subprocess.run(["buildah", "config", "--label", "test=push", ctr], check=True)
        subprocess.run(["buildah", "commit", "--quiet", ctr, tag], check=True, capture_output=True)
    finally:
        subprocess.run(["buildah", "rm", ctr], capture_output=True)
    yield tag
    subprocess.run(["buildah", "rmi", tag], capture_output=True)


@pytest.mark.parametrize("transport", ["dir", "oci-archive"])
def test_make_image_push_writes_the_image(tiny_image: str, tmp_path: Path, transport: str) -> None:
    require_tool("make")
    target = tmp_path / ("out.tar" if transport == "oci-archive" else "out")
    done = make_push(f"{transport}:{target}", SOURCE=tiny_image)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"pushed {tiny_image} to {transport}:{target}"
    if transport == "dir":
        manifest = json.loads((target / "manifest.json").read_text())
        assert manifest["config"]["digest"].startswith("sha256:")
    else:
        listing = subprocess.run(["tar", "-tf", str(target)], capture_output=True, text=True)
        assert "index.json" in listing.stdout.split()
