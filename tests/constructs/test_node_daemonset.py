"""The node DaemonSet building block: volumes declared by their mounts, checksummed ConfigMaps,
and the pod skeleton every GPU DaemonSet shares."""

from __future__ import annotations

from typing import Any

import cdk8s
import pytest

from gpustack.constructs import k8s, kube
from gpustack.constructs.body_text import decoded
from gpustack.constructs.labels import Identity
from gpustack.constructs.node_daemonset import (
    CONFIG_CHECKSUM,
    SCRIPTS_CHECKSUM,
    NodeApp,
    NodeDaemonSet,
)
from gpustack.constructs.placement import Placement
from gpustack.constructs.waits import WaitFor
from gpustack.profile.model import Profile

from .conftest import profile

A = kube.host_path("a", "/a", "Directory")
B = kube.host_path("b", "/b")
C = kube.config_map_volume("c", "some-config-map")

PLACEMENT = Placement.from_profile(
    Profile.from_dict(
        profile(
            metadata={"labels": {"team": "ml"}, "podLabels": {"billing": "gpu"}},
            cluster={
                "namespace": "gpu",
                "imagePullSecrets": ["regcred"],
                "nodeSelector": {"gpu": "yes"},
                "priorityClassName": "high",
            },
        )
    )
)


def _build(body: Any) -> list[dict[str, Any]]:
    """Synthesize what ``body(chart, ds)`` adds with a DaemonSet builder ``ds`` of app ``x``."""
    app = cdk8s.App()
    chart = cdk8s.Chart(app, "test", disable_resource_name_hashes=True)
    node_app = NodeApp(
        Identity("x", "driver", "1.0", PLACEMENT.labels, PLACEMENT.pod_labels), PLACEMENT
    )
    ds = NodeDaemonSet(chart, node_app, service_account=node_app.service_account(chart))
    body(chart, ds)
    return [decoded(m) for m in chart.to_json()]


