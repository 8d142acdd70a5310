"""The doctor check registry: one row per check, the only place its ID and meaning are given.

Like :mod:`gpustack.profile.rules.registry` for ``validate``: the ID a diagnosis prints and what
it means are facts about one check, kept side by side. The components' readiness checks come
from their rows in :mod:`gpustack.profile.components` (a new component with a ``readiness`` gets its
check here without an edit). A :class:`~gpustack.doctor.finding.Diagnosis` with an ID not
registered here is refused when it is made, and a test keeps the docs' list of checks and the
recorded failure states in step with this table.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpustack.profile import components


@dataclass(frozen=True)
class DoctorCheck:
    """One check: ``id`` as printed, ``subject`` (``node``, ``pod``, ``controller`` or
    ``cluster``), and what it finds."""

    id: str
    subject: str
    summary: str


def _readiness() -> tuple[DoctorCheck, ...]:
    rows = []
    for _, r in components.readiness_stages():
        if r.plugin:
            rows += [
                DoctorCheck(r.check, "node", f"no {r.what} pod on the node, and why"),
                DoctorCheck(
                    "device-plugin-crashloop", "node", f"the {r.what} pod is crash-looping"
                ),
                DoctorCheck(
                    "device-plugin-not-ready", "node", f"the {r.what} pod is not Ready (yet)"
                ),
            ]
        else:
            rows.append(
                DoctorCheck(r.check, "node", f"the {r.what} pod is missing or not Ready, and why")
            )
    return tuple(rows)


#: Every check, in the order ``gpustack doctor`` runs them on a node, then per Pending pod.
CHECKS: tuple[DoctorCheck, ...] = (
    DoctorCheck("node-not-selected", "node", "a GPU node lacks a label of cluster.nodeSelector"),
    *_readiness(),
    DoctorCheck(
        "allocatable-missing",
        "node",
        "the node offers none of a resource its plugin config advertises",
    ),
    DoctorCheck("mig-not-applied", "node", "fewer MIG devices than gpus.mig x perNode"),
    DoctorCheck(
        "devices-tainted",
        "node",
        "a DRA driver tainted every device of a node's ResourceSlice (NVIDIA's: GPU lost, XID)",
    ),
    DoctorCheck(
        "device-taint-rule",
        "cluster",
        "a DeviceTaintRule keeps the devices it selects from claims (NoSchedule, NoExecute)",
    ),
    DoctorCheck("pod-pending", "pod", "why a Pending GPU pod fits no node"),
    DoctorCheck(
        "claim-unallocated",
        "pod",
        "why a Pending pod's ResourceClaim gets no device (no claim, no DeviceClass, no "
        "ResourceSlice of its driver, no device that matches, all tainted, all taken)",
    ),
    DoctorCheck(
        "pods-not-created",
        "controller",
        "why the API server refuses a Job's or other controller's pods (FailedCreate)",
    ),
)


def ids() -> tuple[str, ...]:
    return tuple(c.id for c in CHECKS)


def get(check_id: str) -> DoctorCheck:
    """The registered check ``check_id``; :class:`KeyError` naming the registry otherwise."""
    for check in CHECKS:
        if check.id == check_id:
            return check
    raise KeyError(f"doctor check {check_id!r} is not registered in gpustack.doctor.checks")
