"""A data table, and reads as one: the registry's rows for the DRA driver's feature gates and
IMEX mode (``dra.featureGates``, ``dra.imexMode``)."""

from __future__ import annotations

from gpustack.profile.rules import dra_gates
from gpustack.profile.rules.rule import Rule

RULES: tuple[Rule, ...] = (
    Rule(
        id="dra-feature-gate-exclusive",
        check=dra_gates.dra_feature_gate_exclusive,
        section="dra",
        summary="no two DRA driver gates NVIDIA documents as exclusive are on together"
        " (DynamicMIG with PassthroughSupport, NVMLDeviceHealthCheck or MPSSupport;"
        " PassthroughSupport or MPSSupport with NVMLDeviceHealthCheck; MPSSupport with"
        " ConsumableShares)",
        fix="turn one of the two gates off",
    ),
    Rule(
        id="dra-feature-gate-requires",
        check=dra_gates.dra_feature_gate_requires,
        section="dra",
        summary="a DRA driver gate has the gate it needs (ComputeDomainCliques:"
        " IMEXDaemonsWithDNSNames; DeviceMetadata: PassthroughSupport; `dra.imexMode:"
        " hostManaged`: HostManagedIMEXDaemon)",
        fix="turn the needed gate on, or the gate (or host-managed IMEX) off",
    ),
    Rule(
        id="dra-feature-gate-needs-kubernetes",
        check=dra_gates.dra_feature_gate_needs_kubernetes,
        section="dra",
        summary="a DRA driver gate runs on a Kubernetes release whose gate it needs is on by"
        " default (NVMLDeviceHealthCheck: DRADeviceTaints, DynamicMIG: DRAPartitionableDevices,"
        " ConsumableShares: DRAConsumableCapacity, each from 1.36; DRAListTypeAttributes: the"
        " Kubernetes gate of that name)",
        fix="set the gate false, or accept it where the cluster turns the Kubernetes gate on",
        acceptable=True,
    ),
    Rule(
        id="dra-feature-gate-in-version",
        check=dra_gates.dra_feature_gate_in_version,
        section="dra",
        summary="every gate `dra.featureGates` sets exists in the pinned `dra.version`",
        fix="remove the gate, or raise `dra.version`",
    ),
    Rule(
        id="dra-feature-gate-rendered",
        check=dra_gates.dra_feature_gate_rendered,
        section="dra",
        summary="no DRA driver gate whose chart additions gpustack does not render"
        " (PassthroughSupport: host mounts; MPSSupport: the Deployments Role)",
        fix="leave PassthroughSupport and MPSSupport off",
    ),
)
