"""Container-toolkit DaemonSet: installer env per runtime/distribution, mounts, readiness."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from gpustack.constructs.scripts import (
    DEV_CHAR_SYMLINKS,
    TOOLKIT_READY_PROBE,
    TOOLKIT_WAIT_FOR_DRIVER,
)
from gpustack.profile.model import Toolkit
from tests.node.devtree import make_nodes

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
            "RUNTIME_DROP_IN_CONFIG": "/runtime/config-dir.d/99-nvidia.toml",
            "RUNTIME_DROP_IN_CONFIG_HOST_PATH": (
                "/var/lib/rancher/k3s/agent/etc/containerd/gpustack.d/99-nvidia.toml"
            ),
            "RUNTIME_CONFIG_SOURCE": "file",
            "CONTAINERD_SOCKET": "/runtime/sock-dir/containerd.sock",
        },
        {
            "/runtime/config-dir/": "/var/lib/rancher/k3s/agent/etc/containerd",
            "/runtime/config-dir.d/": "/var/lib/rancher/k3s/agent/etc/containerd/gpustack.d",
            "/runtime/sock-dir/": "/run/k3s/containerd",
        },
    ),
    (
        "k0s",
        {"distribution": "k0s"},
        {
            "RUNTIME_CONFIG": "/runtime/config-dir/containerd-imports.toml",
            "RUNTIME_DROP_IN_CONFIG_HOST_PATH": "/etc/k0s/containerd.d/nvidia.toml",
            "RUNTIME_EXECUTABLE_PATH": "/var/lib/k0s/bin/containerd",
            "CONTAINERD_SOCKET": "/runtime/sock-dir/containerd.sock",
        },
        {
            "/runtime/config-dir/": "/etc/k0s/gpustack",
            "/runtime/config-dir.d/": "/etc/k0s/containerd.d",
            "/runtime/sock-dir/": "/run/k0s",
        },
    ),
    (
        "microk8s",
        {"distribution": "microk8s"},
        {
            "RUNTIME_CONFIG": "/runtime/config-dir/containerd-template.toml",
            "RUNTIME_CONFIG_SOURCE": "file=/host/var/snap/microk8s/current/args/containerd.toml",
            "RUNTIME_DROP_IN_CONFIG_HOST_PATH": (
                "/var/snap/microk8s/current/args/conf.d/99-nvidia.toml"
            ),
        },
        {"/runtime/config-dir/": "/var/snap/microk8s/current/args"},
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


K0S_136_SOURCE = "file=/host/etc/k0s/containerd.toml"


@pytest.mark.parametrize(
    ("release", "source"), [("1.35", "file"), ("1.36", K0S_136_SOURCE), (None, K0S_136_SOURCE)]
)
def test_k0s_config_source_follows_its_release(
    synth: Synth, release: str | None, source: str
) -> None:
    """k0s 1.36 ships containerd 2.x, whose config the toolkit reads from k0s's own file; a
    profile without kubernetesVersion (None) gets the default release's, 1.36's."""
    cluster: dict[str, Any] = {"runtime": {"distribution": "k0s"}}
    if release is not None:
        cluster["kubernetesVersion"] = release
    assert env(container(toolkit(synth, cluster=cluster), CTR))["RUNTIME_CONFIG_SOURCE"] == source


DISTRIBUTIONS = [{"distribution": d} for d in ("generic", "k3s", "rke2", "microk8s", "k0s")] + [
    {"name": "crio"},
    {"name": "crio", "distribution": "openshift"},
]


@pytest.mark.parametrize("runtime", DISTRIBUTIONS, ids=lambda r: "-".join(r.values()))
def test_the_drop_in_is_never_empty(synth: Synth, runtime: dict[str, str]) -> None:
    """RUNTIME_DROP_IN_CONFIG="" makes the installer lose its handlers (issue #10, item 1)."""
    c = container(toolkit(synth, cluster={"runtime": runtime}), CTR)
    e = env(c)
    assert e["RUNTIME_DROP_IN_CONFIG"].startswith("/runtime/config-dir.d/")
    assert "/runtime/config-dir.d/" in mounts(c)


HOOK_DIRS = [("generic", "/usr/share/containers/oci/hooks.d"),
             ("openshift", "/run/containers/oci/hooks.d")]  # fmt: skip


@pytest.mark.parametrize(("distribution", "hooks"), HOOK_DIRS, ids=[h[0] for h in HOOK_DIRS])
def test_crio_hooks_go_where_the_host_can_write(
    synth: Synth, distribution: str, hooks: str
) -> None:
    """RHCOS has a read-only /usr: there the hook goes to /run/containers/oci/hooks.d."""
    runtime = {"name": "crio", "distribution": distribution}
    ds = toolkit(synth, cluster={"runtime": runtime}, toolkit={"cdi": {"enabled": False}})
    c = container(ds, CTR)
    assert env(c)["CRIO_HOOKS_DIR"] == hooks
    assert host_paths(ds)[mounts(c)[hooks]["name"]] == hooks
    assert (
        f'ls "{hooks}"/*nvidia*.json'
        in _scripts(synth, cluster={"runtime": runtime}, toolkit={"cdi": {"enabled": False}})[
            "ready-probe.sh"
        ]
    )


VOLUME_MOUNT_ENV = {
    "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS": "true",
    "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED": "false",
}


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ("volume-mounts", VOLUME_MOUNT_ENV),
        (["envvar", "volume-mounts"], VOLUME_MOUNT_ENV),
        ("envvar", {}),
    ],  # fmt: skip
    ids=["volume-mounts", "both", "envvar"],
)
def test_volume_mounts_strategy_gets_the_runtime_settings_that_honour_it(
    synth: Synth, strategy: Any, expected: dict[str, str]
) -> None:
    e = env(container(toolkit(synth, devicePlugin={"deviceListStrategy": strategy}), CTR))
    assert {k: e[k] for k in VOLUME_MOUNT_ENV if k in e} == expected


