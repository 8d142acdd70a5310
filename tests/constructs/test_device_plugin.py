"""Device plugin: implementation choice, config file, privileges, simulated backend."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

import gpustack
from gpustack.constructs.placement import DEPLOY_LABEL_PREFIX
from gpustack.constructs.plugin_config import build_config
from gpustack.plugin.config import PluginConfig
from gpustack.profile.model import PLUGIN_IMAGES, Profile

from .conftest import (
    Synth,
    container,
    env,
    find,
    host_paths,
    kinds,
    mounts,
    pod_spec,
    profile,
    volumes,
)

#: NVIDIA's device plugin image, which GFD and the MPS daemon run too (one version fact).
NVIDIA_PLUGIN_IMAGE = ":".join(PLUGIN_IMAGES["nvidia"])

DS = "nvidia-device-plugin-daemonset"
CTR = "nvidia-device-plugin"
CM = "nvidia-device-plugin-config"
SIMULATED = {"devicePlugin": {"backend": "simulated"}, "driver": {"enabled": False}}


def plugin(synth: Synth, **sections: Any) -> dict[str, Any]:
    return find(synth(profile(**sections)), "DaemonSet", DS)


def config(synth: Synth, **sections: Any) -> dict[str, Any]:
    text = find(synth(profile(**sections)), "ConfigMap", CM)["data"]["config.yaml"]
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def test_component_objects(synth: Synth) -> None:
    assert kinds(synth(profile()), "device-plugin") == [
        ("ServiceAccount", "nvidia-device-plugin"),
        ("ConfigMap", CM),
        ("DaemonSet", DS),
    ]
    assert kinds(synth(profile(devicePlugin={"enabled": False})), "device-plugin") == []


def test_gpustack_implementation(synth: Synth) -> None:
    ds = plugin(synth)
    c = container(ds, CTR)
    assert c["image"] == f"ghcr.io/gpustack-dev/gpustack-device-plugin:{gpustack.__version__}"
    assert c["command"] == ["gpustack-device-plugin", "--config-file", "/etc/gpustack/config.yaml"]
    assert mounts(c)["/etc/gpustack"]["readOnly"] is True
    assert "CONFIG_FILE" not in env(c)
    cfg = config(synth)
    assert cfg["gpustack"]["backend"] == "nvml"
    assert cfg["flags"]["nvidiaDriverRoot"] == "/run/nvidia/driver"


def test_nvidia_implementation(synth: Synth) -> None:
    sections = {"devicePlugin": {"implementation": "nvidia"}}
    c = container(plugin(synth, **sections), CTR)
    assert c["image"] == NVIDIA_PLUGIN_IMAGE
    assert c["command"] == ["nvidia-device-plugin"]
    assert env(c)["CONFIG_FILE"] == "/etc/gpustack/config.yaml"
    cfg = config(synth, **sections)
    assert "gpustack" not in cfg
    assert list(cfg) == ["version", "flags", "sharing"]


def test_custom_image_and_version(synth: Synth) -> None:
    dp = {"image": "registry.local/plugin", "version": "1.2.3", "imagePullPolicy": "Always"}
    ds = plugin(synth, devicePlugin=dp)
    c = container(ds, CTR)
    assert (c["image"], c["imagePullPolicy"]) == ("registry.local/plugin:1.2.3", "Always")
    assert ds["metadata"]["labels"]["app.kubernetes.io/version"] == "1.2.3"


@pytest.mark.parametrize(
    ("ignored", "expected"),
    [
        ({"enabled": False}, {"DP_DISABLE_HEALTHCHECKS": "all"}),
        ({"ignoredXids": [13, 31, 43, 45, 68, 109]}, {}),
        ({"ignoredXids": [13, 31, 43, 45, 68, 109, 119]}, {"DP_DISABLE_HEALTHCHECKS": "119"}),
        (
            {"ignoredXids": [13, 31, 79]},
            {"DP_DISABLE_HEALTHCHECKS": "79", "DP_ENABLE_HEALTHCHECKS": "43,45,68,109"},
        ),
    ],
)
def test_nvidia_health_checks_via_env(
    synth: Synth, ignored: dict[str, Any], expected: dict[str, str]
) -> None:
    dp = {"implementation": "nvidia", "healthChecks": ignored}
    e = env(container(plugin(synth, devicePlugin=dp), CTR))
    assert {k: v for k, v in e.items() if k.startswith("DP_")} == expected


def test_gpustack_health_checks_in_config(synth: Synth) -> None:
    cfg = config(synth, devicePlugin={"healthChecks": {"ignoredXids": [13, 119]}})
    assert cfg["gpustack"]["health"] == {"enabled": True, "ignoredXids": [13, 119]}


def test_time_slicing_in_config(synth: Synth) -> None:
    ts = {
        "renameByDefault": True,
        "failRequestsGreaterThanOne": True,
        "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
    }
    cfg = config(synth, devicePlugin={"sharing": {"timeSlicing": ts}})
    assert cfg["sharing"] == {"timeSlicing": ts}


def test_config_flags_follow_the_profile(synth: Synth) -> None:
    dp = {
        "migStrategy": "single",
        "deviceListStrategy": ["volume-mounts"],
        "deviceIdStrategy": "index",
        "passDeviceSpecs": True,
        "failOnInitError": False,
        "sharedDevicesAllocationPolicy": "packed",
        "resourceName": "example.com/gpu",
    }
    cfg = config(synth, devicePlugin=dp, driver={"enabled": False})
    assert cfg["flags"]["migStrategy"] == "single"
    assert cfg["flags"]["failOnInitError"] is False
    assert cfg["flags"]["nvidiaDriverRoot"] == "/"
    assert cfg["flags"]["plugin"] == {
        "passDeviceSpecs": True,
        "deviceListStrategy": ["volume-mounts"],
        "deviceIDStrategy": "index",
        "cdiAnnotationPrefix": "cdi.k8s.io/",
        "containerDriverRoot": "/driver-root",
        "sharedDevicesAllocationPolicy": "packed",
    }
    assert cfg["gpustack"]["resourceName"] == "example.com/gpu"


@pytest.mark.parametrize(
    "sections",
    [
        {},
        {"devicePlugin": {"implementation": "nvidia"}},
        SIMULATED,
        {**SIMULATED, "gpus": {"product": "A100-SXM4-80GB", "perNode": 2, "mig": {"3g.40gb": 2}}},
    ],
    ids=["gpustack", "nvidia", "simulated", "simulated-mig"],
)
def test_config_is_what_the_plugin_parses(synth: Synth, sections: dict[str, Any]) -> None:
    cfg = config(synth, **sections)
    parsed = PluginConfig.from_dict(cfg).to_dict()
    assert parsed == cfg


def test_simulated_gpus_follow_the_inventory(synth: Synth) -> None:
    gpus = {"product": "A100-SXM4-80GB", "perNode": 2, "mig": {"3g.40gb": 2}}
    sim = config(synth, **SIMULATED, gpus=gpus)["gpustack"]["simulated"]["gpus"]
    assert [g["index"] for g in sim] == [0, 1]
    assert {g["memoryMiB"] for g in sim} == {80 * 1024}
    assert {g["computeCapability"] for g in sim} == {"8.0"}
    assert [g["nvlinkPeers"] for g in sim] == [[1], [0]]
    assert sim[0]["mig"] == {"enabled": True, "devices": {"3g.40gb": 2}}
    assert sim[0]["uuid"] != sim[1]["uuid"]


def test_simulated_needs_no_gpu_runtime_and_no_driver(synth: Synth) -> None:
    ds = plugin(synth, **SIMULATED)
    spec = pod_spec(ds)
    assert "runtimeClassName" not in spec
    assert "initContainers" not in spec
    assert "driver-root" not in host_paths(ds)
    assert env(container(ds, CTR))["NVIDIA_VISIBLE_DEVICES"] == "void"


def test_nvml_backend_waits_for_toolkit_and_uses_runtime(synth: Synth) -> None:
    ds = plugin(synth)
    spec = pod_spec(ds)
    assert spec["runtimeClassName"] == "nvidia"
    assert [c["name"] for c in spec["initContainers"]] == [
        "toolkit-validation",
        "runtime-validation",
    ]
    init = container(ds, "toolkit-validation", init=True)
    assert '[ -f "/run/nvidia/validations/toolkit-configured" ]' in init["command"][-1]
    assert init["image"].startswith("nvcr.io/nvidia/k8s/container-toolkit:")
    # readiness proves the runtime: nvidia-smi in this pod (runtime class nvidia), then ready
    check = container(ds, "runtime-validation", init=True)
    script = check["command"][-1]
    assert script.index("nvidia-smi") < script.index("/run/nvidia/validations/toolkit-ready")
    assert env(check) == {"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "utility"}
    assert "readOnly" not in mounts(check)["/run/nvidia/validations"]
    assert check["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    m = mounts(container(ds, CTR))["/driver-root"]
    assert (m["readOnly"], m["mountPropagation"]) == (True, "HostToContainer")
    assert host_paths(ds)["driver-root"] == "/run/nvidia/driver"
    assert host_paths(ds)["device-plugin"] == "/var/lib/kubelet/device-plugins"
    e = env(container(ds, CTR))
    assert e["NVIDIA_VISIBLE_DEVICES"] == "all"


def test_runtime_class_follows_toolkit(synth: Synth) -> None:
    spec = pod_spec(plugin(synth, toolkit={"runtimeClass": "nvidia-gpu"}))
    assert spec["runtimeClassName"] == "nvidia-gpu"
    crio_hooks = {"cluster": {"runtime": {"name": "crio"}}, "toolkit": {"cdi": {"enabled": False}}}
    assert "runtimeClassName" not in pod_spec(plugin(synth, **crio_hooks))


def test_without_toolkit_waits_for_driver_with_driver_image(synth: Synth) -> None:
    ds = plugin(synth, toolkit={"enabled": False})
    init = container(ds, "toolkit-validation", init=True)
    assert "/run/nvidia/validations/driver-ready" in init["command"][-1]
    assert init["image"].startswith("nvcr.io/nvidia/driver:")
    neither = plugin(synth, toolkit={"enabled": False}, driver={"enabled": False})
    assert "initContainers" not in pod_spec(neither)


UNPRIVILEGED = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
RESTRICTED = {**UNPRIVILEGED, "readOnlyRootFilesystem": True}
SYS_ADMIN = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"add": ["SYS_ADMIN"], "drop": ["ALL"]},
    "readOnlyRootFilesystem": True,
}


@pytest.mark.parametrize(
    ("dp", "expected"),
    [
        ({}, RESTRICTED),
        ({"passDeviceSpecs": True}, {"privileged": True}),
        ({"passDeviceSpecs": True, "migStrategy": "mixed"}, {"privileged": True}),
        ({"migStrategy": "single"}, SYS_ADMIN),
        ({"deviceListStrategy": ["envvar", "volume-mounts"]}, SYS_ADMIN),
        ({"backend": "simulated"}, RESTRICTED),
        # NVIDIA's image is not tested here with a read-only root, so it keeps a writable one.
        ({"implementation": "nvidia"}, UNPRIVILEGED),
    ],
)
def test_security_context(synth: Synth, dp: dict[str, Any], expected: dict[str, Any]) -> None:
    ds = plugin(synth, devicePlugin=dp)
    assert container(ds, CTR)["securityContext"] == expected
    # the pod filters syscalls with the runtime's default profile (privileged ones run unconfined)
    assert pod_spec(ds)["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}


def test_mig_monitoring_env(synth: Synth) -> None:
    e = env(container(plugin(synth, devicePlugin={"migStrategy": "mixed"}), CTR))
    assert e["NVIDIA_MIG_MONITOR_DEVICES"] == "all"
    assert "NVIDIA_MIG_MONITOR_DEVICES" not in env(container(plugin(synth), CTR))


@pytest.mark.parametrize("implementation", ["nvidia", "gpustack"])
def test_cdi_strategies_mount_cdi_root(synth: Synth, implementation: str) -> None:
    dp = {"implementation": implementation, "deviceListStrategy": ["cdi-annotations", "cdi-cri"]}
    ds = plugin(synth, devicePlugin=dp)
    assert host_paths(ds)["cdi-root"] == "/var/run/cdi"
    e = env(container(ds, CTR))
    assert e["NVIDIA_CDI_HOOK_PATH"] == "/usr/local/nvidia/toolkit/nvidia-cdi-hook"
    assert "cdi-root" not in host_paths(plugin(synth))


def test_cdi_hook_of_a_host_installed_toolkit_is_the_plugins_default(synth: Synth) -> None:
    # Packages put nvidia-cdi-hook on the host's PATH, not under toolkit.installDir.
    dp = {"implementation": "nvidia", "deviceListStrategy": ["cdi-cri"]}
    ds = plugin(synth, devicePlugin=dp, toolkit={"enabled": False})
    assert host_paths(ds)["cdi-root"] == "/var/run/cdi"
    assert "NVIDIA_CDI_HOOK_PATH" not in env(container(ds, CTR))


def test_config_checksum_rolls_pods_on_config_change(synth: Synth) -> None:
    def checksum(**sections: Any) -> str:
        value: str = plugin(synth, **sections)["spec"]["template"]["metadata"]["annotations"][
            "gpustack.dev/config-checksum"
        ]
        return value

    base = checksum()
    assert len(base) == 64
    assert checksum(devicePlugin={"failOnInitError": False}) != base
    # Not a config change: same checksum.
    assert checksum(devicePlugin={"imagePullPolicy": "Always"}) == base


def test_time_slicing_rename_reaches_gpustack_config(synth: Synth) -> None:
    ts = {
        "renameByDefault": True,
        "failRequestsGreaterThanOne": False,
        "resources": [
            {"name": "nvidia.com/gpu", "replicas": 2, "rename": "nvidia.com/gpu-half"},
            {"name": "nvidia.com/mig-1g.10gb", "replicas": 3},
        ],
    }
    dp = {"migStrategy": "mixed", "sharing": {"timeSlicing": ts}}
    cfg = config(synth, devicePlugin=dp, gpus={"product": "A100-SXM4-80GB"})
    assert cfg["sharing"] == {"timeSlicing": ts}
    sharing = PluginConfig.from_dict(cfg).sharing.time_slicing
    assert sharing is not None
    assert sharing.advertised_name("nvidia.com/gpu") == "nvidia.com/gpu-half"
    assert sharing.advertised_name("nvidia.com/mig-1g.10gb") == "nvidia.com/mig-1g.10gb.shared"


def test_time_slicing_rename_is_refused_for_nvidia_plugin() -> None:
    ts = {"resources": [{"name": "nvidia.com/gpu", "replicas": 2, "rename": "nvidia.com/half"}]}
    dp = {"implementation": "nvidia", "sharing": {"timeSlicing": ts}}
    p = Profile.from_dict(profile(devicePlugin=dp))
    with pytest.raises(ValueError, match=r"resources\[0\]\.rename: NVIDIA's device plugin"):
        build_config(p)


def test_simulated_cdi_spec_needs_no_hook(synth: Synth) -> None:
    # The simulated backend's CDI spec only sets env: no hook, so no hook path.
    dp = {"backend": "simulated", "deviceListStrategy": ["cdi-cri"]}
    ds = plugin(synth, devicePlugin=dp, driver={"enabled": False})
    assert host_paths(ds)["cdi-root"] == "/var/run/cdi"
    assert "NVIDIA_CDI_HOOK_PATH" not in env(container(ds, CTR))


# --- node configs ------------------------------------------------------------------------------

LABEL = "nvidia.com/device-plugin.config"
POOLS = {
    "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}},
    "nodeConfigs": [
        {
            "name": "dense",
            "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 8}]}},
        },
        {"name": "a100-mig", "migStrategy": "mixed", "gpus": {"mig": {"1g.10gb": 7}}},
    ],
}
POOL_GPUS = {"product": "A100-SXM4-80GB", "perNode": 2}


def _affinity(ds: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The node config requirements of the required node affinity (the deploy label ones,
    which every GPU DaemonSet has, left out), ``None`` for none."""
    affinity = pod_spec(ds).get("affinity")
    if affinity is None:
        return None
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    (term,) = terms["nodeSelectorTerms"]
    found: list[dict[str, Any]] = [
        e for e in term["matchExpressions"] if not e["key"].startswith(DEPLOY_LABEL_PREFIX)
    ]
    return found or None


