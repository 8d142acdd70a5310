"""scripts/real-gpu-check.sh cannot run without a GPU here; keep it at least sound."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.tooling import require_tool

from .conftest import REPO

SCRIPT = REPO / "scripts" / "real-gpu-check.sh"


def test_real_gpu_check_parses() -> None:
    result = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_real_gpu_check_is_shellcheck_clean() -> None:
    shellcheck = require_tool("shellcheck")
    result = subprocess.run([shellcheck, str(SCRIPT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def _torch_importable(python: str) -> bool:
    return subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0


@pytest.mark.parametrize(
    ("python", "message"),
    [
        ("no-such-python", "no Python at no-such-python (set PYTHON)"),
        ("/bin/false", "/bin/false cannot import the plugin (pip install -e . first): "),
        (sys.executable, f"PyTorch is not importable by {sys.executable}: ModuleNotFoundError"),
    ],
    ids=["no-python", "no-plugin", "no-torch"],
)
def test_real_gpu_check_refuses_early(python: str, message: str) -> None:
    # PYTHON may be a command on PATH; the plugin and torch are checked before anything starts.
    if python == sys.executable and _torch_importable(python):
        pytest.skip("torch is installed here; the no-torch message cannot occur")
    result = subprocess.run(
        [str(SCRIPT)],
        capture_output=True,
        text=True,
        env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "PYTHON": python},
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.startswith(f"real-gpu-check: FAIL: {message}"), result.stderr
