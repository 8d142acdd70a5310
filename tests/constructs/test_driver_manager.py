"""NVIDIA's driver manager in the driver pod: settings from ``driver.upgrade``, API access only
in its init containers, the deploy-labels step run for real, and the configuration digest."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gpustack.constructs import SynthObject
from gpustack.constructs.driver_manager import CLUSTER_ROLE, CONTAINER, LABELS_CONTAINER, rules
from gpustack.constructs.rbac import TOKEN_DIR
from gpustack.profile import components
from gpustack.profile.model import DriverUpgrade

from .conftest import Synth, container, env, find, merge, mounts, pod_spec, profile

DS = "nvidia-driver-daemonset"


def driver(objects: list[SynthObject]) -> dict[str, Any]:
    return find(objects, "DaemonSet", DS)


@pytest.mark.parametrize(
    ("upgrade", "expected"),
    [
        (
            {},
            {
                "ENABLE_GPU_POD_EVICTION": "true",
                "ENABLE_AUTO_DRAIN": "false",
                "DRAIN_USE_FORCE": "false",
                "DRAIN_POD_SELECTOR_LABEL": "",
                "DRAIN_TIMEOUT_SECONDS": "0s",
                "DRAIN_DELETE_EMPTYDIR_DATA": "false",
            },
        ),
        (
            {
                "autoDrain": True,
                "drainTimeoutSeconds": 600,
                "podSelector": "gpu=yes",
                "force": True,
                "deleteEmptyDirData": True,
                "gpuPodEviction": False,
            },
            {
                "ENABLE_GPU_POD_EVICTION": "false",
                "ENABLE_AUTO_DRAIN": "true",
                "DRAIN_USE_FORCE": "true",
                "DRAIN_POD_SELECTOR_LABEL": "gpu=yes",
                "DRAIN_TIMEOUT_SECONDS": "600s",
                "DRAIN_DELETE_EMPTYDIR_DATA": "true",
            },
        ),
    ],
)
def test_init_container_is_the_driver_manager_with_the_profile_settings(
    synth: Synth, upgrade: dict[str, Any], expected: dict[str, str]
) -> None:
    ds = driver(synth(profile(driver={"upgrade": upgrade})))
    names = [c["name"] for c in pod_spec(ds)["initContainers"]]
    assert names == [LABELS_CONTAINER, CONTAINER]
    manager = container(ds, CONTAINER, init=True)
    assert manager["image"] == DriverUpgrade().image_ref()
    assert manager["command"] == ["driver-manager"] and manager["args"] == ["uninstall_driver"]
    values = env(manager)
    assert {k: values[k] for k in expected} == expected
    assert values["NODE_NAME"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}
    assert values["OPERATOR_NAMESPACE"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    assert "GPU_DIRECT_RDMA_ENABLED" not in values


def test_rdma_makes_the_manager_wait_for_mofed(synth: Synth) -> None:
    ds = driver(synth(profile(driver={"rdma": {"enabled": True, "useHostMofed": True}})))
    manager = container(ds, CONTAINER, init=True)
    assert env(manager)["GPU_DIRECT_RDMA_ENABLED"] == "true"
    assert env(manager)["USE_HOST_MOFED"] == "true"
    assert "/run/mellanox/drivers" in mounts(manager)


def test_api_token_only_in_the_init_containers(synth: Synth) -> None:
    objects = synth(profile())
    ds = driver(objects)
    spec = pod_spec(ds)
    assert spec["automountServiceAccountToken"] is False
    for c in spec["initContainers"]:
        assert mounts(c)[TOKEN_DIR]["readOnly"] is True
    for c in spec["containers"]:
        assert TOKEN_DIR not in mounts(c)
    sources = {
        next(iter(s)) for v in spec["volumes"] if v["name"] == "api-token"
        for s in v["projected"]["sources"]
    }  # fmt: skip
    assert sources == {"serviceAccountToken", "configMap", "downwardAPI"}
    role = find(objects, "ClusterRole", CLUSTER_ROLE)
    assert role["rules"] == [r.as_manifest() for r in rules(DriverUpgrade().version)]
    binding = find(objects, "ClusterRoleBinding", CLUSTER_ROLE)
    assert binding["subjects"] == [
        {
            "kind": "ServiceAccount",
            "name": spec["serviceAccountName"],
            "namespace": "gpustack-system",
        }
    ]
    assert binding["roleRef"]["name"] == CLUSTER_ROLE


def test_without_the_driver_manager_no_api_access(synth: Synth) -> None:
    objects = synth(profile(driver={"upgrade": {"driverManager": False}}))
    spec = pod_spec(driver(objects))
    assert "initContainers" not in spec
    assert not [
        o
        for o in objects
        if o.component == "driver" and o.kind in ("ClusterRole", "ClusterRoleBinding")
    ]
    assert "DRIVER_CONFIG_DIGEST" not in env(container(driver(objects), "nvidia-driver-ctr"))


def test_required_deploy_labels_are_not_set_by_gpustack(synth: Synth) -> None:
    ds = driver(synth(profile(cluster={"deployLabels": "required"})))
    assert [c["name"] for c in pod_spec(ds)["initContainers"]] == [CONTAINER]
    assert pod_spec(ds)["nodeSelector"]["nvidia.com/gpu.deploy.driver"] == "true"


def _diff(a: list[SynthObject], b: list[SynthObject]) -> dict[tuple[str, str], tuple[Any, Any]]:
    left = {(o.kind, o.name): o.manifest for o in a}
    right = {(o.kind, o.name): o.manifest for o in b}
    assert left.keys() == right.keys()
    return {k: (left[k], right[k]) for k in left if left[k] != right[k]}


def _digest(ds: dict[str, Any]) -> str:
    digests = {env(c)["DRIVER_CONFIG_DIGEST"] for c in [
        container(ds, CONTAINER, init=True), container(ds, "nvidia-driver-ctr")]}  # fmt: skip
    (digest,) = digests
    return digest


def _without_version_label(manifest: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(manifest))
    out["metadata"]["labels"].pop("app.kubernetes.io/version")
    return out


def test_a_version_bump_changes_only_the_driver_daemonset_and_its_digest(synth: Synth) -> None:
    base = profile(driver={"version": "580.105.08"})
    before, after = synth(base), synth(merge(base, {"driver": {"version": "580.95.05"}}))
    changed = _diff(before, after)
    assert changed
    assert {o.component for o in before if (o.kind, o.name) in changed} == {"driver"}
    # beyond the informational version label, only the DaemonSet changes
    beyond_label = {
        k for k, (x, y) in changed.items() if _without_version_label(x) != _without_version_label(y)
    }
    assert beyond_label == {("DaemonSet", DS)}
    old, new = changed[("DaemonSet", DS)]
    assert _digest(old) != _digest(new)


@pytest.mark.parametrize(
    ("change", "reinstalls"),
    [
        ({"driver": {"kernelModuleType": "open"}}, True),
        ({"driver": {"env": [{"name": "X", "value": "1"}]}}, True),
        ({"driver": {"upgrade": {"autoDrain": True}}}, True),
        ({"cluster": {"tolerations": []}}, False),
        ({"driver": {"startupProbe": {"failureThreshold": 3}}}, False),
        ({"metadata": {"labels": {"team": "x"}}}, False),
    ],
)
def test_digest_follows_what_decides_the_installed_driver(
    synth: Synth, change: dict[str, Any], reinstalls: bool
) -> None:
    before = _digest(driver(synth(profile())))
    after = _digest(driver(synth(merge(profile(), change))))
    assert (before != after) is reinstalls


# --- the deploy-labels step, run for real -----------------------------------------------------

FAKE_KUBECTL = """#!/bin/sh
printf "%s\\n" "$*" >> "$KUBECTL_LOG"
case "$1" in
  get) printf '%b' "$NODE_LABELS" ;;
  label) ;;
  *) exit 2 ;;
