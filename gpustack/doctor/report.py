"""Run the diagnosis: every check module, in order (:data:`DIAGNOSES`). The report is rendered
by :func:`gpustack.report.render_doctor`, with validate's and lint's."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from gpustack.doctor.claims import diagnose_claims
from gpustack.doctor.created import diagnose_refusals
from gpustack.doctor.device_taints import diagnose_device_taints
from gpustack.doctor.finding import Diagnosis
from gpustack.doctor.nodes import diagnose_nodes
from gpustack.doctor.pending import diagnose_pending
from gpustack.kube.state import ClusterState
from gpustack.profile.model import Profile


def _pending(state: ClusterState, profile: Profile) -> Iterator[Diagnosis]:
    return diagnose_pending(state)


def _claims(state: ClusterState, profile: Profile) -> Iterator[Diagnosis]:
    return diagnose_claims(state)


def _device_taints(state: ClusterState, profile: Profile) -> Iterator[Diagnosis]:
    return diagnose_device_taints(state)


#: The check modules, in the order they report: nodes (in the order kubectl lists them), then
#: ResourceSlices whose devices are all tainted and DeviceTaintRules, then Pending GPU pods, then
#: Pending pods with unallocated ResourceClaims, then controllers whose pods the API server
#: refuses. A test finds every ``diagnose_*`` module of the package here.
DIAGNOSES: tuple[Callable[[ClusterState, Profile], Iterator[Diagnosis]], ...] = (
    diagnose_nodes,
    _device_taints,
    _pending,
    _claims,
    diagnose_refusals,
)


def diagnose(state: ClusterState, profile: Profile) -> list[Diagnosis]:
    """Every check module's findings, in :data:`DIAGNOSES` order."""
    return [d for run in DIAGNOSES for d in run(state, profile)]