def test_without_node_configs_the_default_daemonset_has_no_node_config_affinity(
    synth: Synth,
) -> None:
    assert _affinity(plugin(synth)) is None


def test_a_daemonset_and_config_map_per_node_config(synth: Synth) -> None:
    objects = synth(profile(devicePlugin=POOLS, gpus=POOL_GPUS))
    assert sorted(kinds(objects, "device-plugin")) == [
        ("ConfigMap", CM),
        ("ConfigMap", f"{CM}-a100-mig"),
        ("ConfigMap", f"{CM}-dense"),
        ("DaemonSet", "nvidia-device-plugin-a100-mig"),
        ("DaemonSet", DS),
        ("DaemonSet", "nvidia-device-plugin-dense"),
        ("ServiceAccount", "nvidia-device-plugin"),
    ]
    default = find(objects, "DaemonSet", DS)
    assert _affinity(default) == [
        {"key": LABEL, "operator": "NotIn", "values": ["dense", "a100-mig"]}
    ]
    for name in ("dense", "a100-mig"):
        ds = find(objects, "DaemonSet", f"nvidia-device-plugin-{name}")
        assert _affinity(ds) == [{"key": LABEL, "operator": "In", "values": [name]}]
        assert volumes(ds)["config"]["configMap"]["name"] == f"{CM}-{name}"
        assert pod_spec(ds)["serviceAccountName"] == "nvidia-device-plugin"
        assert pod_spec(ds)["nodeSelector"] == pod_spec(default)["nodeSelector"]
        assert ds["metadata"]["annotations"] == default["metadata"]["annotations"]