def _one(manifests: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [m for m in manifests if m["kind"] == kind]
    assert len(found) == 1, [m["kind"] for m in manifests]
    return found[0]


#: Mount sequences (volume, path) -> pod volumes, in first-mount order, each once.
MOUNTS: dict[str, tuple[list[tuple[k8s.Volume, str]], list[str]]] = {
    "one": ([(A, "/x")], ["a"]),
    "first mount decides order": ([(B, "/x"), (A, "/y"), (C, "/z")], ["b", "a", "c"]),
    "same volume twice": ([(A, "/x"), (B, "/y"), (A, "/z")], ["a", "b"]),
    "an equal volume built again": (
        [(A, "/x"), (kube.host_path("a", "/a", "Directory"), "/y")],
        ["a"],
    ),
}


@pytest.mark.parametrize(("sequence", "expected"), MOUNTS.values(), ids=MOUNTS.keys())
def test_a_mount_declares_its_volume_once(
    sequence: list[tuple[k8s.Volume, str]], expected: list[str]
) -> None:
    def body(chart: cdk8s.Chart, ds: NodeDaemonSet) -> None:
        mounts = [ds.mount(volume, path, read_only=True) for volume, path in sequence]
        ds.add("ds", "x-ds", containers=[k8s.Container(name="c", volume_mounts=mounts)])

    pod = _one(_build(body), "DaemonSet")["spec"]["template"]["spec"]
    assert [v["name"] for v in pod["volumes"]] == expected
    container = pod["containers"][0]
    assert [(m["name"], m["mountPath"]) for m in container["volumeMounts"]] == [
        (v.name, p) for v, p in sequence
    ]
    assert all(m["readOnly"] is True for m in container["volumeMounts"])


def test_two_different_volumes_under_one_name_are_refused() -> None:
    def body(chart: cdk8s.Chart, ds: NodeDaemonSet) -> None:
        ds.mount(A, "/x")
        ds.mount(kube.host_path("a", "/elsewhere"), "/y")

    with pytest.raises(ValueError, match="two different pod volumes are named 'a'"):
        _build(body)


def test_config_maps_are_checksummed_on_the_pod_template() -> None:
    scripts = {"run.sh": "echo hi\n"}
    config = {"config.yaml": "version: v1\n"}

    def body(chart: cdk8s.Chart, ds: NodeDaemonSet) -> None:
        s = ds.scripts(scripts)
        c = ds.config_map("config", "x-config", config, checksum=CONFIG_CHECKSUM, volume="cfg")
        mounts = [ds.mount(s, "/scripts"), ds.mount(c, "/etc/x")]
        ds.add("ds", "x-ds", containers=[k8s.Container(name="c", volume_mounts=mounts)])

    manifests = _build(body)
    maps = {m["metadata"]["name"]: m for m in manifests if m["kind"] == "ConfigMap"}
    assert {n: m["data"] for n, m in maps.items()} == {"x-scripts": scripts, "x-config": config}
    for m in maps.values():
        assert m["metadata"]["namespace"] == "gpu"
        assert m["metadata"]["annotations"] == {"argocd.argoproj.io/sync-wave": "-1"}
    template = _one(manifests, "DaemonSet")["spec"]["template"]
    assert template["metadata"]["annotations"] == {
        SCRIPTS_CHECKSUM: kube.data_checksum(scripts),
        CONFIG_CHECKSUM: kube.data_checksum(config),
    }
    volumes = {v["name"]: v["configMap"] for v in template["spec"]["volumes"]}
    assert volumes == {
        "scripts": {"name": "x-scripts", "defaultMode": 0o555},
        "cfg": {"name": "x-config"},
    }


def test_the_pod_skeleton() -> None:
    def body(chart: cdk8s.Chart, ds: NodeDaemonSet) -> None:
        wait = ds.wait_for(WaitFor("/run/nvidia/validations/ready", "busybox", "Always"), "wait")
        ds.add(
            "ds",
            "x-ds",
            containers=[k8s.Container(name="main"), k8s.Container(name="side")],
            init_containers=[wait],
            default_container=True,
            host_pid=True,
        )

    manifests = _build(body)
    account = _one(manifests, "ServiceAccount")
    assert account["metadata"]["name"] == "x"
    assert account["automountServiceAccountToken"] is False
    ds = _one(manifests, "DaemonSet")
    labels = ds["spec"]["template"]["metadata"]["labels"]
    assert ds["spec"]["selector"]["matchLabels"] == {
        "app.kubernetes.io/name": "x",
        "app.kubernetes.io/component": "driver",
    }
    # the pods carry podLabels, never the object labels (a change of those recreates no pod)
    assert labels["billing"] == "gpu"
    assert "team" not in labels
    assert ds["metadata"]["labels"]["team"] == "ml"
    assert ds["spec"]["template"]["metadata"]["annotations"] == {
        "kubectl.kubernetes.io/default-container": "main"
    }
    pod = ds["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "x"
    assert pod["automountServiceAccountToken"] is False
    assert pod["hostPID"] is True
    assert pod["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}
    assert pod["nodeSelector"] == {"gpu": "yes"}
    assert pod["priorityClassName"] == "high"
    assert pod["imagePullSecrets"] == [{"name": "regcred"}]
    assert pod["tolerations"] == [
        {"key": t.key, "operator": t.operator, "effect": t.effect} for t in PLACEMENT.tolerations
    ]
    [init] = pod["initContainers"]
    assert init["image"] == "busybox" and init["imagePullPolicy"] == "Always"
    assert "/run/nvidia/validations/ready" in init["command"][-1]
    assert init["volumeMounts"] == [
        {
            "mountPath": "/run/nvidia/validations",
            "mountPropagation": "HostToContainer",
            "name": "run-nvidia-validations",
            "readOnly": True,
        }
    ]
    assert pod["volumes"] == [
        {
            "hostPath": {"path": "/run/nvidia/validations", "type": "DirectoryOrCreate"},
            "name": "run-nvidia-validations",
        }
    ]
