"""gpustack's ``dev-char-symlinks.sh`` against NVIDIA's ``nvidia-ctk system
create-dev-char-symlinks`` on the same device tree (``nvidia_code``).

NVIDIA's command links the device nodes of its mount namespace's ``/dev``
(``cmd/nvidia-ctk/system/create-dev-char-symlinks/existing.go``: ``/dev/nvidia*`` and
``/dev/nvidia-caps/nvidia-*``, minus ``nvidia-fs``, ``nvidia-nvswitch`` and ``nvidia-nvlink``
nodes), so it runs in bubblewrap with the fake tree bound at ``/dev``; gpustack's script runs with
``sh`` on the same tree as a host-driver node (device root ``/``). The link sets must be equal,
but for IMEX channels, which gpustack links on purpose (ComputeDomain pods are given them).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gpustack.constructs.scripts import DEV_CHAR_SYMLINKS

from .devtree import NVIDIA_NODES, make_nodes
from .real_installer import require_binaries
from .test_nvidia_installer import TAGS

pytestmark = pytest.mark.nvidia_code

#: A node with every kind of NVIDIA device node, the ones NVIDIA skips included.
NODES = {
    **NVIDIA_NODES,
    "nvidia-nvswitch0": (236, 0),
    "nvidia-nvswitchctl": (236, 255),
    "nvidia-nvlink": (235, 0),
    "nvidia-fs0": (234, 0),
    "nvidia-caps-imex-channels/channel0": (509, 0),
}


def _links(chars: Path) -> dict[str, str]:
    return {p.name: os.readlink(p) for p in chars.iterdir()}


@pytest.mark.parametrize("tag", TAGS)
def test_dev_char_links_equal_nvidia_ctks(tmp_path: Path, tag: str) -> None:
    binaries = require_binaries(tag)
    dev = tmp_path / "root" / "dev"
    env = make_nodes(dev, NODES, tmp_path / "shim")
    assert env["PATH"] == os.environ["PATH"], "nvidia-ctk needs real device nodes (mknod)"
    theirs, ours = tmp_path / "nvidia-char", tmp_path / "gpustack-char"
    theirs.mkdir()
    nvidia = subprocess.run(
        ["bwrap", "--ro-bind", "/", "/", "--dev-bind", str(dev), "/dev",
         "--bind", str(theirs), "/dev/char",
         str(binaries / "nvidia-ctk"), "system", "create-dev-char-symlinks"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert nvidia.returncode == 0, nvidia.stderr
    script = tmp_path / "dev-char-symlinks.sh"
    script.write_text(DEV_CHAR_SYMLINKS)
    mine = subprocess.run(
        ["sh", str(script), str(tmp_path / "root"), "/", str(ours)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert mine.returncode == 0, mine.stderr
    imex = {"509:0": "/dev/nvidia-caps-imex-channels/channel0"}
    assert _links(ours) == {**_links(theirs), **imex}