def test_default_selector_is_unchanged_and_selectors_are_disjoint(synth: Synth) -> None:
    objects = synth(profile(devicePlugin=POOLS, gpus=POOL_GPUS))
    daemonsets = [
        o.manifest for o in objects if o.kind == "DaemonSet" and o.component == "device-plugin"
    ]
    assert find(objects, "DaemonSet", DS)["spec"]["selector"] == plugin(synth)["spec"]["selector"]
    for ds in daemonsets:
        selector = ds["spec"]["selector"]["matchLabels"].items()
        for other in daemonsets:
            pod_labels = other["spec"]["template"]["metadata"]["labels"].items()
            assert (selector <= pod_labels) == (other is ds), (
                ds["metadata"]["name"],
                other["metadata"]["name"],
            )


def test_each_node_config_gets_its_own_plugin_config(synth: Synth) -> None:
    objects = synth(profile(devicePlugin=POOLS, gpus=POOL_GPUS))

    def cfg(name: str) -> PluginConfig:
        text = find(objects, "ConfigMap", name)["data"]["config.yaml"]
        parsed = PluginConfig.from_dict(yaml.safe_load(text))
        assert yaml.safe_load(text) == parsed.to_dict()  # what the plugin reads, unchanged
        return parsed

    def replicas(config: PluginConfig) -> list[int]:
        return [r["replicas"] for r in config.to_dict()["sharing"]["timeSlicing"]["resources"]]

    default, dense, mig = cfg(CM), cfg(f"{CM}-dense"), cfg(f"{CM}-a100-mig")
    assert replicas(default) == [2] and replicas(dense) == [8] and replicas(mig) == [2]
    assert [c.to_dict()["flags"]["migStrategy"] for c in (default, dense, mig)] == [
        "none",
        "none",
        "mixed",
    ]
    # privileges and env follow each DaemonSet's own MIG strategy
    mig_ds = find(objects, "DaemonSet", "nvidia-device-plugin-a100-mig")
    dense_ds = find(objects, "DaemonSet", "nvidia-device-plugin-dense")
    assert container(mig_ds, CTR)["securityContext"]["capabilities"]["add"] == ["SYS_ADMIN"]
    assert "add" not in container(dense_ds, CTR)["securityContext"]["capabilities"]
    assert "NVIDIA_MIG_MONITOR_DEVICES" in env(container(mig_ds, CTR))
    assert "NVIDIA_MIG_MONITOR_DEVICES" not in env(container(dense_ds, CTR))


