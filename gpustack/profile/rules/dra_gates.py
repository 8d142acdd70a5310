"""Rules for the DRA driver's feature gates (``dra.featureGates``) and IMEX mode (``dra.imexMode``).

Facts (kubernetes-sigs/dra-driver-nvidia-gpu at 95932046, chart ``0.5.0-dev``; the GPU Operator
v26.7.0's DRA install documentation; ``shared/reference/nvidia-stack-2026.md``):

- ``pkg/featuregates/featuregates.go`` ``ValidateFeatureGates`` refuses to start with DynamicMIG
  and PassthroughSupport, NVMLDeviceHealthCheck or MPSSupport, with PassthroughSupport and
  NVMLDeviceHealthCheck, with ComputeDomainCliques but not IMEXDaemonsWithDNSNames, and with
  DeviceMetadata but not PassthroughSupport;
- the driver's ``site/content/docs/reference/feature-gates.md`` also lists MPSSupport with
  NVMLDeviceHealthCheck as exclusive; the GPU Operator's documentation lists MPSSupport with
  ConsumableShares (``cmd/gpu-kubelet-plugin/device_state.go`` fails an MPS claim when
  consumable shares are on);
- Kubernetes gates: NVMLDeviceHealthCheck writes device taints (``DRADeviceTaints``, off by
  default in 1.34 and 1.35, on from 1.36: ``docs/guides/gpu-health-checking.md``); DynamicMIG
  publishes partitionable devices (``DRAPartitionableDevices``, on from 1.36:
  ``feature-gates.md``); ConsumableShares publishes consumable capacity
  (``DRAConsumableCapacity``, on from 1.36); DRAListTypeAttributes needs the Kubernetes gate of
  the same name (``featuregates.go``), which no release gpustack knows turns on by default;
- ``pkg/imex/imex.go`` ``Config.Validate``: ``hostManaged`` needs HostManagedIMEXDaemon;
- gpustack renders neither the host-root, ``/sys`` and ``/proc`` mounts the chart adds for
  PassthroughSupport nor the MPS Deployments Role the chart adds for MPSSupport
  (``templates/kubeletplugin.yaml``, ``rbac-kubeletplugin.yaml``), so it refuses those gates.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile
from gpustack.profile.model.dra_gates import BY_NAME

#: Exclusive pairs, each with where NVIDIA states it; the finding is at the second gate.
EXCLUSIVE: Final = (
    ("DynamicMIG", "PassthroughSupport", "featuregates.go ValidateFeatureGates"),
    ("DynamicMIG", "NVMLDeviceHealthCheck", "featuregates.go ValidateFeatureGates"),
    ("DynamicMIG", "MPSSupport", "featuregates.go ValidateFeatureGates"),
    ("PassthroughSupport", "NVMLDeviceHealthCheck", "featuregates.go ValidateFeatureGates"),
    ("MPSSupport", "NVMLDeviceHealthCheck", "the driver's feature-gates reference"),
    ("MPSSupport", "ConsumableShares", "the GPU Operator's DRA documentation"),
)
#: A gate that needs another driver gate on (``ValidateFeatureGates``).
REQUIRES: Final = (
    ("ComputeDomainCliques", "IMEXDaemonsWithDNSNames"),
    ("DeviceMetadata", "PassthroughSupport"),
)
#: Driver gate -> (Kubernetes gate, first minor release with it on by default; None: none).
KUBERNETES_GATES: Final[dict[str, tuple[str, tuple[int, int] | None]]] = {
    "NVMLDeviceHealthCheck": ("DRADeviceTaints", (1, 36)),
    "DynamicMIG": ("DRAPartitionableDevices", (1, 36)),
    "ConsumableShares": ("DRAConsumableCapacity", (1, 36)),
    "DRAListTypeAttributes": ("DRAListTypeAttributes", None),
}
#: Gates whose chart rendering gpustack does not make, with what the chart adds.
NOT_RENDERED: Final = {
    "PassthroughSupport": "the host root, /lib/modules, /sys and /proc mounts of the gpus"
    " container",
    "MPSSupport": "the kubelet plugin's Role on Deployments (it starts MPS control daemons)",
}
#: featuregates.go: the calendar releases as SemVer minors.
CALENDAR: Final = {(25, 3): (0, 1), (25, 8): (0, 2), (25, 12): (0, 3), (26, 4): (0, 4)}
_VERSION = re.compile(r"^v?(\d+)\.(\d+)")


def gate_path(name: str) -> tuple[str, ...]:
    return ("dra", "featureGates", name)


def driver_minor(version: str) -> tuple[int, int] | None:
    """The driver release as a SemVer minor (``v0.5.0`` -> (0, 5), ``v25.8.1`` -> (0, 2));
    None for a tag this table cannot place."""
    found = _VERSION.match(version)
    if not found:
        return None
    minor = (int(found.group(1)), int(found.group(2)))
    return minor if minor[0] == 0 else CALENDAR.get(minor)


def _kubernetes(p: Profile) -> tuple[int, int]:
    major, minor = p.cluster.kubernetes_version.split(".")[:2]
    return int(major), int(minor)


def dra_feature_gate_exclusive(p: Profile) -> Iterator[Finding]:
    gates = p.dra.feature_gates
    if not p.dra.enabled:
        return
    for first, second, said in EXCLUSIVE:
        if gates.enabled(first) and gates.enabled(second):
            yield Finding(
                gate_path(second),
                f"NVIDIA's DRA driver does not run {second} together with {first} ({said})",
                f"set dra.featureGates.{second}: false, or {first}: false",
            )


def dra_feature_gate_requires(p: Profile) -> Iterator[Finding]:
    gates = p.dra.feature_gates
    if not p.dra.enabled:
        return
    for gate, needs in REQUIRES:
        if gates.enabled(gate) and not gates.enabled(needs):
            yield Finding(
                gate_path(gate),
                f"the driver's {gate} needs its {needs} gate, which is off (the driver stops at"
                " start)",
                f"set dra.featureGates.{needs}: true, or {gate}: false",
            )
    host_imex = p.dra.compute_domains and p.dra.imex_mode == "hostManaged"
    if host_imex and not gates.enabled("HostManagedIMEXDaemon"):
        yield Finding(
            ("dra", "imexMode"),
            "host-managed IMEX needs the driver's HostManagedIMEXDaemon gate (its controller"
            " and kubelet plugin refuse to start without it)",
            "set dra.featureGates.HostManagedIMEXDaemon: true, or dra.imexMode: driverManaged",
        )


def dra_feature_gate_needs_kubernetes(p: Profile) -> Iterator[Finding]:
    if not p.dra.enabled:
        return
    have = _kubernetes(p)
    for gate, (kube_gate, on_from) in KUBERNETES_GATES.items():
        if not p.dra.feature_gates.enabled(gate) or (on_from is not None and have >= on_from):
            continue
        since = (
            f"on by default from Kubernetes {on_from[0]}.{on_from[1]}"
            if on_from
            else "on by default in no release gpustack knows"
        )
        yield Finding(
            gate_path(gate),
            f"the driver's {gate} needs the Kubernetes {kube_gate} feature gate ({since}); the"
            f" cluster runs {p.cluster.kubernetes_version}",
            f"turn {kube_gate} on in the API server, scheduler, controller manager and kubelets"
            f" and accept this finding, or set dra.featureGates.{gate}: false",
        )


def dra_feature_gate_in_version(p: Profile) -> Iterator[Finding]:
    if not p.dra.enabled:
        return
    have = driver_minor(p.dra.version)
    if have is None:
        return
    for gate in p.dra.feature_gates.values():
        since = BY_NAME[gate].since
        if have < since:
            yield Finding(
                gate_path(gate),
                f"the DRA driver {p.dra.version} has no {gate} gate (it came in"
                f" v{since[0]}.{since[1]}); the driver refuses an unknown gate",
                f"remove dra.featureGates.{gate}, or set dra.version to"
                f" v{since[0]}.{since[1]}.0 or later",
            )


def dra_feature_gate_rendered(p: Profile) -> Iterator[Finding]:
    if not p.dra.enabled:
        return
    for gate, adds in NOT_RENDERED.items():
        if p.dra.feature_gates.values().get(gate):
            yield Finding(
                gate_path(gate),
                f"gpustack does not render what NVIDIA's chart adds for {gate}: {adds}",
                f"set dra.featureGates.{gate}: false (or leave it unset)",
            )
