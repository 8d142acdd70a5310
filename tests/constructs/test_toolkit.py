"""Container-toolkit DaemonSet: installer env per runtime/distribution, mounts, readiness."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from gpustack.constructs.scripts import TOOLKIT_READY_PROBE, TOOLKIT_WAIT_FOR_DRIVER

from .conftest import Synth, container, env, find, host_paths, kinds, mounts, pod_spec, profile

DS = "nvidia-container-toolkit-daemonset"
CTR = "nvidia-container-toolkit-ctr"
INIT = "driver-validation"


def toolkit(synth: Synth, **sections: Any) -> dict[str, Any]:
    return find(synth(profile(**sections)), "DaemonSet", DS)


def test_component_objects(synth: Synth) -> None:
    assert kinds(synth(profile()), "container-toolkit") == [
        ("ServiceAccount", "nvidia-container-toolkit"),
        ("ConfigMap", "nvidia-container-toolkit-scripts"),
        ("DaemonSet", DS),
    ]


def test_omitted_when_toolkit_disabled(synth: Synth) -> None:
    assert kinds(synth(profile(toolkit={"enabled": False})), "container-toolkit") == []


# Each case: runtime section -> expected env subset, expected (mount path -> host dir).
RUNTIME_CASES: list[tuple[str, dict[str, Any], dict[str, str], dict[str, str]]] = [
    (
        "containerd-generic",
        {},
        {
            "RUNTIME": "containerd",
            "RUNTIME_CONFIG": "/runtime/config-dir/config.toml",
            "CONTAINERD_CONFIG": "/runtime/config-dir/config.toml",
            "RUNTIME_DROP_IN_CONFIG": "/runtime/config-dir.d/99-nvidia.toml",
            "RUNTIME_DROP_IN_CONFIG_HOST_PATH": "/etc/containerd/conf.d/99-nvidia.toml",
            "RUNTIME_SOCKET": "/runtime/sock-dir/containerd.sock",
            "CONTAINERD_SOCKET": "/runtime/sock-dir/containerd.sock",
            "RUNTIME_CONFIG_SOURCE": "command,file",
            "RUNTIME_RESTART_MODE": "signal",
            "CONTAINERD_RUNTIME_CLASS": "nvidia",
            "NVIDIA_RUNTIME_NAME": "nvidia",
        },
        {
            "/runtime/config-dir/": "/etc/containerd",
            "/runtime/config-dir.d/": "/etc/containerd/conf.d",
            "/runtime/sock-dir/": "/run/containerd",
        },
    ),
    (
        "k3s",
        {"distribution": "k3s"},
        {
            "CONTAINERD_CONFIG": "/runtime/config-dir/config.toml",
            "RUNTIME_DROP_IN_CONFIG": "",
            "CONTAINERD_SOCKET": "/runtime/sock-dir/containerd.sock",
        },
        {
            "/runtime/config-dir/": "/var/lib/rancher/k3s/agent/etc/containerd",
            "/runtime/sock-dir/": "/run/k3s/containerd",
        },
    ),
    (
        "rke2",
        {"distribution": "rke2"},
        {"CONTAINERD_CONFIG": "/runtime/config-dir/config.toml"},
        {
            "/runtime/config-dir/": "/var/lib/rancher/rke2/agent/etc/containerd",
            "/runtime/sock-dir/": "/run/k3s/containerd",
        },
    ),
    (
        "containerd-2.x",
        {"version": "2.0"},
        {
            "RUNTIME_CONFIG_SOURCE": "file",
            "RUNTIME_DROP_IN_CONFIG": "/runtime/config-dir.d/99-nvidia.toml",
        },
        {"/runtime/config-dir.d/": "/etc/containerd/conf.d"},
    ),
    (
        "explicit-source-file",
        {"configSource": ["file=/etc/containerd/base.toml"], "restartMode": "systemd"},
        {
            "RUNTIME_CONFIG_SOURCE": "file=/host/etc/containerd/base.toml",
            "RUNTIME_RESTART_MODE": "systemd",
        },
        {},
    ),
    (
        "crio",
        {"name": "crio", "restartMode": "systemd"},
        {
            "RUNTIME": "crio",
            "RUNTIME_RESTART_MODE": "systemd",
            "RUNTIME_CONFIG": "/runtime/config-dir/crio.conf",
            "CRIO_CONFIG": "/runtime/config-dir/crio.conf",
            "RUNTIME_DROP_IN_CONFIG": "/runtime/config-dir.d/99-nvidia.conf",
            "RUNTIME_DROP_IN_CONFIG_HOST_PATH": "/etc/crio/crio.conf.d/99-nvidia.conf",
            "CRIO_CONFIG_MODE": "config",
        },
        {"/runtime/config-dir/": "/etc/crio", "/runtime/config-dir.d/": "/etc/crio/crio.conf.d"},
    ),
]


@pytest.mark.parametrize(
    ("runtime", "expected_env", "expected_mounts"),
    [c[1:] for c in RUNTIME_CASES],
    ids=[c[0] for c in RUNTIME_CASES],
)
def test_runtime_env_and_parent_dir_mounts(
    synth: Synth,
    runtime: dict[str, Any],
    expected_env: dict[str, str],
    expected_mounts: dict[str, str],
) -> None:
    ds = toolkit(synth, cluster={"runtime": runtime})
    c = container(ds, CTR)
    e = env(c)
    assert {k: e.get(k) for k in expected_env} == expected_env
    hosts = host_paths(ds)
    m = mounts(c)
    assert {path: hosts[m[path]["name"]] for path in expected_mounts} == expected_mounts


def test_crio_has_no_socket_and_containerd_only_env(synth: Synth) -> None:
    crio = {"name": "crio", "restartMode": "systemd"}
    c = container(toolkit(synth, cluster={"runtime": crio}), CTR)
    e = env(c)
    for name in (
        "RUNTIME_SOCKET",
        "CONTAINERD_SOCKET",
        "CONTAINERD_CONFIG",
        "CONTAINERD_RUNTIME_CLASS",
    ):
        assert name not in e
    assert "/runtime/sock-dir/" not in mounts(c)


def test_no_drop_in_mount_without_drop_in(synth: Synth) -> None:
    c = container(toolkit(synth, cluster={"runtime": {"distribution": "k3s"}}), CTR)
    assert "/runtime/config-dir.d/" not in mounts(c)
    assert "RUNTIME_DROP_IN_CONFIG_HOST_PATH" not in env(c)


def test_cdi_on(synth: Synth) -> None:
    ds = toolkit(synth)
    e = env(container(ds, CTR))
    assert e["CDI_ENABLED"] == "true"
    assert e["NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND"] == "management.nvidia.com/gpu"
    assert e["NVIDIA_RUNTIME_SET_AS_DEFAULT"] == "false"
    assert host_paths(ds)["cdi-root"] == "/var/run/cdi"


# The toolkit's CDI spec is the management one: its only device is "all". In CDI mode the nvidia
# handler looks up every NVIDIA_VISIBLE_DEVICES entry there, so a per-GPU ID from the envvar
# strategy (management.nvidia.com/gpu=GPU-<uuid>) could never start. CDI mode only when the
# plugin gives CDI names alone; else the installer's auto mode (legacy for IDs).
CDI_MODE_CASES: list[tuple[str, dict[str, Any], str | None]] = [
    ("envvar", {}, None),
    ("volume-mounts", {"devicePlugin": {"deviceListStrategy": "volume-mounts"}}, None),
    ("envvar-and-cdi", {"devicePlugin": {"deviceListStrategy": ["envvar", "cdi-cri"]}}, None),
    ("cdi-cri", {"devicePlugin": {"deviceListStrategy": ["cdi-cri"]}}, "cdi"),
    (
        "nvidia-cdi-both",
        {
            "devicePlugin": {
                "implementation": "nvidia",
                "deviceListStrategy": ["cdi-annotations", "cdi-cri"],
            }
        },
        "cdi",
    ),
    (
        "own-plugin",
        {"devicePlugin": {"enabled": False, "deviceListStrategy": ["cdi-cri"]}},
        None,
    ),
    (
        "cdi-off",
        {
            "devicePlugin": {"deviceListStrategy": ["cdi-cri"]},
            "toolkit": {"cdi": {"enabled": False}},
        },
        None,
    ),
]


@pytest.mark.parametrize(
    ("sections", "mode"), [c[1:] for c in CDI_MODE_CASES], ids=[c[0] for c in CDI_MODE_CASES]
)
def test_cdi_mode_only_when_every_device_is_a_cdi_name(
    synth: Synth, sections: dict[str, Any], mode: str | None
) -> None:
    e = env(container(toolkit(synth, **sections), CTR))
    assert e.get("NVIDIA_CONTAINER_RUNTIME_MODE") == mode


def test_cdi_off(synth: Synth) -> None:
    ds = toolkit(synth, toolkit={"cdi": {"enabled": False}, "setAsDefault": True})
    e = env(container(ds, CTR))
    assert e["CDI_ENABLED"] == "false"
    assert "NVIDIA_CONTAINER_RUNTIME_MODE" not in e
    assert e["NVIDIA_RUNTIME_SET_AS_DEFAULT"] == "true"
    assert "cdi-root" not in host_paths(ds)


# restartMode left out resolves per runtime: containerd reloads on a signal, CRI-O only via
# systemd (an explicit signal with CRI-O and CDI is a validation error, see the rule cases).
RESTART_DEFAULT_CASES: list[tuple[str, dict[str, object], str]] = [
    ("containerd-default", {}, "signal"),
    ("crio-default", {"name": "crio"}, "systemd"),
    ("crio-explicit-none", {"name": "crio", "restartMode": "none"}, "none"),
    ("containerd-explicit-systemd", {"restartMode": "systemd"}, "systemd"),
]


@pytest.mark.parametrize(
    ("runtime", "expected"),
    [c[1:] for c in RESTART_DEFAULT_CASES],
    ids=[c[0] for c in RESTART_DEFAULT_CASES],
)
def test_restart_mode_resolved(synth: Synth, runtime: dict[str, object], expected: str) -> None:
    ds = toolkit(synth, cluster={"runtime": runtime})
    assert env(container(ds, CTR))["RUNTIME_RESTART_MODE"] == expected


def test_crio_without_cdi_uses_hooks(synth: Synth) -> None:
    ds = toolkit(synth, cluster={"runtime": {"name": "crio"}}, toolkit={"cdi": {"enabled": False}})
    c = container(ds, CTR)
    assert env(c)["CRIO_CONFIG_MODE"] == "hook"
    hooks = "/usr/share/containers/oci/hooks.d"
    assert host_paths(ds)[mounts(c)[hooks]["name"]] == hooks


def test_installer_basics(synth: Synth) -> None:
    ds = toolkit(synth, toolkit={"installDir": "/opt/nvidia", "runtimeClass": "gpu"})
    spec = pod_spec(ds)
    c = container(ds, CTR)
    e = env(c)
    assert e["ROOT"] == "/opt/nvidia"
    assert e["NVIDIA_VISIBLE_DEVICES"] == "void"
    assert e["TOOLKIT_PID_FILE"] == "/run/nvidia/toolkit/toolkit.pid"
    assert e["NVIDIA_RUNTIME_NAME"] == e["CONTAINERD_RUNTIME_CLASS"] == "gpu"
    assert host_paths(ds)[mounts(c)["/opt/nvidia"]["name"]] == "/opt/nvidia"
    assert spec["hostPID"] is True
    assert c["securityContext"]["privileged"] is True
    assert c["image"] == "nvcr.io/nvidia/k8s/container-toolkit:v1.18.1"


@pytest.mark.parametrize(("driver_enabled", "root"), [(True, "/run/nvidia/driver"), (False, "/")])
def test_driver_root_mounted(synth: Synth, driver_enabled: bool, root: str) -> None:
    ds = toolkit(synth, driver={"enabled": driver_enabled})
    m = mounts(container(ds, CTR))["/driver-root"]
    assert m["mountPropagation"] == "HostToContainer"
    assert "readOnly" not in m  # CDI: the installer creates control device nodes in the dev root
    assert host_paths(ds)[m["name"]] == root


def _scripts(synth: Synth, **sections: Any) -> dict[str, str]:
    data: dict[str, str] = find(
        synth(profile(**sections)), "ConfigMap", "nvidia-container-toolkit-scripts"
    )["data"]
    return data


def test_init_waits_for_driver_ready_from_driver_container(synth: Synth) -> None:
    ds = toolkit(synth)
    init = container(ds, INIT, init=True)
    assert init["command"][-1].endswith("/wait-for-driver.sh")
    script = _scripts(synth)["wait-for-driver.sh"]
    assert "/run/nvidia/validations/driver-ready" in script
    assert "chroot" not in script


def test_init_checks_host_driver_when_preinstalled(synth: Synth) -> None:
    script = _scripts(synth, driver={"enabled": False})["wait-for-driver.sh"]
    assert 'chroot "/host" nvidia-smi' in script
    assert "write_driver_ready true / / " in script
    ds = toolkit(synth, driver={"enabled": False})
    assert mounts(container(ds, INIT, init=True))["/host"]["readOnly"] is True


def test_startup_probe_marks_toolkit_ready_and_pre_stop_clears_it(synth: Synth) -> None:
    c = container(toolkit(synth), CTR)
    assert c["startupProbe"]["exec"]["command"][-1].endswith("/ready-probe.sh")
    assert c["lifecycle"]["preStop"]["exec"]["command"] == [
        "rm",
        "-f",
        "/run/nvidia/validations/toolkit-ready",
    ]
    probe = _scripts(synth)["ready-probe.sh"]
    assert 'touch "/run/nvidia/validations/toolkit-ready"' in probe
    assert "/runtime/config-dir.d/99-nvidia.toml" in probe  # checks the drop-in it wrote


def test_all_scripts_parse(synth: Synth, tmp_path: Path) -> None:
    variants: list[dict[str, Any]] = [
        {},
        {"driver": {"enabled": False}},
        {"cluster": {"runtime": {"name": "crio"}}, "toolkit": {"cdi": {"enabled": False}}},
    ]
    for i, sections in enumerate(variants):
        for name, text in _scripts(synth, **sections).items():
            path = tmp_path / f"{i}-{name}"
            path.write_text(text)
            result = subprocess.run(["sh", "-n", str(path)], capture_output=True, text=True)
            assert result.returncode == 0, f"{name}: {result.stderr}"


# --- the scripts run with sh against a fake node ----------------------------------------------


def test_wait_for_driver_blocks_until_driver_ready(tmp_path: Path) -> None:
    validations = tmp_path / "validations"
    script = tmp_path / "wait.sh"
    script.write_text(
        TOOLKIT_WAIT_FOR_DRIVER.render(
            validations=validations,
            driver_root_ctr="/driver-root",
            host_root_ctr="/host",
            host_driver=False,
        ).replace("sleep 5", "sleep 0.1")
    )
    proc = subprocess.Popen(["sh", str(script)], stdout=subprocess.PIPE, text=True)
    time.sleep(0.5)
    assert proc.poll() is None  # still waiting
    (validations / "driver-ready").write_text("IS_HOST_DRIVER=false\n")
    out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert "IS_HOST_DRIVER=false" in out


@pytest.mark.parametrize("configured", [False, True])
def test_ready_probe_requires_configured_runtime(tmp_path: Path, configured: bool) -> None:
    install, validations, cdi = tmp_path / "nvidia", tmp_path / "validations", tmp_path / "cdi"
    for d in (install / "toolkit", validations, cdi):
        d.mkdir(parents=True)
    runtime = install / "toolkit" / "nvidia-container-runtime"
    runtime.write_text("#!/bin/sh\n")
    runtime.chmod(0o755)
    pid = tmp_path / "toolkit.pid"
    pid.write_text("1\n")
    config = tmp_path / "99-nvidia.toml"
    config.write_text(f'BinaryName = "{runtime}"\n' if configured else "")
    (cdi / "management.nvidia.com-gpu.yaml").write_text("cdiVersion: 0.5.0\n")
    script = tmp_path / "probe.sh"
    script.write_text(
        TOOLKIT_READY_PROBE.render(
            validations=validations,
            install_dir=install,
            hook_dir=None,
            runtime_config=config,
            cdi=True,
            cdi_root=cdi,
        )
    )
    result = subprocess.run(
        ["sh", str(script)], env={**os.environ, "TOOLKIT_PID_FILE": str(pid)}, capture_output=True
    )
    assert (result.returncode == 0) is configured
    assert (validations / "toolkit-ready").exists() is configured
