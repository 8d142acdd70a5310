"""Every example cluster folder on a real control plane (see controlplane.py): it applies in one
``kubectl apply --server-side`` pass with no error and no FailedCreate event, a GPU node gets the
whole stack at each stage of its life, a CPU node none of it, every example Job is bound once GPUs
are advertised, and each ServiceAccount may do exactly what its component's code calls.

One control plane serves every folder in turn (each folder is removed before the next); folders
for GKE get one with GKE's quota admission for critical pods. Generated variants of the examples
(tests/e2e/variants.py) follow the committed folders.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpustack import dra_upstream
from gpustack.doctor.claims import diagnose_claims
from gpustack.kube import kubectl as doctor_kubectl
from gpustack.kube import state as doctor_state
from tests.e2e import access, dra
from tests.e2e.controlplane import ControlPlane
from tests.e2e.folder import STAGES, Folder, folders
from tests.e2e.rollout import (
    CPU_NODE,
    Observed,
    expected_placement,
    rollout,
    teardown,
    until,
)
from tests.e2e.variants import VARIANTS


def is_gke(folder: Folder) -> bool:
    """The folder meets GKE's admission (see :meth:`Folder.on_gke`)."""
    return folder.on_gke()


#: Every committed cluster folder, then every generated variant (by name).
CASES: list[Path | str] = [*folders(), *VARIANTS]


@pytest.fixture(scope="module", params=CASES, ids=lambda c: getattr(c, "name", c))
def deployed(request: pytest.FixtureRequest) -> Iterator[tuple[ControlPlane, Folder, Observed]]:
    if isinstance(request.param, Path):
        folder = Folder.load(request.param)
    else:
        root: Path = request.getfixturevalue("variants_root")
        folder = Folder.load(
            root / "dist" / "clusters" / request.param,
            root / "profiles",
            VARIANTS[request.param].node_labels,
        )
    fixture = "gke_control_plane" if is_gke(folder) else "control_plane"
    cp: ControlPlane = request.getfixturevalue(fixture)
    try:
        seen = rollout(cp, folder)
        yield cp, folder, seen
    finally:
        teardown(cp, folder)


def test_applies_in_one_pass(deployed: tuple[ControlPlane, Folder, Observed]) -> None:
    _, folder, seen = deployed
    assert seen.apply_rc == 0, f"prerequisites {seen.prerequisites}:\n{seen.apply_stderr}"
    assert "error" not in seen.apply_stderr.lower(), seen.apply_stderr


def test_sync_clean_the_diff_is_empty_and_a_second_apply_changes_nothing(
    deployed: tuple[ControlPlane, Folder, Observed],
) -> None:
    """Issue #35 item 4: after the rollout, ``kubectl diff --server-side`` of the folder reports
    nothing (exit 0: no difference; 1: differences) and applying it again bumps no object's
    generation, so Argo CD with server-side diff (and Flux, which applies server-side) shows
    the folder in sync and rolls nothing on a re-sync."""
    _, folder, seen = deployed
    assert seen.diff_rc == 0, f"{folder.name}: kubectl diff --server-side:\n{seen.diff_out[-4000:]}"
    assert seen.regenerated == [], f"{folder.name}: a second apply changed {seen.regenerated}"


def test_no_failed_create(deployed: tuple[ControlPlane, Folder, Observed]) -> None:
    _, folder, seen = deployed
    assert seen.failed_create == []


@pytest.mark.parametrize("stage", STAGES)
def test_gpu_node_runs_the_stack(
    deployed: tuple[ControlPlane, Folder, Observed], stage: str
) -> None:
    _, folder, seen = deployed
    want = expected_placement(folder)
    for node in folder.pools():
        got = seen.placed[stage][node]
        missing, extra = sorted(want[node] - got), sorted(got - want[node])
        assert got == want[node], f"{stage} node {node}: missing {missing}, extra {extra}"


