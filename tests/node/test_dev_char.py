"""``dev-char-symlinks.sh`` run for real with ``sh`` against a fake ``/dev``: every NVIDIA device
node gets ``/dev/char/<major>:<minor>`` pointing at its host path (systemd rebuilds device rules
from those links on ``daemon-reload``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gpustack.constructs.scripts import DEV_CHAR_SYMLINKS

from .devtree import NVIDIA_NODES, make_nodes

# (dev root the toolkit sees, dev root on the host): the driver container's, or the host's.
ROOTS = [("driver-root", "/run/nvidia/driver"), ("host", "/")]


def run(script_dir: Path, here: Path, host: str, chars: Path, env: dict[str, str]) -> str:
    script = script_dir / "dev-char-symlinks.sh"
    script.write_text(DEV_CHAR_SYMLINKS)
    result = subprocess.run(
        ["sh", str(script), str(here), host, str(chars)], env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("files", [False, True], ids=["mknod-or-files", "files"])
@pytest.mark.parametrize(("here_name", "host"), ROOTS, ids=[r[0] for r in ROOTS])
def test_every_nvidia_node_is_linked_by_its_numbers(
    tmp_path: Path, here_name: str, host: str, files: bool
) -> None:
    here, chars = tmp_path / here_name, tmp_path / "dev-char"
    env = make_nodes(here / "dev", NVIDIA_NODES, tmp_path / "shim", files=files)
    (here / "dev" / "null").write_text("")  # not NVIDIA's: left alone
    out = run(tmp_path, here, host, chars, env)
    links = {p.name: os.readlink(p) for p in chars.iterdir()}
    prefix = host.rstrip("/")
    assert links == {f"{ma}:{mi}": f"{prefix}/dev/{n}" for n, (ma, mi) in NVIDIA_NODES.items()}
    assert f"linked {len(NVIDIA_NODES)} " in out


def test_rerun_replaces_stale_links(tmp_path: Path) -> None:
    here, chars = tmp_path / "driver-root", tmp_path / "dev-char"
    env = make_nodes(here / "dev", {"nvidia0": (195, 0)}, tmp_path / "shim")
    chars.mkdir()
    (chars / "195:0").symlink_to("/dev/gone")
    (chars / "1:3").symlink_to("../null")  # a kernel link for another device stays
    run(tmp_path, here, "/run/nvidia/driver", chars, env)
    run(tmp_path, here, "/run/nvidia/driver", chars, env)
    assert os.readlink(chars / "195:0") == "/run/nvidia/driver/dev/nvidia0"
    assert os.readlink(chars / "1:3") == "../null"


def test_fails_while_the_driver_made_no_nodes(tmp_path: Path) -> None:
    (tmp_path / "driver-root" / "dev").mkdir(parents=True)
    script = tmp_path / "s.sh"
    script.write_text(DEV_CHAR_SYMLINKS)
    result = subprocess.run(
        ["sh", str(script), str(tmp_path / "driver-root"), "/", str(tmp_path / "c")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "no NVIDIA device nodes" in result.stderr
