"""NVIDIA's DCGM exporter: DaemonSet, Service, counters ConfigMap, ServiceMonitor (validated
against the Prometheus Operator CRD in tests/crds/) and the NetworkPolicy exception."""

from __future__ import annotations

from typing import Any

import pytest

from gpustack.constructs import dcgm_exporter
from gpustack.profile.model import DcgmExporter
from tests.k8s_schema import CUSTOM_RESOURCES, errors

from .conftest import Synth, container, env, find, kinds, mounts, pod_spec, profile

ON: dict[str, Any] = {"enabled": True}
NAME = dcgm_exporter.NAME


def test_off_by_default(synth: Synth) -> None:
    objects = synth(profile())
    assert kinds(objects, "dcgm-exporter") == []
    assert [o.name for o in objects if o.kind == "NetworkPolicy"] == ["gpustack-deny-ingress"]


def test_daemonset_and_service(synth: Synth) -> None:
    objects = synth(profile(dcgmExporter=ON))
    assert kinds(objects, "dcgm-exporter") == [
        ("ServiceAccount", NAME),
        ("DaemonSet", NAME),
        ("Service", NAME),
    ]
    ds = find(objects, "DaemonSet", NAME)
    spec = pod_spec(ds)
    assert spec["runtimeClassName"] == "nvidia"
    assert spec["automountServiceAccountToken"] is False
    c = container(ds, NAME)
    assert c["image"] == DcgmExporter().image_ref()
    assert env(c)["DCGM_EXPORTER_LISTEN"] == ":9400"
    assert "DCGM_EXPORTER_COLLECTORS" not in env(c)  # the image's default counters
    assert mounts(c)["/var/lib/kubelet/pod-resources"]["readOnly"] is True
    assert c["ports"] == [{"containerPort": 9400, "name": "metrics"}]
    service = find(objects, "Service", NAME)
    assert service["spec"]["selector"] == ds["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"][0]["targetPort"] == "metrics"
    wait = container(ds, "toolkit-validation", init=True)
    assert "toolkit-ready" in wait["command"][-1]


def test_counters_csv_only_when_customized(synth: Synth) -> None:
    counters = [
        {"field": "DCGM_FI_DEV_GPU_UTIL", "help": "GPU utilization (in %)."},
        {"field": "DCGM_FI_DEV_XID_ERRORS", "type": "gauge", "help": "Last XID error."},
    ]
    objects = synth(profile(dcgmExporter={**ON, "counters": counters}))
    csv = find(objects, "ConfigMap", dcgm_exporter.COUNTERS_MAP)["data"]["counters.csv"]
    assert csv.splitlines()[1:] == [
        "DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilization (in %).",
        "DCGM_FI_DEV_XID_ERRORS, gauge, Last XID error.",
    ]
    c = container(find(objects, "DaemonSet", NAME), NAME)
    assert env(c)["DCGM_EXPORTER_COLLECTORS"] == "/etc/dcgm-exporter/gpustack/counters.csv"
    assert "/etc/dcgm-exporter/gpustack" in mounts(c)


def test_service_monitor_validates_against_the_crd(synth: Synth) -> None:
    assert ("monitoring.coreos.com/v1", "ServiceMonitor") in CUSTOM_RESOURCES
    monitor_spec = {"enabled": True, "interval": "30s", "labels": {"release": "kps"}}
    objects = synth(profile(dcgmExporter={**ON, "serviceMonitor": monitor_spec}))
    monitor = find(objects, "ServiceMonitor", NAME)
    assert errors(monitor, "1.33") == []
    assert monitor["metadata"]["labels"]["release"] == "kps"
    service = find(objects, "Service", NAME)
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    assert monitor["spec"]["endpoints"] == [
        {"port": "gpu-metrics", "path": "/metrics", "interval": "30s"}]  # fmt: skip
    broken = {**monitor, "spec": {**monitor["spec"], "endpoints": [{"scheme": "ftp"}]}}
    assert any("'ftp' is not one of" in e for e in errors(broken, "1.33"))
    del broken["spec"]["selector"]
    assert any("'selector' is a required property" in e for e in errors(broken, "1.33"))


@pytest.mark.parametrize(
    ("metrics_from", "peer"),
    [
        ({}, {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}},
              "podSelector": {}}),
        ({"namespaceSelector": {"team": "obs"}, "podSelector": {"app": "prometheus"}},
         {"namespaceSelector": {"matchLabels": {"team": "obs"}},
          "podSelector": {"matchLabels": {"app": "prometheus"}}}),
    ],
)  # fmt: skip
def test_network_policy_admits_only_the_metrics_port(
    synth: Synth, metrics_from: dict[str, Any], peer: dict[str, Any]
) -> None:
    objects = synth(profile(dcgmExporter={**ON, "metricsFrom": metrics_from}))
    policy = find(objects, "NetworkPolicy", "gpustack-allow-gpu-metrics")["spec"]
    labels = find(objects, "DaemonSet", NAME)["spec"]["template"]["metadata"]["labels"]
    assert policy["podSelector"]["matchLabels"].items() <= labels.items()
    assert policy["ingress"] == [{"from": [peer], "ports": [{"port": 9400, "protocol": "TCP"}]}]
    # the deny-all policy stays as it is
    deny = find(objects, "NetworkPolicy", "gpustack-deny-ingress")["spec"]
    assert "ingress" not in deny
