"""The plugin's CDI spec: written with CDI strategies, naming every device Allocate returns."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.plugin import cdi
from gpustack.plugin.allocate import CDI_KIND
from gpustack.plugin.backends.nvml import NvmlBackend, mig_cap_paths
from gpustack.plugin.config import PluginConfig
from gpustack.plugin.devices import Gpu, MigDevice, Unit
from gpustack.plugin.testkubelet import KubeletSimulator
from gpustack.plugin.v1beta1 import api_pb2

from .conftest import PluginProcess, StartPlugin, sim_config
from .test_grpc import U, mig_gpus, sharing

GPU = "nvidia.com/gpu"
RunPlugin = Callable[..., PluginProcess]
KIND = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9.-]*/[a-zA-Z0-9][a-zA-Z0-9_.-]*$")
VERSIONS = ("0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0", "1.0.0")


def spec_problems(spec: Any) -> list[str]:
    """What a CDI runtime would reject in ``spec``, structurally; empty when it looks valid."""
    if not isinstance(spec, dict):
        return ["spec is not an object"]
    problems = [f"missing {key}" for key in ("cdiVersion", "kind", "devices") if key not in spec]
    if problems:
        return problems
    if spec["cdiVersion"] not in VERSIONS:
        problems.append(f"cdiVersion {spec['cdiVersion']!r} is not a released version")
    elif VERSIONS.index(spec["cdiVersion"]) < VERSIONS.index(cdi.required_version(spec)):
        problems.append(f"cdiVersion {spec['cdiVersion']} is too old for what the spec uses")
    if not KIND.match(spec["kind"]):
        problems.append(f"kind {spec['kind']!r} is not <vendor>/<class>")
    names: set[str] = set()
    all_edits = [spec.get("containerEdits", {})]
    for device in spec["devices"]:
        name = device.get("name", "")
        if not re.match(r"^[a-zA-Z0-9][a-zA-Z0-9_.:-]*$", name):
            problems.append(f"device name {name!r} is invalid")
        if name in names:
            problems.append(f"device {name!r} appears twice")
        names.add(name)
        if not device.get("containerEdits"):
            problems.append(f"device {name!r} has no containerEdits")
        all_edits.append(device.get("containerEdits", {}))
    for edits in all_edits:
        for env in edits.get("env", []):
            if "=" not in env:
                problems.append(f"env {env!r} is not NAME=value")
        for node in edits.get("deviceNodes", []):
            if not node.get("path", "").startswith("/"):
                problems.append(f"device node {node!r} has no absolute path")
        for mount in edits.get("mounts", []):
            if not (mount.get("hostPath", "").startswith("/") and mount.get("containerPath")):
                problems.append(f"mount {mount!r} lacks hostPath or containerPath")
        for hook in edits.get("hooks", []):
            if hook.get("hookName") != "createContainer" or not hook["path"].startswith("/"):
                problems.append(f"hook {hook!r} is not a createContainer hook with a path")
    return problems


def read_spec(root: Path) -> dict[str, Any]:
    doc = json.loads((root / cdi.SPEC_NAME).read_text())
    assert isinstance(doc, dict)
    return doc


def cdi_names(resp: api_pb2.ContainerAllocateResponse) -> list[str]:
    """Every CDI device name a response carries, from cdi_devices and annotations."""
    names = [d.name for d in resp.cdi_devices]
    for value in resp.annotations.values():
        names += value.split(",")
    return names


def assert_resolvable(spec: dict[str, Any], names: list[str]) -> None:
    assert names, "the response named no CDI devices"
    known = {f"{spec['kind']}={d['name']}" for d in spec["devices"]}
    assert [n for n in names if n not in known] == []


# --- through the plugin, over gRPC -----------------------------------------------------------


@pytest.mark.parametrize(
    ("strategy", "written"),
    [
        (["envvar"], False),
        (["volume-mounts"], False),
        (["cdi-cri"], True),
        (["cdi-annotations"], True),
        (["envvar", "cdi-annotations"], True),
    ],
    ids=lambda v: ",".join(v) if isinstance(v, list) else str(v),
)
def test_spec_written_only_with_a_cdi_strategy(
    kubelet: KubeletSimulator,
    start_plugin: StartPlugin,
    sockdir: Path,
    strategy: list[str],
    written: bool,
) -> None:
    plugin = start_plugin(sim_config(flags={"plugin": {"deviceListStrategy": strategy}}))
    kubelet.wait_for_registration(GPU)
    kubelet.allocate(GPU, [U[0]])
    assert (plugin.cdi_root / cdi.SPEC_NAME).exists() is written
    if written:
        assert sorted(p.name for p in plugin.cdi_root.iterdir()) == [cdi.SPEC_NAME]


@pytest.mark.parametrize("id_strategy", ["uuid", "index"])
def test_whole_gpu_names_resolve_with_env_only_simulated_edits(
    kubelet: KubeletSimulator, start_plugin: StartPlugin, id_strategy: str
) -> None:
    strategies = ["cdi-cri", "cdi-annotations"]
    flags = {"plugin": {"deviceListStrategy": strategies, "deviceIDStrategy": id_strategy}}
    plugin = start_plugin(sim_config(flags=flags))
    kubelet.wait_for_registration(GPU)
    resp = kubelet.allocate(GPU, [U[0], U[5]]).container_responses[0]
    names = cdi_names(resp)
    assert len(names) == 4  # two devices, as CDI devices and in the annotation
    spec = read_spec(plugin.cdi_root)
    assert spec_problems(spec) == []
    assert spec["kind"] == CDI_KIND
    assert_resolvable(spec, names)
    # 8 GPUs, each by UUID and by index; simulated devices carry env, never device nodes.
    assert len(spec["devices"]) == 16
    by_name = {d["name"]: d["containerEdits"] for d in spec["devices"]}
    assert by_name[U[5]] == by_name["5"] == {"env": [f"GPUSTACK_SIMULATED_DEVICE_5={U[5]}"]}
    assert spec["containerEdits"] == {"env": ["NVIDIA_VISIBLE_DEVICES=void"]}
    assert spec["cdiVersion"] == "0.5.0"  # index names start with a digit


def test_time_sliced_replica_names_resolve(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    config = sim_config(
        flags={"plugin": {"deviceListStrategy": "cdi-cri"}},
        sharing=sharing(4, renameByDefault=True),
    )
    plugin = start_plugin(config)
    resource = "nvidia.com/gpu.shared"
    kubelet.wait_for_registration(resource)
    ids = [d.ID for d in kubelet.list_and_watch(resource)]
    assert len(ids) == 32
    spec = read_spec(plugin.cdi_root)
    assert spec_problems(spec) == []
    for batch in (ids[:3], ids[5:6], [ids[0], ids[31]]):
        resp = kubelet.allocate(resource, batch).container_responses[0]
        assert_resolvable(spec, cdi_names(resp))
    resp = kubelet.allocate(resource, [f"{U[2]}::0", f"{U[2]}::3"]).container_responses[0]
    assert cdi_names(resp) == [f"{CDI_KIND}={U[2]}"]  # replicas collapse to one device


@pytest.mark.parametrize("id_strategy", ["uuid", "index"])
def test_mig_mixed_names_resolve(
    kubelet: KubeletSimulator, start_plugin: StartPlugin, id_strategy: str
) -> None:
    config = sim_config(
        flags={
            "migStrategy": "mixed",
            "plugin": {"deviceListStrategy": "cdi-cri", "deviceIDStrategy": id_strategy},
        },
        gpustack=mig_gpus([{"1g.10gb": 7}, {"3g.40gb": 1, "2g.20gb": 2}, None]),
    )
    plugin = start_plugin(config)
    resources = ["nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb", "nvidia.com/mig-2g.20gb"]
    for resource in [*resources, GPU]:
        kubelet.wait_for_registration(resource)
    spec = read_spec(plugin.cdi_root)
    assert spec_problems(spec) == []
    allocated: list[str] = []
    for resource in [*resources, GPU]:
        ids = [d.ID for d in kubelet.list_and_watch(resource)]
        for device_id in ids:
            allocated += cdi_names(kubelet.allocate(resource, [device_id]).container_responses[0])
    assert len(allocated) == 11  # 7 + 1 + 2 MIG devices and the one whole GPU
    assert_resolvable(spec, allocated)
    by_name = {d["name"]: d["containerEdits"] for d in spec["devices"]}
    assert by_name["1:2"]["env"][0].startswith("GPUSTACK_SIMULATED_DEVICE_1_2=MIG-")


# --- the spec's content, NVML backend against a fake driver tree --------------------------


def touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def fake_driver_root(root: Path) -> None:
    lib = root / "usr/lib/x86_64-linux-gnu"
    for name in ("libcuda", "libnvidia-ml", "libnvidia-ptxjitcompiler", "libcudadebugger"):
        touch(lib / f"{name}.so.570.133.20")
        (lib / f"{name}.so.1").symlink_to(f"{name}.so.570.133.20")
    (lib / "libcuda.so").symlink_to("libcuda.so.1")
    touch(lib / "libnvidia-egl-wayland.so.1.1.13")  # not a compute library: not mounted
    touch(lib / "libc.so.6")
    # A merged-/usr alias of the same folder: its files are found once, under usr/lib.
    (root / "lib").symlink_to("usr/lib")
    touch(root / "usr/lib64/libnvidia-nvvm.so.4.0.0")
    touch(root / "usr/bin/nvidia-smi")
    touch(root / "usr/bin/nvidia-cuda-mps-control")
    touch(root / "dev/nvidiactl")
    touch(root / "dev/nvidia-uvm")
    caps = root / "proc/driver/nvidia/capabilities/gpu0/mig"
    touch(caps / "gi3/access", "DeviceFileMinor: 30\nDeviceFileMode: 292\n")
    touch(caps / "gi3/ci0/access", "DeviceFileMinor: 31\nDeviceFileMode: 292\n")


def test_nvml_discovery_in_a_fake_driver_tree(tmp_path: Path) -> None:
    fake_driver_root(tmp_path)
    files = cdi.discover_driver_files(str(tmp_path))
    assert files.libraries == (
        "/usr/lib64/libnvidia-nvvm.so.4.0.0",
        "/usr/lib/x86_64-linux-gnu/libcuda.so.570.133.20",
        "/usr/lib/x86_64-linux-gnu/libcudadebugger.so.570.133.20",
        "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.570.133.20",
        "/usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler.so.570.133.20",
    )
    assert files.binaries == ("/usr/bin/nvidia-smi", "/usr/bin/nvidia-cuda-mps-control")
    caps = mig_cap_paths(0, 3, 0, proc_root=str(tmp_path))
    assert caps == ("/dev/nvidia-caps/nvidia-cap30", "/dev/nvidia-caps/nvidia-cap31")
    config = PluginConfig.from_dict({"flags": {"plugin": {"containerDriverRoot": str(tmp_path)}}})
    control = NvmlBackend(config).control_paths()
    assert {"/dev/nvidiactl", "/dev/nvidia-uvm"} <= set(control)
    assert ("/dev/nvidia-modeset" in control) is os.path.exists("/dev/nvidia-modeset")


def nvml_units(root: Path) -> list[Unit]:
    gpu = Gpu(0, "GPU-aaaa", 0, "NVIDIA A100", 81920, "8.0", 0, frozenset(), True, ())
    mig = MigDevice(
        uuid="MIG-bbbb",
        profile="3g.40gb",
        parent_uuid=gpu.uuid,
        parent_index=0,
        position=0,
        gpu_instance=3,
        compute_instance=0,
        device_paths=("/dev/nvidia0", *mig_cap_paths(0, 3, 0, proc_root=str(root))),
    )
    other = Gpu(1, "GPU-cccc", 1, "NVIDIA A100", 81920, "8.0", 0, frozenset(), False, ())
    return [Unit.of_mig(gpu, mig), Unit.of_gpu(other)]


def test_nvml_spec_translates_paths_to_the_host(tmp_path: Path) -> None:
    fake_driver_root(tmp_path)
    settings = cdi.SpecSettings(
        host_driver_root="/run/nvidia/driver",
        dev_root="/run/nvidia/driver",
        hook_path="/usr/local/nvidia/toolkit/nvidia-cdi-hook",
    )
    files = cdi.discover_driver_files(str(tmp_path))
    spec = cdi.build_spec(
        nvml_units(tmp_path), settings, ("/dev/nvidiactl", "/dev/nvidia-uvm"), files
    )
    assert spec_problems(spec) == []
    assert spec["cdiVersion"] == "0.5.0"  # device nodes carry hostPath
    by_name = {d["name"]: d["containerEdits"] for d in spec["devices"]}
    assert sorted(by_name) == ["0:0", "1", "GPU-cccc", "MIG-bbbb"]
    assert by_name["MIG-bbbb"]["deviceNodes"] == [
        {"path": p, "hostPath": f"/run/nvidia/driver{p}"}
        for p in ("/dev/nvidia0", "/dev/nvidia-caps/nvidia-cap30", "/dev/nvidia-caps/nvidia-cap31")
    ]
    assert by_name["1"] == {
        "deviceNodes": [{"path": "/dev/nvidia1", "hostPath": "/run/nvidia/driver/dev/nvidia1"}]
    }
    common = spec["containerEdits"]
    assert common["env"] == ["NVIDIA_VISIBLE_DEVICES=void"]
    assert [n["hostPath"] for n in common["deviceNodes"]] == [
        "/run/nvidia/driver/dev/nvidiactl",
        "/run/nvidia/driver/dev/nvidia-uvm",
    ]
    mounts = {m["containerPath"]: m for m in common["mounts"]}
    assert set(mounts) == {*files.libraries, *files.binaries}
    smi = mounts["/usr/bin/nvidia-smi"]
    assert smi["hostPath"] == "/run/nvidia/driver/usr/bin/nvidia-smi"
    assert smi["options"] == ["ro", "nosuid", "nodev", "bind"]
    hook = "/usr/local/nvidia/toolkit/nvidia-cdi-hook"
    assert common["hooks"] == [
        {
            "hookName": "createContainer",
            "path": hook,
            "args": [
                "nvidia-cdi-hook",
                "create-symlinks",
                "--link",
                "libcuda.so.1::/usr/lib/x86_64-linux-gnu/libcuda.so",
            ],
        },
        {
            "hookName": "createContainer",
            "path": hook,
            "args": [
                "nvidia-cdi-hook",
                "update-ldcache",
                "--folder",
                "/usr/lib/x86_64-linux-gnu",
                "--folder",
                "/usr/lib64",
            ],
        },
    ]


def test_host_driver_at_root_keeps_paths_and_the_lowest_version(tmp_path: Path) -> None:
    fake_driver_root(tmp_path)
    files = cdi.discover_driver_files(str(tmp_path))
    units = [u for u in nvml_units(tmp_path) if u.uuid == "GPU-cccc"]
    spec = cdi.build_spec(units, cdi.SpecSettings(), ("/dev/nvidiactl",), files)
    spec["devices"] = [d for d in spec["devices"] if d["name"] == "GPU-cccc"]
    assert cdi.required_version(spec) == "0.3.0"  # no digit names, no device-node hostPath
    mounts = spec["containerEdits"]["mounts"]
    assert all(m["hostPath"] == m["containerPath"] for m in mounts)
    assert spec["containerEdits"]["deviceNodes"] == [{"path": "/dev/nvidiactl"}]


def test_no_driver_files_means_no_mounts_or_hooks(tmp_path: Path) -> None:
    files = cdi.discover_driver_files(str(tmp_path / "missing"))
    assert files == cdi.DriverFiles()
    spec = cdi.build_spec(nvml_units(tmp_path), cdi.SpecSettings(), (), files)
    assert spec["containerEdits"] == {"env": ["NVIDIA_VISIBLE_DEVICES=void"]}
    assert spec_problems(spec) == []


# --- writing ---------------------------------------------------------------------------------


def simple_spec(uuid: str = "GPU-1") -> dict[str, Any]:
    unit = Unit(uuid, "0", ("/dev/nvidia0",), None, uuid, None, frozenset())
    return cdi.build_spec([unit], cdi.SpecSettings())


def test_write_is_atomic_deterministic_and_skips_unchanged(tmp_path: Path) -> None:
    root = tmp_path / "cdi"
    assert cdi.write_spec(str(root), simple_spec()) is True
    path = root / cdi.SPEC_NAME
    first = path.read_text()
    inode = path.stat().st_ino
    assert cdi.write_spec(str(root), simple_spec()) is False
    assert path.stat().st_ino == inode and path.read_text() == first
    assert cdi.write_spec(str(root), simple_spec("GPU-2")) is True
    assert path.stat().st_ino != inode  # replaced by rename, not rewritten in place
    assert "GPU-2" in path.read_text() and oct(path.stat().st_mode & 0o777) == "0o644"
    assert sorted(p.name for p in root.iterdir()) == [cdi.SPEC_NAME]
    assert cdi.render(simple_spec()) == first  # same devices, same bytes


def test_failed_write_leaves_old_spec_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cdi.write_spec(str(tmp_path), simple_spec())
    before = (tmp_path / cdi.SPEC_NAME).read_text()

    def broken(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="No space"):
        cdi.write_spec(str(tmp_path), simple_spec("GPU-2"))
    assert sorted(p.name for p in tmp_path.iterdir()) == [cdi.SPEC_NAME]
    assert (tmp_path / cdi.SPEC_NAME).read_text() == before


# --- the console script: flags, env and SIGHUP --------------------------------------------


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(doc))
    return path


def cdi_gpus(n: int) -> dict[str, Any]:
    return {
        "flags": {"plugin": {"deviceListStrategy": "cdi-cri"}},
        "gpustack": {
            "backend": "simulated",
            "simulated": {"gpus": [{"index": i} for i in range(n)]},
        },
    }


def wait_for(check: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_sighup_rewrites_spec_only_when_it_changes(
    kubelet: KubeletSimulator, sockdir: Path, run_plugin: RunPlugin
) -> None:
    cfg = write(sockdir / "c.yaml", cdi_gpus(2))
    root = sockdir / "cdi-env"
    proc = run_plugin(
        "--config-file", str(cfg), "--socket-dir", kubelet.socket_dir, env={"CDI_ROOT": str(root)}
    )
    kubelet.wait_for_registration(GPU)
    path = root / cdi.SPEC_NAME
    assert len(read_spec(root)["devices"]) == 4
    proc.wait_for_line("written (4 devices)")
    inode = path.stat().st_ino
    proc.send(signal.SIGHUP)  # same config: same spec, left alone (and the servers kept)
    proc.wait_for_line("unchanged (4 devices)")
    assert path.stat().st_ino == inode
    write(cfg, cdi_gpus(3))
    before = time.monotonic()
    proc.send(signal.SIGHUP)
    kubelet.wait_for_registration(GPU, after=before)
    wait_for(lambda: len(read_spec(root)["devices"]) == 6)
    assert path.stat().st_ino != inode
    ids = [d.ID for d in kubelet.list_and_watch(GPU)]
    assert_resolvable(read_spec(root), cdi_names(kubelet.allocate(GPU, ids).container_responses[0]))
    assert sorted(p.name for p in root.iterdir()) == [cdi.SPEC_NAME]
    assert proc.finish() == 0


def test_cdi_root_flag_wins_over_env(
    kubelet: KubeletSimulator, sockdir: Path, run_plugin: RunPlugin
) -> None:
    cfg = write(sockdir / "c.yaml", cdi_gpus(1))
    flag_root, env_root = sockdir / "flag", sockdir / "env"
    proc = run_plugin(
        "--config-file", str(cfg), "--socket-dir", kubelet.socket_dir,
        "--cdi-root", str(flag_root), "--nvidia-cdi-hook-path", "/opt/hook/nvidia-cdi-hook",
        env={"CDI_ROOT": str(env_root)},
    )  # fmt: skip
    kubelet.wait_for_registration(GPU)
    assert (flag_root / cdi.SPEC_NAME).exists() and not env_root.exists()
    assert proc.finish() == 0


def test_unwritable_cdi_root_is_one_line_exit_1(sockdir: Path, run_plugin: RunPlugin) -> None:
    cfg = write(sockdir / "c.yaml", cdi_gpus(1))
    blocker = touch(sockdir / "not-a-dir")
    proc = run_plugin(
        "--config-file", str(cfg), "--socket-dir", str(sockdir / "dp"),
        "--cdi-root", str(blocker / "cdi"),
    )  # fmt: skip
    assert proc.finish(sig=None) == 1
    line = proc.wait_for_line("cannot write the CDI spec")
    assert "--cdi-root" in line and "Traceback" not in proc.stderr


def test_relative_hook_path_is_a_usage_error(sockdir: Path, run_plugin: RunPlugin) -> None:
    proc = run_plugin("--socket-dir", str(sockdir), env={"NVIDIA_CDI_HOOK_PATH": "nvidia-cdi-hook"})
    assert proc.finish(sig=None) == 2
    assert "absolute host path" in proc.stderr
