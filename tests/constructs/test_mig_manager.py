"""NVIDIA's MIG manager: the mig-parted config from gpus.mig round-trips through a parser of
mig-parted's format; RBAC as documented; on by default only where a layout exists."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.constructs import mig_manager
from gpustack.constructs.node_daemonset import CONFIG_CHECKSUM
from gpustack.profile.model import MigManager

from . import migparted
from .conftest import Synth, container, env, find, kinds, merge, pod_spec, profile

A100 = {"product": "A100-SXM4-80GB", "mig": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 1}}
MIG = profile(devicePlugin={"migStrategy": "mixed"}, gpus=A100)


def _config(objects: list[Any]) -> str:
    data: str = find(objects, "ConfigMap", mig_manager.CONFIG_MAP)["data"]["config.yaml"]
    return data


def test_config_round_trips_through_mig_parted_format(synth: Synth) -> None:
    pools = merge(MIG, {"devicePlugin": {"nodeConfigs": [
        {"name": "small", "gpus": {"mig": {"1g.10gb": 7}}},
        {"name": "whole", "migStrategy": "none", "gpus": {"mig": {}}},
    ]}})  # fmt: skip
    got = migparted.layouts(migparted.parse(_config(synth(pools))))
    assert got == {
        "all-disabled": {},
        "default": {"1g.10gb": 1, "2g.20gb": 1, "3g.40gb": 1},
        "small": {"1g.10gb": 7},
    }


def test_editing_gpus_mig_changes_the_config_and_rolls_the_manager(synth: Synth) -> None:
    before = synth(MIG)
    after = synth(merge(MIG, {"gpus": {"mig": {"3g.40gb": 2}}}))
    assert _config(before) != _config(after)
    assert migparted.layouts(migparted.parse(_config(after)))["default"] == {
        "1g.10gb": 1, "2g.20gb": 1, "3g.40gb": 2}  # fmt: skip
    checksum = [
        find(o, "DaemonSet", mig_manager.NAME)["spec"]["template"]["metadata"]["annotations"][
            CONFIG_CHECKSUM
        ]
        for o in (before, after)
    ]
    assert checksum[0] != checksum[1]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("mig-configs: {a: [{devices: all, mig-enabled: false}]}", "missing 'version'"),
        ("version: v2\nmig-configs: {a: [{devices: all, mig-enabled: false}]}", "unknown version"),
        ("version: v1\nmig-configs: {}", "at least one entry in 'mig-configs'"),
        ("version: v1\nmig-configs: {a: []}", "at least one entry in 'a'"),
        ("version: v1\nmig-configs: {a: [{devices: some, mig-enabled: false}]}", "invalid string"),
        ("version: v1\nmig-configs: {a: [{devices: all}]}", "missing required field: mig-enabled"),
        ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true}]}",
         "'mig-devices' when 'mig-enabled' is true"),
        ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: false,"
         " mig-devices: {1g.10gb: 1}}]}", "when 'mig-enabled' is false"),
        ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true,"
         " mig-devices: {1g10gb: 1}}]}", "invalid format"),
        ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: true,"
         " mig-devices: {1g.10gb: 0}}]}", "all counts"),
        ("version: v1\nmig-configs: {a: [{devices: [0, x], mig-enabled: false}]}", "neither"),
        ("version: v1\nmig-configs: {a: [{devices: all, mig-enabled: false, extra: 1}]}",
         "unexpected field: extra"),
    ],
)  # fmt: skip
def test_parser_refuses_invalid_layouts(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        migparted.parse(text)


def test_parser_accepts_device_lists_and_filters() -> None:
    text = yaml.safe_dump({"version": "v1", "mig-configs": {"x": [
        {"devices": [0, 1], "device-filter": ["0x20B010DE"], "mig-enabled": True,
         "mig-devices": {"1c.3g.40gb": 2, "1g.10gb+me": 1}}]}})  # fmt: skip
    assert migparted.parse(text)["x"][0]["devices"] == [0, 1]


def test_manager_pod(synth: Synth) -> None:
    objects = synth(MIG)
    ds = find(objects, "DaemonSet", mig_manager.NAME)
    c = container(ds, mig_manager.NAME)
    assert c["image"] == MigManager().image_ref()
    assert env(c)["CONFIG_FILE"] == "/mig-parted-config/config.yaml"
    assert env(c)["DEFAULT_GPU_CLIENTS_NAMESPACE"] == {
        "fieldRef": {"fieldPath": "metadata.namespace"}}  # fmt: skip
    spec = pod_spec(ds)
    assert spec["hostPID"] is True and spec["hostIPC"] is True
    wait = container(ds, "toolkit-validation", init=True)
    assert "/run/nvidia/validations/toolkit-ready" in wait["command"][-1]
    assert spec["automountServiceAccountToken"] is False
    assert find(objects, "ClusterRole", mig_manager.CLUSTER_ROLE)["rules"] == [
        r.as_manifest() for r in mig_manager.cluster_rules(MigManager().version)]  # fmt: skip
    assert find(objects, "Role", mig_manager.ROLE)["rules"] == [
        r.as_manifest() for r in mig_manager.RULES]  # fmt: skip


@pytest.mark.parametrize(
    ("sections", "deployed"),
    [
        ({}, False),  # no layout
        ({"devicePlugin": {"migStrategy": "mixed"}, "gpus": A100}, True),
        ({"devicePlugin": {"migStrategy": "mixed"}, "gpus": A100, "migManager": {"enabled": False}},
         False),
        ({"devicePlugin": {"migStrategy": "mixed", "backend": "simulated"}, "gpus": A100}, False),
    ],
)  # fmt: skip
def test_on_by_default_where_a_layout_exists(
    synth: Synth, sections: dict[str, Any], deployed: bool
) -> None:
    assert bool(kinds(synth(profile(**sections)), "mig-manager")) is deployed


@pytest.mark.parametrize(
    ("runtime", "expected"),
    [
        ({"name": "containerd"}, "nvidia"),
        ({"name": "crio"}, "nvidia"),  # CDI on: CRI-O gets the handler too
    ],
)
def test_manager_runs_with_the_gpu_runtime_class(
    synth: Synth, runtime: dict[str, Any], expected: str
) -> None:
    """The distroless image has no NVML: the NVIDIA runtime injects it (mig-parted's
    Dockerfile asks for NVIDIA_VISIBLE_DEVICES=all and the utility capability; the operator's
    TransformMIGManager sets the runtime class, gpu-operator v26.7.0)."""
    ds = find(synth(merge(MIG, {"cluster": {"runtime": runtime}})), "DaemonSet", mig_manager.NAME)
    assert pod_spec(ds)["runtimeClassName"] == expected


def test_manager_without_runtime_class_only_under_the_crio_hook(synth: Synth) -> None:
    crio_hook = merge(
        MIG, {"cluster": {"runtime": {"name": "crio"}}, "toolkit": {"cdi": {"enabled": False}}}
    )
    ds = find(synth(crio_hook), "DaemonSet", mig_manager.NAME)
    assert "runtimeClassName" not in pod_spec(ds)


@pytest.mark.parametrize(
    ("version", "cluster_wide_pods"),
    [("v0.13.1", False), ("v0.14.5", False), ("v0.15.0", True), ("v0.16.0", True), ("dev", True)],
)
def test_pods_listed_cluster_wide_from_v0_15(
    synth: Synth, version: str, cluster_wide_pods: bool
) -> None:
    """mig-parted v0.15.0 ``pkg/mig/reconfigure`` waits for gpu.deploy.client DaemonSet pods in
    every namespace; older releases list only the stack namespace."""
    objects = synth(merge(MIG, {"migManager": {"version": version}}))
    rules = find(objects, "ClusterRole", mig_manager.CLUSTER_ROLE)["rules"]
    assert any("pods" in r["resources"] for r in rules) is cluster_wide_pods


def test_host_gpu_clients_file_as_nvidia_renders_it(synth: Synth) -> None:
    """Issue #30: NVIDIA gives the manager a clients file (GPU Operator v26.7.0
    ``assets/state-mig-manager/0410_configmap.yaml``: NVSM, nv_peer_mem, DCGM and the DCGM
    exporter's systemd services; ``0600_daemonset.yaml`` mounts it at /gpu-clients and sets
    ``GPU_CLIENTS_FILE=/gpu-clients/clients.yaml``). mig-parted v0.15.0 stops those services over
    the host's D-Bus under ``/host`` and runs a copy of nvidia-mig-parted it writes there
    (``copyMigPartedToHost``): the host root must be writable, with hostPID."""
    objects = synth(MIG)
    ds = find(objects, "DaemonSet", mig_manager.NAME)
    c = container(ds, mig_manager.NAME)
    assert env(c)["GPU_CLIENTS_FILE"] == "/gpu-clients/clients.yaml"
    mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in pod_spec(ds)["volumes"]}
    clients = volumes[mounts["/gpu-clients"]["name"]]["configMap"]["name"]
    data = yaml.safe_load(find(objects, "ConfigMap", clients)["data"]["clients.yaml"])
    assert data == {
        "version": "v1",
        "systemd-services": [
            "nvsm.service",
            "nvsm-mqtt.service",
            "nvsm-core.service",
            "nvsm-api-gateway.service",
            "nvsm-notifier.service",
            "nv_peer_mem.service",
            "nvidia-dcgm.service",
            "dcgm.service",
            "dcgm-exporter.service",
        ],
    }
    host = mounts["/host"]
    assert volumes[host["name"]]["hostPath"]["path"] == "/"
    assert not host.get("readOnly") and host["mountPropagation"] == "HostToContainer"
    assert pod_spec(ds)["hostPID"] is True
    annotations = ds["spec"]["template"]["metadata"]["annotations"]
    assert mig_manager.GPU_CLIENTS_CHECKSUM in annotations


def _entrypoint(objects: list[Any]) -> str:
    text: str = find(objects, "ConfigMap", f"{mig_manager.NAME}-scripts")["data"]["entrypoint.sh"]
    return text


@pytest.mark.parametrize(
    ("is_host_driver", "user", "expected"),
    [
        ("true", None, "true"),  # a preinstalled driver: its host clients are stopped
        ("false", None, "false"),  # gpustack's driver container: no host clients
        ("true", "false", "false"),  # migManager.env wins
    ],
)
def test_entrypoint_shuts_down_host_clients_only_for_a_host_driver(
    synth: Synth, tmp_path: Path, is_host_driver: str, user: str | None, expected: str
) -> None:
    """Issue #30: as NVIDIA's entrypoint (``assets/state-mig-manager/0420_configmap.yaml``,
    GPU Operator v26.7.0), ``WITH_SHUTDOWN_HOST_GPU_CLIENTS`` is driver-ready's
    ``IS_HOST_DRIVER``. The script runs here with driver-ready in a temporary folder and a
    stand-in manager that prints what it was given."""
    ready = tmp_path / "driver-ready"
    ready.write_text(f"IS_HOST_DRIVER={is_host_driver}\nNVIDIA_DRIVER_ROOT=/\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    manager = bin_dir / "nvidia-mig-manager"
    manager.write_text('#!/bin/sh\necho "manager: $WITH_SHUTDOWN_HOST_GPU_CLIENTS"\n')
    manager.chmod(0o755)
    script = _entrypoint(synth(MIG)).replace("/run/nvidia/validations/driver-ready", str(ready))
    run_env = {"PATH": f"{bin_dir}:{os.environ['PATH']}"}
    if user is not None:
        run_env["WITH_SHUTDOWN_HOST_GPU_CLIENTS"] = user
    done = subprocess.run(
        ["sh", "-c", script], env=run_env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"manager: {expected}"


def test_host_gpu_clients_come_from_the_profile_and_roll_the_manager(synth: Synth) -> None:
    """``migManager.hostGpuClients`` replaces NVIDIA's list (the operator's
    ``migManager.gpuClientsConfig``); a new list rolls the manager through its checksum."""

    def clients_and_checksum(data: dict[str, Any]) -> tuple[Any, str]:
        objects = synth(data)
        text = find(objects, "ConfigMap", mig_manager.GPU_CLIENTS_MAP)["data"]["clients.yaml"]
        ds = find(objects, "DaemonSet", mig_manager.NAME)
        return yaml.safe_load(text), ds["spec"]["template"]["metadata"]["annotations"][
            mig_manager.GPU_CLIENTS_CHECKSUM
        ]

    default, before = clients_and_checksum(MIG)
    own = ["nvidia-dcgm.service", "my-gpu-agent.service"]
    custom, after = clients_and_checksum(merge(MIG, {"migManager": {"hostGpuClients": own}}))
    assert custom == {"version": "v1", "systemd-services": own}
    assert default["systemd-services"] != own and before != after
