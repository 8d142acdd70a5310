"""The arm64 plugin image (GH200/GB200 nodes), built on this amd64 machine for real.

``scripts/build-plugin-image.sh --arch arm64`` makes an arm64 Debian base with mmdebstrap and
runs the Containerfile's RUN steps under qemu-user-static (binfmt_misc; .ci/run sets it up).
The test checks the image says arm64, that its Python is an aarch64 binary, and that the plugin
starts in it (under emulation) far enough to print its usage.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.image.containers import PODMAN_RUN
from tests.tooling import require_tool

pytestmark = pytest.mark.image

REPO = Path(__file__).resolve().parents[2]
BINFMT = Path("/proc/sys/fs/binfmt_misc/qemu-aarch64")


def _require_emulation() -> None:
    if BINFMT.exists() and "enabled" in BINFMT.read_text():
        return
    message = f"{BINFMT} is not registered (apt-get install qemu-user-static binfmt-support)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def test_arm64_image_builds_and_runs_under_emulation() -> None:
    buildah = require_tool("buildah")
    podman = require_tool("podman")
    _require_emulation()
    built = subprocess.run(
        [str(REPO / "scripts" / "build-plugin-image.sh"), "--arch", "arm64"],
        cwd=REPO,
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert built.returncode == 0, built.stderr[-6000:]
    tag = built.stdout.strip().splitlines()[-1]
    assert tag.endswith("-arm64")
    inspect = json.loads(
        subprocess.run(
            [buildah, "inspect", "--type", "image", tag], capture_output=True, text=True, check=True
        ).stdout
    )
    assert inspect["OCIv1"]["architecture"] == "arm64"
    script = "uname -m && /opt/gpustack/bin/gpustack-device-plugin --help"
    run = subprocess.run(
        [podman, *PODMAN_RUN, "--rm", "--arch", "arm64", "--entrypoint", "/bin/sh", tag, "-c",
         script],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "aarch64"
    assert "usage" in run.stdout.lower()
