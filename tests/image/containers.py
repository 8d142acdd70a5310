"""What the image tests share: how podman runs a container here and who may build one."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# runc (what CI installs; crun fails on some cgroup setups) and ulimits within the host's hard
# limits (podman's defaults exceed them on CI machines and runc then refuses to start). The rest
# mirrors the pods' hardening: no network, no capabilities, no privilege escalation, read-only
# root filesystem; the images must work like that.
PODMAN_RUN = (
    "--runtime", "runc", "run",
    "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
    "--network", "none", "--cap-drop", "all", "--security-opt", "no-new-privileges",
    "--read-only",
)  # fmt: skip


@dataclass(frozen=True)
class Tools:
    buildah: str
    podman: str


def root_required() -> None:
    """buildah/podman storage and mmdebstrap's root mode need root (CI runs as root)."""
    if os.geteuid() == 0:
        return
    message = "the image test needs root (buildah, podman, mmdebstrap)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def run(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)


def built_image(tools: Tools, script: Path, name: str, timeout: float) -> Iterator[str]:
    """Build an image with one of scripts/build-*-image.sh under a fresh test tag, yield the
    tag, remove the image afterwards (the cached base and wheels are reused and kept)."""
    tag = f"localhost/{name}:{uuid.uuid4().hex[:12]}"
    env = {**os.environ, "TAG": tag, "PYTHON": sys.executable}
    proc = subprocess.run(
        [str(script)],
        cwd=script.parents[1], env=env, capture_output=True, text=True, timeout=timeout,
        check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        pytest.fail(f"image build failed (exit {proc.returncode}):\n{proc.stderr[-6000:]}")
    assert proc.stdout.strip() == tag
    try:
        yield tag
    finally:
        run([tools.buildah, "rmi", "--force", tag])