esac
"""


#: The two labels the cases below are about; the node carries the other clients' labels.
CASE_LABELS = ("nvidia.com/gpu.deploy.container-toolkit", "nvidia.com/gpu.deploy.device-plugin")


def _script(synth: Synth) -> tuple[str, dict[str, str]]:
    objects = synth(profile())
    data = find(objects, "ConfigMap", "nvidia-driver-manager-scripts")["data"]
    step = container(driver(objects), LABELS_CONTAINER, init=True)
    return data["deploy-labels.sh"], {k: v for k, v in env(step).items() if isinstance(v, str)}


@pytest.mark.parametrize(
    ("node_labels", "expected"),
    [
        ("", ["nvidia.com/gpu.deploy.container-toolkit=true",
              "nvidia.com/gpu.deploy.device-plugin=true"]),
        ("nvidia.com/gpu.deploy.device-plugin=false\\nkubernetes.io/os=linux\\n",
         ["nvidia.com/gpu.deploy.container-toolkit=true"]),
        ("nvidia.com/gpu.deploy.container-toolkit=paused-for-driver-upgrade\\n"
         "nvidia.com/gpu.deploy.device-plugin=\\n",
         ["nvidia.com/gpu.deploy.device-plugin=true"]),
        ("nvidia.com/gpu.deploy.container-toolkit=true\\n"
         "nvidia.com/gpu.deploy.device-plugin=true\\n", None),
        # a label that merely starts like another is another label
        ("nvidia.com/gpu.deploy.device-plugin-x=true\\n"
         "nvidia.com/gpu.deploy.container-toolkit=true\\n",
         ["nvidia.com/gpu.deploy.device-plugin=true"]),
    ],
)  # fmt: skip
def test_deploy_labels_step_sets_only_absent_labels(
    synth: Synth, tmp_path: Path, node_labels: str, expected: list[str] | None
) -> None:
    script, step_env = _script(synth)
    seeded = step_env["DEPLOY_LABELS"].split()
    assert set(CASE_LABELS) <= set(seeded)
    others = "".join(f"{key}=true\\n" for key in seeded if key not in CASE_LABELS)
    (tmp_path / "deploy-labels.sh").write_text(script)
    kubectl = tmp_path / "bin" / "kubectl"
    kubectl.parent.mkdir()
    kubectl.write_text(FAKE_KUBECTL)
    kubectl.chmod(kubectl.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "kubectl.log"
    run_env = {
        **step_env,
        "NODE_NAME": "gpu-1",
        "PATH": f"{kubectl.parent}:{os.environ['PATH']}",
        "KUBECTL_LOG": str(log),
        "NODE_LABELS": others + node_labels,
    }
    proc = subprocess.run(
        ["sh", str(tmp_path / "deploy-labels.sh")], env=run_env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    calls = log.read_text().splitlines()
    assert calls[0].startswith("get node gpu-1 -o go-template=")
    if expected is None:
        assert len(calls) == 1
    else:
        assert calls[1:] == [" ".join(["label", "node", "gpu-1", "--overwrite", *expected])]


@pytest.mark.parametrize(
    ("version", "reads_claims"),
    [("v0.9.1", False), ("v0.11.0", False), ("v0.12.0", True), ("v0.13.0", True)],
)
def test_resource_claims_readable_from_v0_12(
    synth: Synth, version: str, reads_claims: bool
) -> None:
    """k8s-driver-manager v0.12.0 ``podHasGPUResourceClaim`` gets each ResourceClaim a pod
    names; older releases never do."""
    objects = synth(profile(driver={"upgrade": {"version": version}}))
    got = find(objects, "ClusterRole", CLUSTER_ROLE)["rules"]
    claims = [r for r in got if r["apiGroups"] == ["resource.k8s.io"]]
    assert claims == ([{"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"],
                        "verbs": ["get"]}] if reads_claims else [])  # fmt: skip


@pytest.mark.parametrize("mode", ["optional", "required"])
def test_every_registered_gpu_client_label_is_seeded_on_or_off(synth: Synth, mode: str) -> None:
    """The step seeds each GPU client's label whether or not the profile switches it on (the
    driver pod must not change with another component: tests/constructs/
    test_driver_independent.py); with ``required`` the labels are the administrator's."""
    objects = synth(profile(cluster={"deployLabels": mode}, dcgmExporter={"enabled": False}))
    names = [c["name"] for c in pod_spec(driver(objects))["initContainers"]]
    if mode == "required":
        assert names == [CONTAINER]
        return
    step = container(driver(objects), LABELS_CONTAINER, init=True)
    wanted = [
        f"nvidia.com/gpu.deploy.{c.name}"
        for c in components.REGISTRY
        if c.gpu_client and c.deploy_label
    ]
    assert "nvidia.com/gpu.deploy.dcgm-exporter" in wanted
    assert env(step)["DEPLOY_LABELS"].split() == wanted
