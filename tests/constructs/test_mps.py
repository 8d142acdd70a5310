"""CUDA MPS with NVIDIA's device plugin: config file, plugin mounts and the MPS control daemon."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from gpustack.constructs.placement import DEPLOY_LABEL_PREFIX
from gpustack.constructs.plugin_config import build_config
from gpustack.plugin.config import ConfigError, PluginConfig
from gpustack.profile.model import Profile
from gpustack.profile.model.device_plugin import PLUGIN_IMAGES

from .conftest import Synth, container, env, find, host_paths, kinds, mounts, pod_spec, profile

DS = "nvidia-device-plugin-daemonset"
MPS_DS = "nvidia-device-plugin-mps-control-daemon"
CM = "nvidia-device-plugin-config"
LABEL = "nvidia.com/device-plugin.config"
MPS = {"renameByDefault": True, "resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}
NVIDIA_MPS = {"implementation": "nvidia", "sharing": {"mps": MPS}}
NVIDIA_TS = {"implementation": "nvidia", "sharing": {"timeSlicing": MPS}}


def daemonsets(objects: list[Any]) -> list[str]:
    return [name for kind, name in kinds(objects, "device-plugin") if kind == "DaemonSet"]


def config_text(objects: list[Any], name: str = CM) -> str:
    text: str = find(objects, "ConfigMap", name)["data"]["config.yaml"]
    return text


def test_the_daemon_exists_only_with_mps(synth: Synth) -> None:
    assert daemonsets(synth(profile(devicePlugin=NVIDIA_MPS))) == [DS, MPS_DS]
    assert daemonsets(synth(profile(devicePlugin=NVIDIA_TS))) == [DS]
    assert daemonsets(synth(profile(devicePlugin={"implementation": "nvidia"}))) == [DS]


def test_config_carries_mps_and_its_root(synth: Synth) -> None:
    cfg = yaml.safe_load(config_text(synth(profile(devicePlugin=NVIDIA_MPS))))
    assert cfg["flags"]["mpsRoot"] == "/run/nvidia/mps"
    # failRequestsGreaterThanOne is written, with MPS's own default (true)
    assert cfg["sharing"] == {"mps": {**MPS, "failRequestsGreaterThanOne": True}}
    assert "gpustack" not in cfg
    # the whole file, NVIDIA-only keys included, is what the plugin's parser writes back
    assert PluginConfig.from_dict(cfg).to_dict() == cfg


def test_without_mps_there_is_no_mps_root(synth: Synth) -> None:
    cfg = yaml.safe_load(config_text(synth(profile(devicePlugin=NVIDIA_TS))))
    assert "mpsRoot" not in cfg["flags"]
    assert "mps" not in cfg["sharing"]


def test_the_mps_block_is_checked_by_the_plugins_parser() -> None:
    twice = {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}] * 2}
    p = Profile.from_dict(
        profile(devicePlugin={"implementation": "nvidia", "sharing": {"mps": twice}})
    )
    with pytest.raises(ConfigError, match=r"sharing\.mps\.resources\[1\]"):
        build_config(p)


def test_mps_is_refused_for_gpustacks_plugin() -> None:
    p = Profile.from_dict(profile(devicePlugin={"sharing": {"mps": MPS}}))
    with pytest.raises(ValueError, match=r"sharing\.mps: gpustack's device plugin"):
        build_config(p)


def test_plugin_mounts_mps_root_and_shm(synth: Synth) -> None:
    ds = find(synth(profile(devicePlugin=NVIDIA_MPS)), "DaemonSet", DS)
    paths = host_paths(ds)
    assert (paths["mps-root"], paths["mps-shm"]) == ("/run/nvidia/mps", "/run/nvidia/mps/shm")
    volumes = {v["name"]: v for v in pod_spec(ds)["volumes"]}
    assert volumes["mps-root"]["hostPath"]["type"] == "DirectoryOrCreate"
    m = mounts(container(ds, "nvidia-device-plugin"))
    assert m["/mps"]["name"] == "mps-root" and m["/dev/shm"]["name"] == "mps-shm"
    plain = find(synth(profile(devicePlugin=NVIDIA_TS)), "DaemonSet", DS)
    assert "mps-root" not in host_paths(plain) and "mps-shm" not in host_paths(plain)
    assert "/dev/shm" not in mounts(container(plain, "nvidia-device-plugin"))


def test_the_daemon(synth: Synth) -> None:
    objects = synth(profile(devicePlugin=NVIDIA_MPS))
    ds, plugin = find(objects, "DaemonSet", MPS_DS), find(objects, "DaemonSet", DS)
    spec = pod_spec(ds)
    assert spec["hostPID"] is True
    assert spec["runtimeClassName"] == "nvidia"
    assert spec["automountServiceAccountToken"] is False
    (main,) = spec["containers"]
    assert main["image"] == ":".join(PLUGIN_IMAGES["nvidia"])
    assert main["command"] == ["mps-control-daemon"]
    assert main["securityContext"] == {"privileged": True}
    assert env(main)["CONFIG_FILE"] == "/etc/gpustack/config.yaml"
    m = mounts(main)
    assert (m["/mps"]["name"], m["/dev/shm"]["name"]) == ("mps-root", "mps-shm")
    assert m["/etc/gpustack"]["readOnly"] is True
    # it reads the plugin's ConfigMap and rolls with it
    assert {v["name"]: v for v in spec["volumes"]}["config"]["configMap"]["name"] == CM
    annotation = "gpustack.dev/config-checksum"
    template, plugin_template = ds["spec"]["template"], plugin["spec"]["template"]
    assert template["metadata"]["annotations"] == plugin_template["metadata"]["annotations"]
    assert annotation in template["metadata"]["annotations"]
    paths = host_paths(ds)
    assert (paths["mps-root"], paths["mps-shm"]) == ("/run/nvidia/mps", "/run/nvidia/mps/shm")
    # waits for toolkit-ready, which the plugin's pod writes once nvidia-smi ran through the
    # runtime, then mounts the MPS shm with propagation to the host
    assert [c["name"] for c in spec["initContainers"]] == [
        "toolkit-validation",
        "mps-control-daemon-mounts",
    ]
    wait = container(ds, "toolkit-validation", init=True)
    assert '[ -f "/run/nvidia/validations/toolkit-ready" ]' in wait["command"][-1]
    check = container(plugin, "runtime-validation", init=True)
    assert wait["image"] == check["image"]
    assert "/run/nvidia/validations/toolkit-ready" in check["command"][-1]
    mount_shm = container(ds, "mps-control-daemon-mounts", init=True)
    assert mount_shm["command"] == ["mps-control-daemon", "mount-shm"]
    assert mount_shm["securityContext"] == {"privileged": True}
    assert mounts(mount_shm)["/mps"] == {
        "mountPath": "/mps",
        "mountPropagation": "Bidirectional",
        "name": "mps-root",
    }


def test_the_daemon_runs_where_its_plugin_runs(synth: Synth) -> None:
    cluster = {
        "nodeSelector": {"node-role.example.com/gpu": "inference"},
        "priorityClassName": "gpu-critical",
    }
    objects = synth(profile(devicePlugin=NVIDIA_MPS, cluster=cluster))
    ds, plugin = (
        pod_spec(find(objects, "DaemonSet", MPS_DS)),
        pod_spec(find(objects, "DaemonSet", DS)),
    )
    for key in ("nodeSelector", "tolerations", "priorityClassName", "affinity"):
        assert ds.get(key) == plugin.get(key), key
    assert ds["nodeSelector"] == {"node-role.example.com/gpu": "inference"}


def test_selectors_are_distinct(synth: Synth) -> None:
    objects = synth(profile(devicePlugin=NVIDIA_MPS))
    ds, plugin = find(objects, "DaemonSet", MPS_DS), find(objects, "DaemonSet", DS)
    for one, other in ((ds, plugin), (plugin, ds)):
        selector = one["spec"]["selector"]["matchLabels"].items()
        assert not selector <= other["spec"]["template"]["metadata"]["labels"].items()


def _affinity(spec: dict[str, Any]) -> list[dict[str, Any]]:
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    (term,) = terms["nodeSelectorTerms"]
    # the deploy label requirements every GPU DaemonSet has are tested in test_deploy_labels
    found: list[dict[str, Any]] = [
        e for e in term["matchExpressions"] if not e["key"].startswith(DEPLOY_LABEL_PREFIX)
    ]
    return found


def test_a_node_config_with_mps_gets_its_own_daemon(synth: Synth) -> None:
    dp = {
        "implementation": "nvidia",
        "nodeConfigs": [{"name": "mps", "sharing": {"mps": MPS}}, {"name": "whole", "sharing": {}}],
    }
    objects = synth(profile(devicePlugin=dp))
    assert daemonsets(objects) == [
        DS,
        "nvidia-device-plugin-mps",
        "nvidia-mps-control-daemon-mps",
        "nvidia-device-plugin-whole",
    ]
    ds = pod_spec(find(objects, "DaemonSet", "nvidia-mps-control-daemon-mps"))
    plugin = pod_spec(find(objects, "DaemonSet", "nvidia-device-plugin-mps"))
    assert (
        _affinity(ds) == _affinity(plugin) == [{"key": LABEL, "operator": "In", "values": ["mps"]}]
    )
    config = {v["name"]: v for v in ds["volumes"]}["config"]["configMap"]["name"]
    assert config == f"{CM}-mps"
    assert "mps-shm" in host_paths(find(objects, "DaemonSet", "nvidia-device-plugin-mps"))
    assert "mps-shm" not in host_paths(find(objects, "DaemonSet", DS))
    assert "mps-shm" not in host_paths(find(objects, "DaemonSet", "nvidia-device-plugin-whole"))
    assert (
        yaml.safe_load(config_text(objects, f"{CM}-mps"))["flags"]["mpsRoot"] == "/run/nvidia/mps"
    )
    assert "mpsRoot" not in yaml.safe_load(config_text(objects))["flags"]


def test_top_level_mps_daemon_stays_off_node_configs_without_it(synth: Synth) -> None:
    dp = {**NVIDIA_MPS, "nodeConfigs": [{"name": "whole", "sharing": {}}]}
    objects = synth(profile(devicePlugin=dp))
    assert daemonsets(objects) == [DS, MPS_DS, "nvidia-device-plugin-whole"]
    ds = pod_spec(find(objects, "DaemonSet", MPS_DS))
    assert (
        _affinity(ds)
        == _affinity(pod_spec(find(objects, "DaemonSet", DS)))
        == [{"key": LABEL, "operator": "NotIn", "values": ["whole"]}]
    )
