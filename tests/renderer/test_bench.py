"""bench/plugin_render.py answers bad arguments with usage, not a traceback (and without
starting a renderer)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.renderer.procs import REPO

BENCH = REPO / "bench" / "plugin_render.py"


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["--help"], 0, "--rounds"),
        (["--runs", "x"], 2, "invalid int value: 'x'"),
        (["--cold", "0"], 2, "--runs, --cold and --rounds must each be at least 1"),
    ],
)
def test_arguments(args: list[str], code: int, says: str) -> None:
    done = subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True)
    assert done.returncode == code
    assert says in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
