"""The feature gates of NVIDIA's DRA driver (``dra.featureGates``) and its IMEX modes.

Why typed fields: the driver reads its gates from one ``FEATURE_GATES`` variable that nothing
checks before the pods start (and crash-loop on a bad combination); as fields, each gate has a
line that the rules (:mod:`gpustack.profile.rules.dra_gates`) can point at.

Facts (kubernetes-sigs/dra-driver-nvidia-gpu at 95932046, chart ``0.5.0-dev``, the newest state
the mirror holds: the repository has no ``v0.5.0`` tag; the image gpustack deploys is
``v0.5.0``):

- ``pkg/featuregates/featuregates.go`` ``defaultFeatureGates``: each gate's default, stage and
  the driver release that added it, as a SemVer minor (the file maps the calendar releases:
  25.3 -> 0.1, 25.8 -> 0.2, 25.12 -> 0.3, 26.4 -> 0.4), recorded in :data:`GATES`;
- the chart's ``values.yaml``: ``featureGates`` is a map of gate name to boolean, empty by
  default; ``resources.computeDomains.imex.mode`` is ``driverManaged`` (default) or
  ``hostManaged``, and ``imex.hostSocketPath`` defaults to ``/etc/nvidia-imex/imex_ctrl.sock``;
- ``pkg/imex/imex.go`` ``Config.Validate``: ``hostManaged`` needs the HostManagedIMEXDaemon
  gate (the chart's ``validateIMEXConfig`` fails the install without it).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Final, Literal

from gpustack.fields import key

Stage = Literal["Alpha", "Beta"]


@dataclass(frozen=True)
class Gate:
    """One gate of ``defaultFeatureGates``: its name, the driver release (SemVer major, minor)
    that added it, its stage, its default and what it does (its comment there, and the driver's
    ``site/content/docs/reference/feature-gates.md``)."""

    name: str
    since: tuple[int, int]
    stage: Stage
    default: bool
    does: str


A: Final[Stage] = "Alpha"
B: Final[Stage] = "Beta"
#: ``pkg/featuregates/featuregates.go`` (dra-driver-nvidia-gpu 95932046), in its order.
GATES: Final = (
    Gate("TimeSlicingSettings", (0, 2), A, False, "Time-slicing settings in a claim's GpuConfig."),
    Gate("MPSSupport", (0, 2), A, False, "MPS sharing in GpuConfig and MigDeviceConfig."),
    Gate("IMEXDaemonsWithDNSNames", (0, 2), B, True, "IMEX daemons find each other by DNS names."),
    Gate("PassthroughSupport", (0, 3), A, False, "GPUs bound to vfio-pci (VfioDeviceConfig)."),
    Gate("DynamicMIG", (0, 3), A, False, "MIG devices made and removed as claims need them."),
    Gate("NVMLDeviceHealthCheck", (0, 3), A, False, "NVML health events (fatal XIDs, a lost GPU)"
         " become device taints in the ResourceSlices."),
    Gate("ComputeDomainCliques", (0, 3), B, True, "IMEX daemons in ComputeDomainClique objects."),
    Gate("CrashOnNVLinkFabricErrors", (0, 3), B, True, "The kubelet plugin stops on NVLink"
         " fabric errors instead of running without the fabric."),
    Gate("DeviceMetadata", (0, 4), A, False, "IOMMU devices for VFIO workloads."),
    Gate("FabricManagerPartitioning", (0, 5), A, False, "Fabric Manager (NVSwitch) partitions"
         " for full-GPU and VFIO claims; needs Fabric Manager with FABRIC_MODE=1."),
    Gate("HostManagedIMEXDaemon", (0, 5), A, False, "Allows dra.imexMode: hostManaged."),
    Gate("DRAListTypeAttributes", (0, 4), A, False, "List-valued device attributes."),
    Gate("ConsumableShares", (0, 5), A, False, "Consumable capacity and several claims per"
         " device in the ResourceSlices."),
)  # fmt: skip
BY_NAME: Final = {g.name: g for g in GATES}

#: The chart's default host IMEX control socket (``resources.computeDomains.imex``).
IMEX_HOST_SOCKET: Final = "/etc/nvidia-imex/imex_ctrl.sock"
ImexMode = Literal["driverManaged", "hostManaged"]


def _gate(name: str) -> bool | None:
    g = BY_NAME[name]
    on = "on" if g.default else "off"
    return key(  # type: ignore[no-any-return]
        name,
        f"{g.does} {g.stage}, {on} by default; in the driver from v{g.since[0]}.{g.since[1]}."
        " Unset: the driver's default (not passed).",
        default=None,
        name=name,
        examples=[not g.default],
    )


@dataclass(frozen=True)
class FeatureGates:
    """NVIDIA's DRA driver feature gates, named as the chart's ``featureGates`` names them;
    each set gate goes into the driver's ``FEATURE_GATES``."""

    TimeSlicingSettings: bool | None = _gate("TimeSlicingSettings")
    MPSSupport: bool | None = _gate("MPSSupport")
    IMEXDaemonsWithDNSNames: bool | None = _gate("IMEXDaemonsWithDNSNames")
    PassthroughSupport: bool | None = _gate("PassthroughSupport")
    DynamicMIG: bool | None = _gate("DynamicMIG")
    NVMLDeviceHealthCheck: bool | None = _gate("NVMLDeviceHealthCheck")
    ComputeDomainCliques: bool | None = _gate("ComputeDomainCliques")
    CrashOnNVLinkFabricErrors: bool | None = _gate("CrashOnNVLinkFabricErrors")
    DeviceMetadata: bool | None = _gate("DeviceMetadata")
    FabricManagerPartitioning: bool | None = _gate("FabricManagerPartitioning")
    HostManagedIMEXDaemon: bool | None = _gate("HostManagedIMEXDaemon")
    DRAListTypeAttributes: bool | None = _gate("DRAListTypeAttributes")
    ConsumableShares: bool | None = _gate("ConsumableShares")

    def values(self) -> dict[str, bool]:
        """The gates the profile sets, as the chart's ``featureGates`` map holds them."""
        return {f.name: value for f in fields(self) if (value := getattr(self, f.name)) is not None}

    def enabled(self, name: str) -> bool:
        """Whether the driver runs with the gate on: its value, else its default."""
        value = getattr(self, name)
        return BY_NAME[name].default if value is None else bool(value)


def imex_mode() -> ImexMode:
    return key(  # type: ignore[no-any-return]
        "IMEX mode",
        "Who runs the nvidia-imex daemons of ComputeDomains: driverManaged, the driver (one"
        " DaemonSet per ComputeDomain; the host's nvidia-imex.service must be masked), or"
        " hostManaged, the host's nvidia-imex.service, which must be running (needs"
        " featureGates.HostManagedIMEXDaemon: true).",
        default="driverManaged",
    )


def imex_host_socket() -> str:
    return key(  # type: ignore[no-any-return]
        "Host IMEX socket",
        "With dra.imexMode: hostManaged, the host nvidia-imex daemon's control socket (its"
        " IMEX_CMD_UNIX_DOMAIN_PATH, with IMEX_CMD_ENABLED=1), under the driver root; the"
        " kubelet plugin asks it whether IMEX is ready before it hands out a channel.",
        default=IMEX_HOST_SOCKET,
        pattern=r"^/",
    )
