"""The ``gpustack-device-plugin`` console script and the test kubelet CLI as real processes."""

from __future__ import annotations

import ctypes
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.plugin.testkubelet import KubeletSimulator, PluginConnection, Registration
from gpustack.plugin.v1beta1 import api_pb2

from .conftest import H100X8, PluginProcess, sim_config

GPU = "nvidia.com/gpu"
RunPlugin = Callable[..., PluginProcess]


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(doc))
    return path


def two_gpus(n: int = 2) -> dict[str, Any]:
    return {
        "gpustack": {
            "backend": "simulated",
            "simulated": {"gpus": [{"index": i} for i in range(n)]},
        }
    }


def nvml_loadable() -> bool:
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_stop_signal_removes_sockets(
    kubelet: KubeletSimulator, sockdir: Path, run_plugin: RunPlugin, sig: signal.Signals
) -> None:
    config = sim_config(
        flags={"migStrategy": "mixed"},
        sharing={
            "timeSlicing": {"renameByDefault": True, "resources": [{"name": GPU, "replicas": 2}]}
        },
    )
    config["gpustack"]["simulated"]["gpus"][0]["mig"] = {"enabled": True, "devices": {"3g.40gb": 2}}
    cfg = write(sockdir / "c.yaml", config)
    proc = run_plugin("--config-file", str(cfg), "--socket-dir", kubelet.socket_dir)
    kubelet.wait_for_registration("nvidia.com/gpu.shared")
    kubelet.wait_for_registration("nvidia.com/mig-3g.40gb")
    names = sorted(p.name for p in Path(kubelet.socket_dir).iterdir())
    assert names == ["kubelet.sock", "nvidia-gpu.shared.sock", "nvidia-mig-3g.40gb.sock"]
    assert proc.finish(sig) == 0
    assert sorted(p.name for p in Path(kubelet.socket_dir).iterdir()) == ["kubelet.sock"]
    assert "Traceback" not in proc.stderr


def test_sighup_reloads_config(
    kubelet: KubeletSimulator, sockdir: Path, run_plugin: RunPlugin
) -> None:
    cfg = write(sockdir / "c.yaml", two_gpus(2))
    proc = run_plugin("--config-file", str(cfg), "--socket-dir", kubelet.socket_dir)
    kubelet.wait_for_registration(GPU)
    assert len(kubelet.list_and_watch(GPU)) == 2
    write(cfg, two_gpus(3))
    before = time.monotonic()
    proc.send(signal.SIGHUP)
    kubelet.wait_for_registration(GPU, after=before)
    assert len(kubelet.plugin(GPU).wait_for(lambda d: len(d) == 3)) == 3
    # A broken file on reload leaves the running servers alone: same socket, same stream,
    # no re-registration (which would also forget health learned from NVML events).
    sock = Path(kubelet.socket_dir) / "nvidia-gpu.sock"
    inode = sock.stat().st_ino
    registrations = len(kubelet.registrations)
    cfg.write_text("flags: {migStrategy: sometimes}\n")
    proc.send(signal.SIGHUP)
    line = proc.wait_for_line("reload failed")
    assert "$.flags.migStrategy" in line and str(cfg) in line
    time.sleep(0.5)
    assert len(kubelet.registrations) == registrations
    assert sock.stat().st_ino == inode and not kubelet.plugin(GPU).closed
    assert len(kubelet.list_and_watch(GPU)) == 3
    assert len([ln for ln in proc.stderr.splitlines() if "ERROR" in ln]) == 1
    assert proc.finish() == 0


