"""The bench scripts answer bad arguments with usage, not a traceback, and run on valid fleets."""

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
    [
        (["--help"], 0, "--count"),
        (["--count", "0"], 2, "--count must be at least 1"),
        (["--fleet", "x"], 2, "invalid choice: 'x'"),
        (["--distinct", "--fleet", "mixed"], 2, "--distinct is --fleet distinct"),
    ],
)
def test_fleet_arguments(args: list[str], code: int, says: str) -> None:
    done = subprocess.run([sys.executable, str(FLEET), *args], capture_output=True, text=True)
    assert done.returncode == code
    assert says in done.stdout + done.stderr


@pytest.mark.parametrize("fleet", ["variants", "distinct", "mixed"])
def test_every_bench_fleet_validates(fleet: str, tmp_path: Path) -> None:
    """The bench's fleets are real profiles: each validates, and the labelled fleets label each
    cluster with its own ``cNNNN``."""
    import yaml

    from gpustack.checker import check_paths

    sys.path.insert(0, str(BENCH.parent))
    try:
        from synth_clusters import write_profiles
    finally:
        sys.path.remove(str(BENCH.parent))
    write_profiles(tmp_path, 30, width=4, fleet=fleet)
    files = sorted(tmp_path.glob("*.yaml"))
    assert len(files) == 30
    assert check_paths(files).ok
    labels = [yaml.safe_load(f.read_text())["metadata"].get("labels") for f in files]
    if fleet == "variants":
        assert labels == [None] * 30
    else:
        assert labels == [{"fleet.example.com/cluster": f"c{i:04d}"} for i in range(30)]


ONE = BENCH.with_name("one_cluster.py")


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["--help"], 0, "--runs"),
        (["--runs", "0"], 2, "--runs must be at least 1"),
        (["no-such.yaml"], 2, "no-such.yaml: no such profile"),
    ],
)
def test_one_cluster_arguments(args: list[str], code: int, says: str) -> None:
    done = subprocess.run([sys.executable, str(ONE), *args], capture_output=True, text=True)
    assert done.returncode == code
    assert says in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


VALIDATE = BENCH.with_name("validate_profiles.py")


def test_the_validation_bench_runs_on_profiles_that_validate() -> None:
    """Its generated fleet mixes distributions over a CDI base: every profile must validate
    (k3s and RKE2 ones once failed rule k3s-cdi-needs-containerd-2, and the bench exited)."""
    done = subprocess.run(
        [sys.executable, str(VALIDATE), "40"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "profiles: 40" in done.stdout


SCALE = BENCH.with_name("fleet_scale.py")


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["--help"], 0, "10000"),
        (["0"], 2, "each COUNT must be at least 1"),
        (["x"], 2, "invalid int value: 'x'"),
    ],
)
def test_scale_arguments(args: list[str], code: int, says: str) -> None:
    done = subprocess.run([sys.executable, str(SCALE), *args], capture_output=True, text=True)
    assert done.returncode == code
    assert says in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
