"""bench/synth_clusters.py answers bad arguments with usage, not a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "synth_clusters.py"


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["--help"], 0, "COUNT"),
        (["x"], 2, "invalid int value: 'x'"),
        (["0"], 2, "each COUNT must be at least 1"),
    ],
)
def test_arguments(args: list[str], code: int, says: str) -> None:
    done = subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True)
    assert done.returncode == code
    assert says in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


FLEET = BENCH.with_name("synth_fleet.py")


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [(["--help"], 0, "--count"), (["--count", "0"], 2, "--count must be at least 1")],
)
def test_fleet_arguments(args: list[str], code: int, says: str) -> None:
    done = subprocess.run([sys.executable, str(FLEET), *args], capture_output=True, text=True)
    assert done.returncode == code
    assert says in done.stdout + done.stderr
