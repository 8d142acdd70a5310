"""The DRA driver's feature gates and IMEX mode in its containers' environment.

Held to NVIDIA's chart (kubernetes-sigs/dra-driver-nvidia-gpu at 95932046, chart ``0.5.0-dev``,
``deployments/helm/dra-driver-nvidia-gpu/templates/``):

- ``kubeletplugin.yaml`` (both the ``compute-domains`` and the ``gpus`` container) and
  ``controller.yaml`` set ``FEATURE_GATES`` only when ``featureGates`` is not empty, to
  ``{{ range $key, $value := .Values.featureGates }}{{ $key }}={{ $value }},{{ end }}``: Go's
  templates visit a map's keys in sorted order, and print a boolean as ``true``/``false``, so
  every set gate is ``Name=true,`` or ``Name=false,`` in name order, a comma after each, the
  last too. The driver reads it with component-base's ``featureGate.Set`` (vendored
  ``k8s.io/component-base/featuregate/feature_gate.go`` ``SetWithLogger``), which skips the
  empty entry after the last comma and refuses a gate it does not know ("unrecognized feature
  gate", rule ``dra-feature-gate-in-version``). The GPU Operator v26.7.0 renders the same
  gates without the last comma (its ``gpucluster-dra-driver-gpus-only.yaml`` golden); gpustack
  follows the chart;
- ``IMEX_MODE`` and ``IMEX_ISOLATION`` (the controller and ``compute-domains``) and
  ``IMEX_HOST_SOCKET_PATH`` (``compute-domains``) come from ``resources.computeDomains.imex``.
  The chart writes them always; gpustack writes them for ``hostManaged`` only, since its
  ``driverManaged`` and ``domain`` are the programs' own defaults (``IMEX_MODE`` and
  ``IMEX_ISOLATION`` flags of ``cmd/compute-domain-controller/main.go`` and
  ``cmd/compute-domain-kubelet-plugin/main.go``), and without them the rendering of every
  profile that does not use host-managed IMEX stays as it was;
- with ``hostManaged``, the chart renders neither the ``compute-domain-daemon.nvidia.com``
  DeviceClass nor the IMEX daemons' ServiceAccount and ClusterRole
  (``deviceclass-compute-domain-daemon.yaml``, ``rbac-compute-domain-daemon.yaml``: the
  driver starts no IMEX daemons).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

#: resources.computeDomains.imex.isolation: the one value the driver implements.
IMEX_ISOLATION: Final = "domain"


def feature_gates_value(gates: Mapping[str, bool]) -> str | None:
    """``FEATURE_GATES`` as the chart renders it for ``featureGates: gates``; None when the
    chart sets no ``FEATURE_GATES`` (no gate set)."""
    if not gates:
        return None
    return "".join(f"{name}={str(gates[name]).lower()}," for name in sorted(gates))


def gate_env(
    gates: Mapping[str, bool], imex_mode: str | None, socket: str | None = None
) -> list[tuple[str, str]]:
    """``FEATURE_GATES``, then (host-managed IMEX only) ``IMEX_MODE``, ``IMEX_ISOLATION`` and,
    given ``socket`` (the kubelet plugin's), ``IMEX_HOST_SOCKET_PATH``; ``imex_mode`` None:
    a container that reads no IMEX mode (``gpus``)."""
    env: list[tuple[str, str]] = []
    value = feature_gates_value(gates)
    if value is not None:
        env.append(("FEATURE_GATES", value))
    if imex_mode == "hostManaged":
        env += [("IMEX_MODE", imex_mode), ("IMEX_ISOLATION", IMEX_ISOLATION)]
        if socket is not None:
            env.append(("IMEX_HOST_SOCKET_PATH", socket))
    return env
