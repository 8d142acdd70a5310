"""Node selector spelling: each key is checked against who writes it, each value against what.

The cases are the typos that move a whole stack onto zero nodes (the key or the value of the
default selector, a cloud's well-known label) next to real labels each labeller writes, read
from its code (see :mod:`gpustack.profile.node_label_catalog`): a rule that accepted any key,
or flagged a real one, fails here.
"""

from __future__ import annotations

import pytest

from gpustack.profile import node_label_catalog as catalog
from gpustack.profile.model import Profile
from gpustack.profile.rules import selector_labels

#: label key -> who writes it (real labels, as their labellers spell them)
REAL = {
    "nvidia.com/gpu.present": catalog.GPU_NODE_RULE,
    "nvidia.com/gpu.product": catalog.GFD,
    "nvidia.com/gpu.clique": catalog.GFD,
    "nvidia.com/cuda.driver-version.major": catalog.GFD,
    "nvidia.com/mig.capable": catalog.GFD,
    "nvidia.com/mig-3g.40gb.count": catalog.GFD,
    "nvidia.com/mig-1c.3g.40gb.product": catalog.GFD,
    "nvidia.com/gpu.deploy.driver": catalog.MANAGERS,
    "nvidia.com/mig.config": catalog.MANAGERS,
    "feature.node.kubernetes.io/pci-10de.present": catalog.NFD,
    "feature.node.kubernetes.io/pci-0302_10de.present": catalog.NFD,
    "feature.node.kubernetes.io/kernel-version.full": catalog.NFD,
    "feature.node.kubernetes.io/system-os_release.VERSION_ID": catalog.NFD,
    "feature.node.kubernetes.io/cpu-cpuid.AVX512F": catalog.NFD,
    "feature.node.kubernetes.io/network-sriov.capable": catalog.NFD,
    "kubernetes.io/arch": catalog.KUBELET,
    "node.kubernetes.io/instance-type": catalog.KUBELET,
    "topology.kubernetes.io/zone": catalog.KUBELET,
    "node-role.kubernetes.io/worker": catalog.KUBELET,
    "cloud.google.com/gke-accelerator": catalog.CLOUD,
    "eks.amazonaws.com/nodegroup": catalog.CLOUD,
    "karpenter.k8s.aws/instance-gpu-name": catalog.CLOUD,
    "kubernetes.azure.com/agentpool": catalog.CLOUD,
}

#: misspelled key -> the spelling offered (None: nothing close enough to guess)
TYPOS = {
    "nvidia.com/gpu.presnt": "nvidia.com/gpu.present",
    "nvidia.com/gpu.prsent": "nvidia.com/gpu.present",
    "nvidia.com/gpu.prodcut": "nvidia.com/gpu.product",
    "nvidia.com/gpu-present": "nvidia.com/gpu.present",
    "feature.node.kubernetes.io/pci-10de.presnt": "feature.node.kubernetes.io/pci-10de.present",
    "feature.node.kubernetes.io/pci-10de": "feature.node.kubernetes.io/pci-10de.present",
    "topology.kubernetes.io/regin": "topology.kubernetes.io/region",
    "kubernetes.io/hostnme": "kubernetes.io/hostname",
    "nvidia.com/gpu-type": None,
    "team.example.com/gpu-pool": None,
}


def profile(selector: dict[str, str]) -> Profile:
    return Profile.from_dict({"metadata": {"name": "p"}, "cluster": {"nodeSelector": selector}})


@pytest.mark.parametrize("key", sorted(REAL))
def test_real_labels_are_known_with_their_writer(key: str) -> None:
    known = catalog.lookup(key)
    assert known is not None and known.source == REAL[key]
    assert list(selector_labels.node_selector_label_known(profile({key: "x"}))) == []


@pytest.mark.parametrize("key", sorted(TYPOS))
def test_a_typo_is_a_finding_with_the_likely_spelling(key: str) -> None:
    assert catalog.lookup(key) is None
    findings = list(selector_labels.node_selector_label_known(profile({key: "true"})))
    assert [f.path for f in findings] == [("cluster", "nodeSelector", key)]
    guess = TYPOS[key]
    assert (f"did you mean {guess}?" in findings[0].message) == (guess is not None)
    assert catalog.suggest(key) == guess


@pytest.mark.parametrize(
    "key,value,guess",
    [
        ("nvidia.com/gpu.present", "ture", "true"),
        ("nvidia.com/gpu.present", "True", "true"),
        ("nvidia.com/gpu.present", "yes", None),
        ("nvidia.com/mig.capable", "flase", "false"),
        ("feature.node.kubernetes.io/pci-10de.present", "1", None),
        ("kubernetes.io/arch", "x86_64", None),
        ("nvidia.com/mig.strategy", "mixd", "mixed"),
    ],
)
def test_a_value_its_labeller_never_writes_is_an_error(key: str, value: str, guess: str) -> None:
    findings = list(selector_labels.node_selector_label_value(profile({key: value})))
    assert len(findings) == 1
    assert (f"did you mean {guess!r}?" in findings[0].message) == (guess is not None)


@pytest.mark.parametrize(
    "key,value",
    [
        ("nvidia.com/gpu.present", "true"),
        ("nvidia.com/mig.capable", "false"),
        ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"),
        ("kubernetes.io/arch", "arm64"),
        ("team.example.com/gpu-pool", "anything"),
    ],
)
def test_values_its_labeller_writes_pass(key: str, value: str) -> None:
    assert list(selector_labels.node_selector_label_value(profile({key: value}))) == []


#: Node labels NVIDIA's platform guides tell users to set (issue #32: refused as unknown), with
#: the page that says so (NVIDIA/cloud-native-docs).
GUIDED = {
    "gke-no-default-nvidia-gpu-device-plugin": ("true", "gpu-operator/google-gke.rst"),
    "driver.version": ("580.126.20", "gpu-operator/gpu-driver-configuration.rst"),
    "driver.config": ("gold", "gpu-operator/gpu-driver-configuration.rst"),
    "driver.precompiled": ("true", "gpu-operator/gpu-driver-configuration.rst"),
    "nvidia.com/vgpu.config": ("A10-4Q", "gpu-operator/gpu-operator-kubevirt.rst"),
    "nvidia.com/vgpu.config.state": ("success", "gpu-operator/gpu-operator-kubevirt.rst"),
    "nvidia.com/cc.mode": ("on", "confidential-containers/configure-cc-mode.rst"),
    "nvidia.com/cc.mode.state": ("on", "confidential-containers/configure-cc-mode.rst"),
    "nvidia.com/cc.ready.state": ("true", "confidential-containers/configure-cc-mode.rst"),
    "nvidia.com/gpu-driver-upgrade-state": (
        "upgrade-required",
        "gpu-operator/gpu-driver-upgrades.rst",
    ),
}


@pytest.mark.parametrize("key", sorted(GUIDED))
def test_labels_nvidias_guides_tell_users_to_set_are_known_with_their_page(key: str) -> None:
    value, page = GUIDED[key]
    known = catalog.lookup(key)
    assert known is not None
    assert known.reference == f"NVIDIA/cloud-native-docs {page}"
    selector = profile({key: value})
    assert list(selector_labels.node_selector_label_known(selector)) == []
    assert list(selector_labels.node_selector_label_value(selector)) == []
