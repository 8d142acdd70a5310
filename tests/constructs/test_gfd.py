"""NVIDIA's GPU feature discovery: file output for NFD, no API access, the plugin's gates."""

from __future__ import annotations

import pytest

from gpustack.constructs.nfd import FEATURES_D
from gpustack.profile.model import PLUGIN_IMAGES

from .conftest import Synth, container, env, find, kinds, mounts, pod_spec, profile

#: NVIDIA's device plugin image, which GFD and the MPS daemon run too (one version fact).
NVIDIA_PLUGIN_IMAGE = ":".join(PLUGIN_IMAGES["nvidia"])

DS = "gpu-feature-discovery"


def test_labels_through_nfd_without_api_access(synth: Synth) -> None:
    objects = synth(profile())
    assert kinds(objects, "gpu-feature-discovery") == [
        ("ServiceAccount", DS),
        ("DaemonSet", DS),
    ]
    ds = find(objects, "DaemonSet", DS)
    c = container(ds, "gpu-feature-discovery")
    assert c["image"] == NVIDIA_PLUGIN_IMAGE
    assert c["command"] == ["gpu-feature-discovery"]
    assert FEATURES_D in mounts(c)
    assert env(c)["MIG_STRATEGY"] == "none"
    # v0.19.0+ publish through the NodeFeature API by default, which needs a token gpustack
    # does not give: the file output must be asked for.
    assert env(c)["USE_NODE_FEATURE_API"] == "false"
    assert c["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    spec = pod_spec(ds)
    assert spec["automountServiceAccountToken"] is False
    assert spec["runtimeClassName"] == "nvidia"
    wait = container(ds, "toolkit-validation", init=True)
    assert "/run/nvidia/validations/toolkit-ready" in wait["command"][-1]


def test_mig_strategy_gets_sys_admin(synth: Synth) -> None:
    ds = find(
        synth(profile(devicePlugin={"migStrategy": "mixed"}, gpus={"product": "A100-SXM4-80GB"})),
        "DaemonSet",
        DS,
    )
    c = container(ds, "gpu-feature-discovery")
    assert env(c)["MIG_STRATEGY"] == "mixed"
    assert env(c)["NVIDIA_MIG_MONITOR_DEVICES"] == "all"
    assert c["securityContext"]["capabilities"] == {"add": ["SYS_ADMIN"]}
    assert c["securityContext"]["allowPrivilegeEscalation"] is False


@pytest.mark.parametrize(
    "sections",
    [
        {"gpuFeatureDiscovery": {"enabled": False}},
        {"devicePlugin": {"backend": "simulated"}},  # no GPUs for NVML to find
    ],
)
def test_off(synth: Synth, sections: dict[str, object]) -> None:
    assert kinds(synth(profile(**sections)), "gpu-feature-discovery") == []
