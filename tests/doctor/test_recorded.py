"""``gpustack doctor`` on states recorded from a real control plane (tests/e2e/record_doctor.py:
etcd, kube-apiserver, kube-controller-manager and kube-scheduler, the cluster folder applied with
one thing broken, fake GPU and CPU nodes). Each finding must name its cause, in the words of the
API server's own refusal where there is one.

Re-record (the binaries of the e2e tier; about three minutes)::

    KUBEBUILDER_ASSETS=/work/kubebuilder-assets .venv/bin/python -m tests.e2e.record_doctor
"""

from __future__ import annotations

import pytest

from gpustack.doctor.report import diagnose
from gpustack.kube import state
from tests.doctor.test_doctor import profile
from tests.e2e.record_doctor import (
    FIXTURE_SCENARIOS,
    FIXTURES,
    HAND_WRITTEN,
    RECORDED,
    SCENARIOS,
    profile_of,
)

#: scenario -> (subject, check, what its message says, what its hint says), in report order.
EXPECTED: dict[str, list[tuple[str, str, str, str]]] = {
    "runtimeclass-missing": [
        *(
            (
                f"node/{n}",
                "device-plugin-missing",
                "nvidia-device-plugin-daemonset could not create pods: RuntimeClass nvidia "
                "does not exist",
                "kubectl get runtimeclass nvidia",
            )
            for n in ("gpu-0", "gpu-1")
        ),
        (
            "daemonset/gpustack-system/gpu-feature-discovery",
            "pods-not-created",
            "RuntimeClass nvidia does not exist",
            "RuntimeClasses",
        ),
    ],
    "gke-quota": [
        *(
            (
                f"node/{n}",
                "driver-not-ready",
                "nvidia-driver-daemonset could not create pods: the API server admits pods of "
                "system-node-critical in namespace gpustack-system only with a ResourceQuota",
                "cluster.platform: gke",
            )
            for n in ("gpu-0", "gpu-1")
        ),
        *(
            (
                f"daemonset/gpustack-system/{ds}",
                "pods-not-created",
                "ResourceQuota whose scopeSelector names that class",
                "cluster.platform: gke",
            )
            for ds in ("gpu-feature-discovery", "nfd-worker")
        ),
    ],
    # the CPU node cpu-0 gets no advice to carry the (misspelled) label
    "selector-typo": [
        (
            f"node/{n}",
            "node-not-selected",
            "nvidia.com/gpu.presnt=true is missing (cluster.nodeSelector), so no part of the GPU "
            "stack runs on this node; the node has nvidia.com/gpu.present=true: did you mean "
            "nvidia.com/gpu.present?",
            'fix cluster.nodeSelector in the profile: nvidia.com/gpu.present: "true"',
        )
        for n in ("gpu-0", "gpu-1")
    ],
}


def test_every_scenario_is_recorded_and_checked() -> None:
    assert sorted(EXPECTED) == sorted(SCENARIOS)
    assert sorted(p.stem for p in RECORDED.glob("*.json")) == sorted(SCENARIOS)


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_each_finding_names_its_cause(scenario: str) -> None:
    cluster = state.load((RECORDED / f"{scenario}.json").read_text(), scenario)
    found = diagnose(cluster, profile(profile_of(scenario)))
    assert [(d.subject, d.check) for d in found] == [(s, c) for s, c, _, _ in EXPECTED[scenario]]
    for d, (_, _, says, hint) in zip(found, EXPECTED[scenario], strict=True):
        assert says in d.message, d
        assert hint in (d.hint or ""), d


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_the_state_is_what_the_control_plane_wrote(scenario: str) -> None:
    """Recorded, not written: the controllers' own events and the scheduler's bindings."""
    cluster = state.load((RECORDED / f"{scenario}.json").read_text(), scenario)
    reasons = {e.get("reason") for e in cluster.events}
    assert "Scheduled" in reasons and "SuccessfulCreate" in reasons
    refused = scenario != "selector-typo"
    assert ("FailedCreate" in reasons) == refused


def test_every_older_fixture_is_recorded_or_named_hand_written() -> None:
    """tests/doctor/fixtures/: each file is made by the recorder, or is one of those only a
    kubelet could make (HAND_WRITTEN says why)."""
    assert not set(FIXTURE_SCENARIOS) & set(HAND_WRITTEN)
    found = sorted(p.stem for p in FIXTURES.glob("*.json"))
    assert found == sorted({*FIXTURE_SCENARIOS, *HAND_WRITTEN})


@pytest.mark.parametrize("scenario", sorted(FIXTURE_SCENARIOS))
def test_an_older_fixture_is_what_the_control_plane_wrote(scenario: str) -> None:
    """The scheduler bound the stack's pods and the DaemonSet controller made them: events no
    hand-written state carries."""
    cluster = state.load((FIXTURES / f"{scenario}.json").read_text(), scenario)
    reasons = {e.get("reason") for e in cluster.events}
    assert reasons >= {"Scheduled", "SuccessfulCreate"}