def test_nvml_without_gpu_fails_with_clear_message(sockdir: Path, run_plugin: RunPlugin) -> None:
    if nvml_loadable():
        pytest.skip("this machine has libnvidia-ml.so.1; the no-GPU error cannot occur")
    proc = run_plugin("--backend", "nvml", "--socket-dir", str(sockdir))
    assert proc.finish(sig=None) == 1
    errors = [line for line in proc.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1
    assert "libnvidia-ml.so.1 not found" in errors[0]
    assert "nvidia-ctk runtime configure" in errors[0] and "--backend simulated" in errors[0]
    assert "Traceback" not in proc.stderr


def test_nvml_without_gpu_waits_when_fail_on_init_error_is_false(
    sockdir: Path, run_plugin: RunPlugin
) -> None:
    if nvml_loadable():
        pytest.skip("this machine has libnvidia-ml.so.1; the no-GPU error cannot occur")
    proc = run_plugin(
        "--backend", "nvml", "--socket-dir", str(sockdir), env={"FAIL_ON_INIT_ERROR": "false"}
    )
    proc.wait_for_line("failOnInitError is false")
    assert proc.proc.poll() is None
    assert proc.finish() == 0


def test_bad_config_file_is_one_line_exit_1(sockdir: Path, run_plugin: RunPlugin) -> None:
    cfg = sockdir / "c.yaml"
    cfg.write_text("flags:\n  plugin:\n    deviceIDStrategy: serial\n")
    proc = run_plugin("--config-file", str(cfg), "--socket-dir", str(sockdir))
    assert proc.finish(sig=None) == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, lines
    assert f"{cfg}: $.flags.plugin.deviceIDStrategy" in lines[0] and "uuid, index" in lines[0]


def test_mps_config_is_refused_in_one_line_exit_1(sockdir: Path, run_plugin: RunPlugin) -> None:
    cfg = sockdir / "c.yaml"
    cfg.write_text("sharing:\n  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 4}]\n")
    proc = run_plugin("--config-file", str(cfg), "--socket-dir", str(sockdir))
    assert proc.finish(sig=None) == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, lines
    assert f"{cfg}: $.sharing.mps: gpustack's device plugin does not implement MPS" in lines[0]


def test_unusable_socket_dir_is_one_line_exit_1(sockdir: Path, run_plugin: RunPlugin) -> None:
    cfg = write(sockdir / "c.yaml", two_gpus(1))
    blocker = sockdir / "not-a-dir"
    blocker.write_text("")
    proc = run_plugin("--config-file", str(cfg), "--socket-dir", str(blocker / "dp"))
    assert proc.finish(sig=None) == 1
    errors = [line for line in proc.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and "cannot serve nvidia.com/gpu" in errors[0]
    assert "Traceback" not in proc.stderr


def test_second_instance_on_same_socket_exits_1_and_leaves_first_alone(
    kubelet: KubeletSimulator, sockdir: Path, run_plugin: RunPlugin
) -> None:
    cfg = write(sockdir / "c.yaml", two_gpus(2))
    first = run_plugin("--config-file", str(cfg), "--socket-dir", kubelet.socket_dir)
    kubelet.wait_for_registration(GPU)
    sock = Path(kubelet.socket_dir) / "nvidia-gpu.sock"
    inode = sock.stat().st_ino
    second = run_plugin("--config-file", str(cfg), "--socket-dir", kubelet.socket_dir)
    assert second.finish(sig=None) == 1
    errors = [line for line in second.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1 and "served by another running device plugin" in errors[0]
    time.sleep(0.5)
    assert sock.stat().st_ino == inode and len(kubelet.registrations) == 1
    assert len(kubelet.allocate(GPU, [kubelet.list_and_watch(GPU)[0].ID]).container_responses) == 1
    assert first.finish() == 0


def test_says_it_waits_for_a_missing_kubelet(sockdir: Path, run_plugin: RunPlugin) -> None:
    cfg = write(sockdir / "c.yaml", two_gpus(1))
    proc = run_plugin("--config-file", str(cfg), "--socket-dir", str(sockdir / "dp"))
    line = proc.wait_for_line("waiting for the kubelet")
    assert line.endswith(f"waiting for the kubelet to create {sockdir / 'dp' / 'kubelet.sock'}")
    assert proc.finish() == 0
    assert proc.stderr.count("waiting for the kubelet") == 1


def test_missing_config_file_exit_1(sockdir: Path, run_plugin: RunPlugin) -> None:
    proc = run_plugin("--config-file", str(sockdir / "nope.yaml"), "--socket-dir", str(sockdir))
    assert proc.finish(sig=None) == 1
    assert "cannot read the file" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "env", "needle"),
    [
        (["--mig-strategy", "sometimes"], {}, "--mig-strategy"),
        ([], {"MIG_STRATEGY": "sometimes"}, "MIG_STRATEGY"),
        (["--pass-device-specs=maybe"], {}, "--pass-device-specs"),
        ([], {"DEVICE_LIST_STRATEGY": "envvar,bogus"}, "DEVICE_LIST_STRATEGY"),
        ([], {"DP_DISABLE_HEALTHCHECKS": "79,x"}, "DP_DISABLE_HEALTHCHECKS"),
        (["--no-such-flag"], {}, "unrecognized arguments"),
    ],
    ids=["flag", "env", "bool-flag", "strategy-env", "healthchecks-env", "unknown-flag"],
)
def test_usage_errors_exit_2(
    sockdir: Path, run_plugin: RunPlugin, args: list[str], env: dict[str, str], needle: str
) -> None:
    proc = run_plugin("--socket-dir", str(sockdir), *args, env=env)
    assert proc.finish(sig=None) == 2
    assert needle in proc.stderr.splitlines()[-1]


def test_env_overrides_file_and_flag_overrides_env(
    kubelet: KubeletSimulator, sockdir: Path, run_plugin: RunPlugin
) -> None:
    cfg = write(sockdir / "c.yaml", two_gpus(1))
    proc = run_plugin(
        "--config-file", str(cfg), "--socket-dir", kubelet.socket_dir,
        env={"DEVICE_LIST_STRATEGY": "volume-mounts", "DEVICE_ID_STRATEGY": "index"},
    )  # fmt: skip
    kubelet.wait_for_registration(GPU)
    resp = kubelet.allocate(GPU, [kubelet.list_and_watch(GPU)[0].ID]).container_responses[0]
    assert [m.container_path for m in resp.mounts] == ["/var/run/nvidia-container-devices/0"]
    assert proc.finish() == 0

    before = time.monotonic()
    proc = run_plugin(
        "--config-file", str(cfg), "--socket-dir", kubelet.socket_dir,
        "--device-list-strategy", "envvar",
        env={"DEVICE_LIST_STRATEGY": "volume-mounts", "DEVICE_ID_STRATEGY": "index"},
    )  # fmt: skip
    kubelet.wait_for_registration(GPU, after=before)
    resp = kubelet.allocate(GPU, [kubelet.list_and_watch(GPU)[0].ID]).container_responses[0]
    assert dict(resp.envs) == {"NVIDIA_VISIBLE_DEVICES": "0"} and not resp.mounts
    assert proc.finish() == 0


def kubelet_cli(
    socket_dir: str, *args: str, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpustack.plugin.testkubelet", "--socket-dir", socket_dir, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_testkubelet_cli_prints_registration_devices_and_allocation(
    sockdir: Path, run_plugin: RunPlugin
) -> None:
    socket_dir = str(sockdir / "dp")
    cfg = write(sockdir / "c.yaml", H100X8)
    proc = run_plugin("--config-file", str(cfg), "--socket-dir", socket_dir)
    result = kubelet_cli(socket_dir, "--allocate", "2", "--timeout", "20")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["registered"] == {
        "resource": GPU,
        "endpoint": "nvidia-gpu.sock",
        "version": "v1beta1",
        "options": {"pre_start_required": False, "get_preferred_allocation_available": True},
    }
    assert len(out["devices"]) == 8 and out["devices"][0]["health"] == "Healthy"
    first_two = [d["id"] for d in out["devices"][:2]]
    assert out["allocate_response"] == {"envs": {"NVIDIA_VISIBLE_DEVICES": ",".join(first_two)}}
    assert proc.finish() == 0


def test_testkubelet_cli_times_out_clearly(sockdir: Path) -> None:
    result = kubelet_cli(str(sockdir), "--resource", "nvidia.com/gpu", "--timeout", "0.5")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip() == (
        "testkubelet: no registration of nvidia.com/gpu within 0.5 s (registered: none)"
    )


def test_testkubelet_cli_too_few_healthy_devices(sockdir: Path, run_plugin: RunPlugin) -> None:
    socket_dir = str(sockdir / "dp")
    cfg = write(sockdir / "c.yaml", two_gpus(2))
    proc = run_plugin("--config-file", str(cfg), "--socket-dir", socket_dir)
    result = kubelet_cli(socket_dir, "--allocate", "3", "--timeout", "20")
    assert result.returncode == 1
    assert "has 2 healthy devices, 3 requested" in result.stderr
    assert proc.finish() == 0


@pytest.mark.parametrize("how", ["flag", "env"])
def test_empty_kubelet_socket_serves_without_registering(
    kubelet: KubeletSimulator, sockdir: Path, run_plugin: RunPlugin, how: str
) -> None:
    """``KUBELET_SOCKET=""`` (or ``--kubelet-socket ""``), as in NVIDIA's plugin: serve the
    resource sockets but never register, even with a kubelet listening."""
    cfg = write(sockdir / "c.yaml", two_gpus(2))
    args = ["--config-file", str(cfg), "--socket-dir", kubelet.socket_dir]
    if how == "flag":
        proc = run_plugin(*args, "--kubelet-socket", "")
    else:
        proc = run_plugin(*args, env={"KUBELET_SOCKET": ""})
    proc.wait_for_line("without registering")
    sock = Path(kubelet.socket_dir) / "nvidia-gpu.sock"
    deadline = time.monotonic() + 5
    while not sock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    # dialled directly, the way a kubelet would after a registration
    registration = Registration(GPU, sock.name, "v1beta1", api_pb2.DevicePluginOptions(), 0.0)
    conn = PluginConnection(str(sock), registration)
    try:
        assert len(conn.wait_for(lambda d: len(d) == 2)) == 2
    finally:
        conn.close()
    time.sleep(0.5)
    assert kubelet.registrations == []
    assert proc.finish() == 0
    assert "waiting for the kubelet" not in proc.stderr
