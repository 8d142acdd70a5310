"""Deploy labels in every GPU DaemonSet's node selection (``cluster.deployLabels``)."""

from __future__ import annotations

from typing import Any

import pytest

from gpustack.constructs.placement import DEPLOY_COMPONENTS, PRE_INSTALLED, deploy_selection

from .conftest import Synth, pod_spec, profile

#: A profile that deploys every component with a deploy label.
EVERYTHING = profile(
    devicePlugin={"implementation": "nvidia", "sharing": {"mps": {"resources": [
        {"name": "nvidia.com/gpu", "replicas": 2}]}}},
)  # fmt: skip


def _expressions(spec: dict[str, Any]) -> list[list[dict[str, Any]]]:
    affinity = spec.get("affinity", {}).get("nodeAffinity", {})
    terms = affinity.get("requiredDuringSchedulingIgnoredDuringExecution", {})
    return [t.get("matchExpressions", []) for t in terms.get("nodeSelectorTerms", [])]


@pytest.mark.parametrize("mode", ["optional", "required"])
def test_every_gpu_daemonset_selects_on_its_deploy_label(synth: Synth, mode: str) -> None:
    objects = synth({**EVERYTHING, "cluster": {"deployLabels": mode}})
    seen = set()
    for o in objects:
        if o.kind != "DaemonSet" or o.component not in DEPLOY_COMPONENTS:
            continue
        seen.add(o.component)
        spec = pod_spec(o.manifest)
        off = (PRE_INSTALLED,) if o.component == "driver" else ()
        selector, requirements = deploy_selection(o.component, mode, off)
        assert selector.items() <= spec["nodeSelector"].items(), o.name
        wanted = [{"key": k, "operator": op, "values": list(v)} for k, op, v in requirements]
        terms = _expressions(spec)
        assert terms, o.name
        for term in terms:  # terms are ORed: each carries the requirements
            assert all(w in term for w in wanted), (o.name, term)
    assert seen >= {"driver", "container-toolkit", "device-plugin", "gpu-feature-discovery"}


def test_optional_leaves_absent_labels_alone_required_needs_true(synth: Synth) -> None:
    assert deploy_selection("device-plugin", "optional") == (
        {},
        [
            (
                "nvidia.com/gpu.deploy.device-plugin",
                "NotIn",
                ("false", "paused-for-driver-upgrade", "paused-for-mig-change"),
            ),
            ("nvidia.com/gpu.deploy.operands", "NotIn", ("false",)),
        ],
    )
    assert deploy_selection("driver", "optional", (PRE_INSTALLED,))[1][0][2] == (
        "false", "paused-for-driver-upgrade", "paused-for-mig-change", "pre-installed")  # fmt: skip
    assert deploy_selection("mig-manager", "required") == (
        {"nvidia.com/gpu.deploy.mig-manager": "true"},
        [("nvidia.com/gpu.deploy.operands", "NotIn", ("false",))],
    )
    with pytest.raises(KeyError):
        deploy_selection("node-feature-discovery", "optional")


def test_driver_manager_finds_the_clients_by_app_label(synth: Synth) -> None:
    """k8s-driver-manager waits for pods labelled app=<these> to stop before unloading."""
    objects = synth(profile(devicePlugin={"nodeConfigs": [{"name": "pool"}]}))
    apps = {
        o.name: o.manifest["spec"]["template"]["metadata"]["labels"]["app"]
        for o in objects
        if o.kind == "DaemonSet"
    }
    assert apps["nvidia-container-toolkit-daemonset"] == "nvidia-container-toolkit-daemonset"
    assert apps["nvidia-device-plugin-daemonset"] == "nvidia-device-plugin-daemonset"
    assert apps["nvidia-device-plugin-pool"] == "nvidia-device-plugin-daemonset"
    assert apps["gpu-feature-discovery"] == "gpu-feature-discovery"
