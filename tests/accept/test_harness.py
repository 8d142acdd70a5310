"""The harness as the acceptance pods run it: the synthesized Job's command and environment,
here. ``devices.py`` reads ``nvidia-smi -L`` from a stand-in that prints a recorded listing;
``allreduce.py`` runs under torchrun on the CPU (gloo) with real PyTorch, against the very
threshold the Job carries (which a CPU cannot reach) and against one it can."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gpustack.accept.harness.allreduce import bus_bandwidth
from gpustack.accept.plan import plan
from gpustack.accept.report import parse_logs, render_junit, render_text
from tests.accept.conftest import as_run_here, container_env, job, load, objects

LISTINGS = Path(__file__).parent / "listings"
H100 = Path("profiles/h100-training.yaml")
MIG = Path("profiles/a100-mig-mixed.yaml")
L4 = Path("profiles/l4-inference-timeslicing.yaml")


def run_devices(
    tmp_path: Path, profile: Path, listing: str | None, name: str, index: int = 0, node: int = 1
) -> subprocess.CompletedProcess[str]:
    container = job(objects(profile), name)["spec"]["template"]["spec"]["containers"][index]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if listing is not None:
        smi = bin_dir / "nvidia-smi"
        smi.write_text(f'#!/bin/sh\n[ "$1" = -L ] || exit 2\ncat "{LISTINGS / listing}"\n')
        smi.chmod(0o755)
    env = {
        **container_env(container, NODE_NAME=f"gpu-{node}", POD_NAME=f"{name}-{node}-x7k2p"),
        "PATH": f"{bin_dir}:/usr/bin:/bin",
    }
    return subprocess.run(
        as_run_here(container["command"], {}), env=env, capture_output=True, text=True, timeout=60
    )


CASES = [
    ("h100-ok", H100, "h100x8.txt", "gpustack-accept-devices", 0, []),
    ("h100-one-missing", H100, "h100x7.txt", "gpustack-accept-devices", 1,
     ["7 GPU(s) visible, 8 promised"]),
    ("h100-wrong-product", H100, "h200x8.txt", "gpustack-accept-devices", 1,
     ["GPU product NVIDIA H200, NVIDIA H100 80GB HBM3 promised"]),
    ("mig-ok", MIG, "a100-mig.txt", "gpustack-accept-devices", 0, []),
    ("mig-short", MIG, "a100-mig-short.txt", "gpustack-accept-devices", 1,
     ["14 MIG 1g.10gb device(s), 16 promised"]),
    ("replica-ok", L4, "l4x1.txt", "gpustack-accept-devices", 0, []),
    ("no-nvidia-smi", H100, None, "gpustack-accept-devices", 1,
     ["nvidia-smi not found: the runtime class did not give the container the driver"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("profile", "listing", "name", "code", "problems"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_devices_check(
    tmp_path: Path, profile: Path, listing: str | None, name: str, code: int, problems: list[str]
) -> None:
    done = run_devices(tmp_path, profile, listing, name)
    assert done.returncode == code, done.stdout + done.stderr
    mark, _, data = done.stdout.strip().partition(" ")
    assert mark == "GPUSTACK-ACCEPT"
    result = json.loads(data)
    assert result["problems"] == problems and result["node"] == "gpu-1"


def test_bus_bandwidth_is_nccl_tests_formula() -> None:
    """nccl-tests (doc/PERFORMANCE.md): busbw = algbw * 2 (n - 1) / n for all-reduce."""
    assert bus_bandwidth(8_000_000_000, 1.0, 8) == (8.0, 14.0)
    assert bus_bandwidth(1_000_000_000, 0.5, 2) == (2.0, 2.0)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _cpu_env(extra: dict[str, str]) -> dict[str, str]:
    return {
        **os.environ,
        **extra,
        "GPUSTACK_ALLOW_CPU": "true",
        "GLOO_SOCKET_IFNAME": "lo",
        "OMP_NUM_THREADS": "1",
        "HOME": os.environ.get("HOME", "/tmp"),
    }


#: Small enough for a CPU in CI: the measurement, not its size, is under test.
SMALL = ["--size-mb=2", "--iters=3", "--warmup=1"]


def _allreduce_command(
    name: str, threshold: float | None, gpus: int = 2, nodes: int = 1
) -> tuple[list[str], dict[str, Any]]:
    objs = (
        objects(H100, nodes, min_busbw=threshold) if threshold is not None else objects(H100, nodes)
    )
    container = job(objs, name)["spec"]["template"]["spec"]["containers"][0]
    command = [
        w if not w.startswith("--nproc-per-node=") else f"--nproc-per-node={gpus}"
        for w in container["command"]
    ]
    return command + SMALL, container


@pytest.mark.parametrize(
    ("threshold", "code"), [(0.001, 0), (None, 1)], ids=["low", "h100-nvlink4"]
)
def test_allreduce_on_one_node_on_the_cpu(
    real_torch: None, threshold: float | None, code: int
) -> None:
    """Two ranks under torchrun --standalone, as the per-node Job runs them (with 2 ranks for
    8 GPUs); with the H100 threshold the Job carries (288 GB/s), gloo on a CPU fails."""
    command, container = _allreduce_command("gpustack-accept-allreduce", threshold)
    env = _cpu_env(container_env(container, NODE_NAME="gpu-1", POD_NAME="p-0"))
    done = subprocess.run(
        as_run_here(command, {}), env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == code, done.stdout + done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("GPUSTACK-ACCEPT "))
    result = json.loads(line.partition(" ")[2])
    assert result["backend"] == "gloo" and result["world"] == 2 and result["busbw"] > 0
    assert result["ok"] is (code == 0)
    if code:
        assert result["threshold"] == 288.0
        assert "below 288.00 GB/s" in result["problems"][0]


def test_allreduce_across_two_nodes_on_loopback(real_torch: None, tmp_path: Path) -> None:
    """Two torchrun "nodes" (one process each), rank 0 reached as the Service names it: here
    127.0.0.1; the command and its $(VAR)s as the multi-node Job writes them."""
    command, container = _allreduce_command(
        "gpustack-accept-allreduce-nodes", 0.001, gpus=1, nodes=2
    )
    port = str(_free_port())
    procs = []
    for rank in range(2):
        values = {"NODE_RANK": str(rank), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port}
        env = _cpu_env(
            {**container_env(container, NODE_NAME=f"gpu-{rank}", POD_NAME=f"p-{rank}"), **values}
        )
        procs.append(
            subprocess.Popen(
                as_run_here(command, values),
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    (line,) = [x for x in outputs[0].splitlines() if x.startswith("GPUSTACK-ACCEPT ")]
    result = json.loads(line.partition(" ")[2])
    assert result["check"] == "allreduce-nodes" and result["world"] == 2
    assert not any(x.startswith("GPUSTACK-ACCEPT ") for x in outputs[1].splitlines())


def test_report_from_the_harness_output(tmp_path: Path) -> None:
    """The devices results of two nodes, one short of a GPU, and no all-reduce result: the
    report says so, in text and JUnit."""
    logs = []
    for i, listing in enumerate(["h100x8.txt", "h100x7.txt"]):
        (tmp_path / str(i)).mkdir()
        done = run_devices(tmp_path / str(i), H100, listing, "gpustack-accept-devices", node=i)
        logs.append(f"[pod/gpustack-accept-devices-{i}-abcde/devices] {done.stdout.strip()}")
    results = parse_logs("\n".join(logs) + "\nsome other log line\n", plan(load(H100), None, 2))
    text = render_text(results)
    assert text.splitlines() == [
        "PASS devices gpu-0/gpustack-accept-devices-0-x7k2p: 8 x NVIDIA H100 80GB HBM3",
        "FAIL devices gpu-1/gpustack-accept-devices-1-x7k2p: 7 GPU(s) visible, 8 promised",
        "FAIL allreduce-node run: 2 of 2 result(s) missing: a pod did not run or did not finish"
        " (kubectl get pods -l app.kubernetes.io/component=acceptance)",
        "FAIL allreduce-nodes run: 1 of 1 result(s) missing: a pod did not run or did not finish"
        " (kubectl get pods -l app.kubernetes.io/component=acceptance)",
        "4 checks, 3 failed",
    ]
    junit = render_junit(results)
    assert '<testsuites name="gpustack accept" tests="4" failures="3">' in junit
    assert junit.count("<failure ") == 3