def test_simulated_node_config_follows_its_inventory(synth: Synth) -> None:
    dp = {"backend": "simulated", "nodeConfigs": [{"name": "big", "gpus": {"perNode": 4}}]}
    objects = synth(profile(devicePlugin=dp, driver={"enabled": False}))
    text = find(objects, "ConfigMap", f"{CM}-big")["data"]["config.yaml"]
    assert len(yaml.safe_load(text)["gpustack"]["simulated"]["gpus"]) == 4


def test_node_config_label_is_configurable(synth: Synth) -> None:
    dp = {"nodeConfigLabel": "example.com/pool", "nodeConfigs": [{"name": "a", "sharing": {}}]}
    objects = synth(profile(devicePlugin=dp))
    assert _affinity(find(objects, "DaemonSet", "nvidia-device-plugin-a")) == [
        {"key": "example.com/pool", "operator": "In", "values": ["a"]}
    ]
    assert _affinity(find(objects, "DaemonSet", DS)) == [
        {"key": "example.com/pool", "operator": "NotIn", "values": ["a"]}
    ]


# The kubelet's device plugin folder on the host, per distribution and as set in the profile;
# the plugin always sees it at /var/lib/kubelet/device-plugins (its default --socket-dir).
KUBELET_DIR_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("generic", {}, "/var/lib/kubelet/device-plugins"),
    ("k3s", {"runtime": {"distribution": "k3s"}}, "/var/lib/kubelet/device-plugins"),
    ("k0s", {"runtime": {"distribution": "k0s"}}, "/var/lib/k0s/kubelet/device-plugins"),
    (
        "microk8s",
        {"runtime": {"distribution": "microk8s"}},
        "/var/snap/microk8s/common/var/lib/kubelet/device-plugins",
    ),
    (
        "explicit",
        {"runtime": {"distribution": "k0s"}, "kubeletRootDir": "/data/kubelet"},
        "/data/kubelet/device-plugins",
    ),
]


@pytest.mark.parametrize(
    ("cluster", "host_dir"),
    [c[1:] for c in KUBELET_DIR_CASES],
    ids=[c[0] for c in KUBELET_DIR_CASES],
)
@pytest.mark.parametrize("implementation", ["gpustack", "nvidia"])
def test_kubelet_device_plugin_dir(
    synth: Synth, cluster: dict[str, Any], host_dir: str, implementation: str
) -> None:
    ds = plugin(synth, cluster=cluster, devicePlugin={"implementation": implementation})
    assert host_paths(ds)["device-plugin"] == host_dir
    assert "/var/lib/kubelet/device-plugins" in mounts(container(ds, CTR))