def test_init_container_gets_only_what_it_uses(synth: Synth) -> None:
    """Waiting for a file: unprivileged, no host root; checking a host driver: privileged."""
    waits = container(toolkit(synth), INIT, init=True)
    assert waits["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "readOnlyRootFilesystem": True,
    }
    assert set(mounts(waits)) == {"/run/nvidia/validations", "/usr/local/lib/gpustack"}
    assert mounts(waits)["/run/nvidia/validations"]["readOnly"] is True
    checks = container(toolkit(synth, driver={"enabled": False}), INIT, init=True)
    assert checks["securityContext"]["privileged"] is True
    assert mounts(checks)["/host"]["readOnly"] is True


def test_host_driver_root_is_used_everywhere(synth: Synth) -> None:
    gke = {"enabled": False, "hostDriverRoot": "/home/kubernetes/bin/nvidia"}
    ds = toolkit(synth, driver=gke)
    assert (
        host_paths(ds)[mounts(container(ds, CTR))["/driver-root"]["name"]] == gke["hostDriverRoot"]
    )
    script = _scripts(synth, driver=gke)["wait-for-driver.sh"]
    assert '"/home/kubernetes/bin/nvidia/bin/nvidia-smi"' in script
    assert 'write_driver_ready true "/home/kubernetes/bin/nvidia" / "/host"' in script
    objects = synth(profile(driver=gke))
    plugin = find(objects, "DaemonSet", "nvidia-device-plugin-daemonset")
    assert host_paths(plugin)["driver-root"] == gke["hostDriverRoot"]
    config = find(objects, "ConfigMap", "nvidia-device-plugin-config")["data"]["config.yaml"]
    assert "nvidiaDriverRoot: /home/kubernetes/bin/nvidia" in config


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
    assert c["image"] == Toolkit().image_ref()


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
        "sh",
        "-c",
        "rm -f /run/nvidia/validations/toolkit-configured /run/nvidia/validations/toolkit-ready",
    ]
    probe = _scripts(synth)["ready-probe.sh"]
    # the probe says "configured"; only the plugin pod's nvidia-smi says "ready"
    assert 'touch "/run/nvidia/validations/toolkit-configured"' in probe
    assert "toolkit-ready" not in probe
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
    validations.mkdir()  # the hostPath volume (DirectoryOrCreate); mounted read-only here
    script = tmp_path / "wait.sh"
    script.write_text(
        TOOLKIT_WAIT_FOR_DRIVER.render(
            validations=validations,
            driver_root_ctr="/driver-root",
            host_root_ctr="/host",
            host_driver=False,
            host_driver_root="/",
        ).replace("sleep 5", "sleep 0.1")
    )
    proc = subprocess.Popen(["sh", str(script)], stdout=subprocess.PIPE, text=True)
    time.sleep(0.5)
    assert proc.poll() is None  # still waiting
    (validations / "driver-ready").write_text("IS_HOST_DRIVER=false\n")
    out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert "IS_HOST_DRIVER=false" in out


