"""scripts/real-gpu-check.sh cannot run without a GPU here; keep it at least sound."""

from __future__ import annotations

import subprocess

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


def test_real_gpu_check_fails_clearly_without_torch_or_plugin() -> None:
    # With a Python that has no torch (or no plugin next to it) the script must refuse early.
    result = subprocess.run(
        [str(SCRIPT)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHON": "/bin/false"},
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("real-gpu-check: FAIL: ")
