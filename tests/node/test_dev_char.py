"""``dev-char-symlinks.sh`` run for real with ``sh`` against a fake ``/dev``: every NVIDIA device
node gets ``/dev/char/<major>:<minor>`` pointing at its host path (systemd rebuilds device rules
from those links on ``daemon-reload``)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gpustack.constructs.kube import VALIDATIONS_DIR
from gpustack.constructs.scripts import DEV_CHAR_RELINK_SECONDS, DEV_CHAR_SYMLINKS, SCRIPTS_DIR
from gpustack.constructs.toolkit import ToolkitProps, render_scripts
from gpustack.constructs.toolkit_mounts import DEV_CHAR_CTR
from gpustack.profile.model import Profile

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


def test_nodes_made_later_are_linked_while_the_toolkit_runs(tmp_path: Path) -> None:
    """Issue 19 item 7: the start-up probe links the nodes once; a MIG device node made after a
    reconfiguration must get its /dev/char link too. The toolkit's entrypoint, run for real
    (a stub installer; the relink interval shortened), links a node that appears later."""
    here, chars = tmp_path / "driver-root", tmp_path / "dev-char"
    late = "nvidia-caps/nvidia-cap3"
    env = make_nodes(here / "dev", {**NVIDIA_NODES, late: (510, 3)}, tmp_path / "shim")
    aside = tmp_path / "aside"
    (here / "dev" / late).rename(aside)  # made later, as by a MIG reconfiguration
    scripts, validations, bin_dir = tmp_path / "scripts", tmp_path / "validations", tmp_path / "bin"
    for folder in (scripts, validations, bin_dir):
        folder.mkdir()
    (scripts / "dev-char-symlinks.sh").write_text(DEV_CHAR_SYMLINKS)
    (validations / "driver-ready").write_text(
        f"DEV_ROOT_CTR_PATH={here}\nNVIDIA_DEV_ROOT=/run/nvidia/driver\n"
    )
    (bin_dir / "nvidia-toolkit").write_text("#!/bin/sh\nexec sleep 60\n")
    (bin_dir / "nvidia-toolkit").chmod(0o755)
    toolkit = Profile.from_dict({"metadata": {"name": "t"}})
    entrypoint = (
        render_scripts(ToolkitProps.from_profile(toolkit))["entrypoint.sh"]
        .replace(f"sleep {DEV_CHAR_RELINK_SECONDS};", "sleep 0.2;")
        .replace("sleep 5\n", "")
        .replace(VALIDATIONS_DIR, str(validations))
        .replace(SCRIPTS_DIR, str(scripts))
        .replace(DEV_CHAR_CTR, str(chars))
    )
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    proc = subprocess.Popen(["sh", "-c", entrypoint], env=env, start_new_session=True)
    try:
        assert _eventually(lambda: (chars / "510:2").is_symlink())
        assert not (chars / "510:3").exists()
        aside.rename(here / "dev" / late)
        assert _eventually(lambda: (chars / "510:3").is_symlink())
        assert os.readlink(chars / "510:3") == f"/run/nvidia/driver/dev/{late}"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _eventually(check: Callable[[], bool], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False