@pytest.mark.parametrize(
    ("config_text", "imported", "configured"),
    [
        ("", True, False),
        # MicroK8s's stock template names nvidia-container-runtime without our path
        ('BinaryName = "nvidia-container-runtime"\n', True, False),
        ('BinaryName = "{runtime}"\n', False, False),  # the top level does not import it
        ('BinaryName = "{runtime}"\n', True, True),
    ],
    ids=["empty", "stock-microk8s-entry", "not-imported", "configured"],
)
def test_ready_probe_requires_configured_runtime(
    tmp_path: Path, config_text: str, imported: bool, configured: bool
) -> None:
    install, validations, cdi = tmp_path / "nvidia", tmp_path / "validations", tmp_path / "cdi"
    for d in (install / "toolkit", validations, cdi):
        d.mkdir(parents=True)
    runtime = install / "toolkit" / "nvidia-container-runtime"
    runtime.write_text("#!/bin/sh\n")
    runtime.chmod(0o755)
    pid = tmp_path / "toolkit.pid"
    pid.write_text("1\n")
    config = tmp_path / "99-nvidia.toml"
    config.write_text(config_text.format(runtime=runtime))
    top = tmp_path / "config.toml"
    # what NVIDIA's installer writes: the drop-in folder's glob, never the file's name
    # (pkg/config/engine/containerd/config_drop_in.go, importPattern)
    top.write_text('imports = ["/etc/containerd/conf.d/*.toml"]\n' if imported else "")
    (cdi / "management.nvidia.com-gpu.yaml").write_text("cdiVersion: 0.5.0\n")
    dev, chars = tmp_path / "driver-root", tmp_path / "dev-char"
    (dev / "dev").mkdir(parents=True)
    run_env = make_nodes(dev / "dev", {"nvidiactl": (195, 255)}, tmp_path / "shim")
    (validations / "driver-ready").write_text(
        f"NVIDIA_DEV_ROOT=/run/nvidia/driver\nDEV_ROOT_CTR_PATH={dev}\n"
    )
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "dev-char-symlinks.sh").write_text(DEV_CHAR_SYMLINKS)
    script = tmp_path / "probe.sh"
    script.write_text(
        TOOLKIT_READY_PROBE.render(
            validations=validations,
            install_dir=install,
            hook_dir=None,
            runtime_config=config,
            top_level_config=top,
            drop_in_import="/etc/containerd/conf.d/*.toml",
            cdi=True,
            cdi_root=cdi,
            scripts_dir=scripts,
            dev_char=chars,
            configured="toolkit-configured",
        )
    )
    result = subprocess.run(
        ["sh", str(script)], env={**run_env, "TOOLKIT_PID_FILE": str(pid)}, capture_output=True
    )
    assert (result.returncode == 0) is configured, result.stderr
    assert (validations / "toolkit-configured").exists() is configured
    assert not (validations / "toolkit-ready").exists()  # only the plugin pod's check says so
    if configured:
        assert os.readlink(chars / "195:255") == "/run/nvidia/driver/dev/nvidiactl"
