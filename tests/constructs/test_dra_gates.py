"""The DRA driver's feature gates and IMEX mode, held to NVIDIA's chart.

Facts, read from kubernetes-sigs/dra-driver-nvidia-gpu at 95932046 (chart ``0.5.0-dev``; the
mirror has no ``v0.5.0`` tag), ``deployments/helm/dra-driver-nvidia-gpu/templates/`` (``helm``
is not available here, so the expected values are the template read by hand, written out):

- ``kubeletplugin.yaml``, ``controller.yaml``: ``FEATURE_GATES`` is
  ``{{ range $key, $value := .Values.featureGates }}{{ $key }}={{ $value }},{{ end }}``, set
  only when ``featureGates`` is not empty, on the ``compute-domains`` and ``gpus`` containers
  and the controller. Go's ``text/template`` ranges over a map in sorted key order and prints a
  bool as ``true``/``false``: the values below are what it prints for each ``featureGates``;
- ``kubeletplugin.yaml``: ``IMEX_MODE``, ``IMEX_ISOLATION``, ``IMEX_HOST_SOCKET_PATH`` on
  ``compute-domains`` (``controller.yaml``: the first two) from
  ``resources.computeDomains.imex`` (``mode``, ``isolation: domain``, ``hostSocketPath:
  /etc/nvidia-imex/imex_ctrl.sock``);
- ``deviceclass-compute-domain-daemon.yaml``, ``rbac-compute-domain-daemon.yaml``: not
  rendered when ``imex.mode`` is ``hostManaged``.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpustack import dra_upstream
from gpustack.constructs import dra_driver
from gpustack.constructs.dra_gates import feature_gates_value

from .conftest import Synth, container, env, find, merge, profile

BOTH = profile(
    cluster={"kubernetesVersion": "1.36"},
    devicePlugin={"enabled": False},
    dra={"enabled": True, "computeDomains": True},
)
HOST_IMEX = merge(
    BOTH, {"dra": {"imexMode": "hostManaged", "featureGates": {"HostManagedIMEXDaemon": True}}}
)


@pytest.mark.parametrize(
    ("gates", "chart"),
    [
        ({}, None),  # {{- if .Values.featureGates }}: no FEATURE_GATES at all
        ({"NVMLDeviceHealthCheck": True}, "NVMLDeviceHealthCheck=true,"),
        # sorted by name, false kept, a comma after each
        (
            {"TimeSlicingSettings": True, "CrashOnNVLinkFabricErrors": False,
             "ConsumableShares": True},
            "ConsumableShares=true,CrashOnNVLinkFabricErrors=false,TimeSlicingSettings=true,",
        ),
        # Go sorts strings by bytes: upper case before lower case ("DRAList" < "DeviceMetadata")
        (
            {"DeviceMetadata": False, "DRAListTypeAttributes": True, "DynamicMIG": False},
            "DRAListTypeAttributes=true,DeviceMetadata=false,DynamicMIG=false,",
        ),
    ],
)  # fmt: skip
def test_feature_gates_as_the_chart_renders_them(
    synth: Synth, gates: dict[str, bool], chart: str | None
) -> None:
    assert feature_gates_value(gates) == chart
    objects = synth(merge(BOTH, {"dra": {"featureGates": gates}}))
    plugin = find(objects, "DaemonSet", dra_driver.KUBELET_PLUGIN)
    controller = find(objects, "Deployment", dra_driver.CONTROLLER)
    for c in (container(plugin, "gpus"), container(plugin, "compute-domains"),
              container(controller, "compute-domain")):  # fmt: skip
        assert env(c).get("FEATURE_GATES") == chart, c["name"]


def _names(objects: list[Any], kind: str) -> set[str]:
    return {o.name for o in objects if o.kind == kind}


def test_host_managed_imex(synth: Synth) -> None:
    driver, host = synth(BOTH), synth(HOST_IMEX)
    plugin = container(find(host, "DaemonSet", dra_driver.KUBELET_PLUGIN), "compute-domains")
    assert {k: v for k, v in env(plugin).items() if k.startswith("IMEX_")} == {
        "IMEX_MODE": "hostManaged",
        "IMEX_ISOLATION": "domain",
        "IMEX_HOST_SOCKET_PATH": "/etc/nvidia-imex/imex_ctrl.sock",
    }
    controller = container(find(host, "Deployment", dra_driver.CONTROLLER), "compute-domain")
    assert {k: v for k, v in env(controller).items() if k.startswith("IMEX_")} == {
        "IMEX_MODE": "hostManaged",
        "IMEX_ISOLATION": "domain",
    }
    gpus = container(find(host, "DaemonSet", dra_driver.KUBELET_PLUGIN), "gpus")
    assert not [k for k in env(gpus) if k.startswith("IMEX_")]
    daemon_class = dra_upstream.COMPUTE_DOMAIN_DEVICE_CLASSES[0]
    assert daemon_class in _names(driver, "DeviceClass")
    assert _names(driver, "DeviceClass") - _names(host, "DeviceClass") == {daemon_class}
    for kind, name in (("ClusterRole", dra_driver.DAEMON_CLUSTER_ROLE),
                       ("ServiceAccount", dra_driver.DAEMON_SA)):  # fmt: skip
        assert name in _names(driver, kind)
        assert name not in _names(host, kind)
    # driver-managed: the programs' defaults, so nothing is written
    plugin = container(find(driver, "DaemonSet", dra_driver.KUBELET_PLUGIN), "compute-domains")
    assert not [k for k in env(plugin) if k.startswith("IMEX_")]