def test_cpu_node_runs_none_of_the_gpu_stack(
    deployed: tuple[ControlPlane, Folder, Observed],
) -> None:
    _, folder, seen = deployed
    for stage in STAGES:
        assert seen.placed[stage][CPU_NODE] == expected_placement(folder)[CPU_NODE], stage
        # What landed, not what was expected: a CPU node (of the selector's region and zone)
        # gets no GPU stack pod unless the profile selects every node (`nodeSelector: {}`).
        if folder.profile.cluster.node_selector:
            landed = sorted(seen.placed[stage][CPU_NODE] & folder.gpu_stack())
            assert landed == [], f"{stage}: the GPU stack on a CPU node: {landed}"


def test_every_job_is_bound_once_gpus_are_advertised(
    deployed: tuple[ControlPlane, Folder, Observed],
) -> None:
    _, folder, seen = deployed
    assert seen.jobs_bound == folder.jobs()
    assert seen.unbound == []


def test_service_accounts_may_do_what_their_code_calls_and_nothing_more(
    deployed: tuple[ControlPlane, Folder, Observed],
) -> None:
    cp, folder, _ = deployed
    other = "default"
    for (ns, sa), want in access.expected(folder).items():
        baseline = access.live(cp, ns, access.NOBODY, ns)
        got_home = access.live(cp, ns, sa, ns) - baseline
        got_away = access.live(cp, ns, sa, other) - access.live(cp, ns, access.NOBODY, other)
        assert got_home == want["cluster"] | want["namespace"], f"{ns}/{sa} in {ns}"
        assert got_away == want["cluster"], f"{ns}/{sa} in namespace {other}"
        for grant in sorted(want["cluster"] | want["namespace"]):
            assert access.can_i(cp, ns, sa, grant, ns), f"{ns}/{sa} cannot {grant}"
        for grant in sorted(want["namespace"] - want["cluster"]):
            assert not access.can_i(cp, ns, sa, grant, other), f"{ns}/{sa} can {grant} in {other}"
    for ns, grants in access.namespace_grants(folder).items():
        # a resource this control plane does not serve (OpenShift's SCCs): the rules review
        # answers from RBAC alone, where `can-i` would ask discovery first
        missing = grants - access.live(cp, ns, access.NOBODY, ns)
        assert not missing, f"the accounts of {ns} may not {sorted(missing)}"


def test_a_claim_no_device_matches_stays_pending_with_the_schedulers_reason(
    deployed: tuple[ControlPlane, Folder, Observed],
) -> None:
    cp, folder, _ = deployed
    if not folder.dra_nodes() or not folder.profile.dra.gpus:
        pytest.skip("the folder's DRA driver hands out no GPUs")
    namespace = folder.profile.cluster.namespace
    pod = dra.unsatisfiable_claim(cp, namespace)

    def reason() -> str:
        events = json.loads(cp.kubectl("get", "events", "-n", namespace, "-o", "json"))["items"]
        return " ".join(
            e["message"]
            for e in events
            if e["involvedObject"]["name"] == pod and e.get("reason") == "FailedScheduling"
        )

    until(lambda: bool(reason()), seconds=30)
    assert cp.kubectl("get", "pod", pod, "-n", namespace, "-o", "jsonpath={.spec.nodeName}") == ""
    assert "cannot allocate all claims" in reason(), reason()
    # gpustack doctor, on what this control plane holds, names the selector and what the
    # published devices have instead (and quotes the scheduler); it serves no DeviceTaintRules
    cluster = doctor_state.load(cp.kubectl(*doctor_kubectl.DRA_ARGS), "e2e")
    found = [d for d in diagnose_claims(cluster) if d.subject == f"pod/{namespace}/{pod}"]
    assert [d.check for d in found] == ["claim-unallocated"], found
    says = found[0].message
    if folder.profile.gpus.mig:  # every GPU split: the slices hold MIG devices only
        assert f"none of DeviceClass {dra_upstream.GPU_DEVICE_CLASS}" in says, says
    else:
        assert "matches the selector `device.attributes['gpu.nvidia.com'].productName" in says, says
        assert "(the devices have productName: 'NVIDIA " in says, says
    assert "cannot allocate all" in says, says
