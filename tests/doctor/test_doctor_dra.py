"""``gpustack doctor`` on Pending pods with unallocated ResourceClaims (``claim-unallocated``).

The states are :mod:`tests.doctor.dra_states` (the healthy L4 cluster plus NVIDIA's DeviceClasses,
the simulated driver's ResourceSlices and a claim, one thing broken each); every cause must be
named with what to do, and the scheduler's own message quoted.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpustack.cli import main
from gpustack.doctor.report import diagnose
from gpustack.kube import cel, kubectl, state
from gpustack.plugin.dra import slices
from tests.doctor import dra_states
from tests.doctor.dra_states import DRA_FIXTURES
from tests.doctor.test_doctor import FIXTURES, L4, MIG, profile

#: scenario -> (what the message says, what the hint says); None: no finding.
CAUSES: dict[str, tuple[str, str] | None] = {
    "claim-healthy": None,
    "claim-template-missing": (
        "no ResourceClaim was made from template singel-gpu for claim gpu (resourceclaim "
        'controller: PodResourceClaim gpu: resource claim template "singel-gpu"',
        "kubectl -n ml get resourceclaimtemplate singel-gpu",
    ),
    "claim-class-missing": (
        "claim infer-gpu-x7k2q request gpu: DeviceClass gpu.nvidia.com does not exist",
        "dra.gpus",
    ),
    "claim-no-slices": (
        "no node publishes a ResourceSlice of driver gpu.nvidia.com (DeviceClass gpu.nvidia.com):"
        " the DRA kubelet plugin is not running or not publishing",
        "--field-selector spec.driver=gpu.nvidia.com",
    ),
    "claim-no-match": (
        "no device of DeviceClass gpu.nvidia.com matches the selector `device.attributes['gpu."
        "nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'` (the devices have productName: "
        "'NVIDIA L4')",
        "fix the selector",
    ),
    "claim-all-taken": ("4 match and 4 of them are allocated to other claims", "wait"),
    "claim-unsure": (
        "the selector `device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H')` "
        "is more than gpustack evaluates; it may be the reason",
        "kubectl get resourceslices -o yaml",
    ),
    "claim-not-recorded": (
        "scheduler: 0/3 nodes are available: 1 node(s) had untolerated taint",
        "resourceclaims,resourceslices,deviceclasses",
    ),
}


def test_every_scenario_is_checked_and_its_fixture_is_current() -> None:
    assert sorted(CAUSES) == sorted(dra_states.SCENARIOS)
    assert dra_states.stale() == [], "run python -m tests.doctor.dra_states"


@pytest.mark.parametrize("scenario", sorted(CAUSES))
@pytest.mark.parametrize("path", [L4, MIG], ids=["l4", "mig"])
def test_each_cause_is_named(scenario: str, path: Path) -> None:
    cluster = state.load((DRA_FIXTURES / f"{scenario}.json").read_text(), scenario)
    found = [d for d in diagnose(cluster, profile(path)) if d.subject.startswith("pod/")]
    expected = CAUSES[scenario]
    if expected is None:
        assert found == []
        return
    says, hint = expected
    assert [(d.subject, d.check) for d in found] == [("pod/ml/infer", "claim-unallocated")]
    assert says in found[0].message, found[0].message
    assert hint in (found[0].hint or ""), found[0].hint
    if scenario != "claim-not-recorded":
        assert "scheduler: 0/3 nodes are available" in found[0].message


def test_the_l4_cluster_with_dra_is_otherwise_healthy() -> None:
    """The DRA objects add no node finding: every finding is the pod's."""
    for scenario in dra_states.SCENARIOS:
        cluster = state.load(dra_states.text(scenario), scenario)
        assert [d.check for d in diagnose(cluster, profile(L4))] in (
            [],
            ["claim-unallocated"],
        )


def test_a_typo_of_a_class_names_the_nearest() -> None:
    doc = dra_states.build("claim-no-slices")
    for item in doc["items"]:
        if item["kind"] == "ResourceClaim":
            item["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = "gpu.nvidia.co"
    found = diagnose(state.load(json.dumps(doc)), profile(L4))
    assert "DeviceClass gpu.nvidia.co does not exist" in found[0].message
    assert found[0].hint == "did you mean gpu.nvidia.com?"


def test_a_pod_with_an_allocated_claim_pending_for_another_reason_is_not_this_check() -> None:
    doc = dra_states.build("claim-healthy")
    for item in doc["items"]:
        if item["kind"] == "Pod" and item["metadata"]["name"] == "infer":
            item["status"] = {**item["status"], "phase": "Pending"}
            item["spec"].pop("nodeName")
    assert diagnose(state.load(json.dumps(doc)), profile(L4)) == []


# --- the selectors doctor evaluates, on the simulated driver's devices ------------------------

DEVICE = slices.gpu_device(dra_states.gpus()[0], slices.NodeDriver())
GPU = "gpu.nvidia.com"


@pytest.mark.parametrize(
    ("expr", "verdict"),
    [
        ("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
         True),
        ("device.attributes['gpu.nvidia.com'].type == 'mig'", False),
        ('device.attributes["gpu.nvidia.com"]["productName"] == "NVIDIA L4"', True),
        ("device.attributes['gpu.nvidia.com'].productName != 'NVIDIA L4'", False),
        ("device.attributes['gpu.nvidia.com'].cudaComputeCapability == semver('8.9.0')", True),
        ("device.attributes['gpu.nvidia.com'].architecture == 'Ada Lovelace'", True),
        ("device.attributes['resource.kubernetes.io'].pciBusID == '0000:18:00.0'", True),
        ("device.attributes['gpu.nvidia.com'].profile == '1g.10gb'", False),  # no such attribute
        ("device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA')", None),
        ("device.attributes['gpu.nvidia.com'].type == 'gpu' || true", None),
        ("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('20Gi')) >= 0", None),
        ("device.attributes['gpu.nvidia.com'].type == 'gpu", None),  # unreadable
        (3, None),
    ],
)  # fmt: skip
def test_evaluate_decides_only_the_simple_forms(expr: object, verdict: bool | None) -> None:
    assert cel.evaluate(expr, DEVICE, GPU) is verdict


# --- what doctor runs -------------------------------------------------------------------------


def _fake_kubectl(tmp_path: Path, script: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    fake = tmp_path / "kubectl"
    fake.write_text("#!/bin/sh\n" + script)
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return fake


def test_kubectl_reads_the_dra_kinds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state_file = DRA_FIXTURES / "claim-no-match.json"
    _fake_kubectl(tmp_path, f'echo "$@" >> {tmp_path}/args\ncat {state_file}\n', monkeypatch)
    result = CliRunner().invoke(main, ["doctor", "--profile", str(L4), "--kubectl"])
    assert result.exit_code == 1 and "pod/ml/infer: claim-unallocated: " in result.output
    calls = (tmp_path / "args").read_text().splitlines()
    assert calls == [" ".join(kubectl.ARGS)]
    assert "resourceclaims,resourceslices,deviceclasses" in calls[0]


def test_a_cluster_without_the_dra_api_is_read_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kubectl refuses the whole list when one kind is not served (before 1.34): doctor reads
    the core kinds alone, and an old state still loads."""
    state_file = FIXTURES / "healthy.json"
    _fake_kubectl(
        tmp_path,
        f'echo "$@" >> {tmp_path}/args\n'
        "case \"$*\" in *resourceclaims*) echo 'error: the server doesn'\"'\"'t have a resource "
        'type "resourceclaims"\' >&2; exit 1;; esac\n'
        f"cat {state_file}\n",
        monkeypatch,
    )
    result = CliRunner().invoke(main, ["doctor", "--profile", str(L4), "--kubectl"])
    assert (result.exit_code, result.output) == (0, "healthy: 3 nodes, no Pending GPU pod\n")
    calls = (tmp_path / "args").read_text().splitlines()
    assert calls == [" ".join(a) for a in (kubectl.ARGS, kubectl.DRA_ARGS, kubectl.CORE_ARGS)]


def test_a_cluster_without_device_taint_rules_keeps_its_claims(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DeviceTaintRules are served only where device taints are: a cluster that serves the rest
    of DRA is read with its claims, slices and classes all the same."""
    state_file = DRA_FIXTURES / "claim-no-match.json"
    _fake_kubectl(
        tmp_path,
        f'echo "$@" >> {tmp_path}/args\n'
        "case \"$*\" in *devicetaintrules*) echo 'error: the server doesn'\"'\"'t have a resource "
        'type "devicetaintrules"\' >&2; exit 1;; esac\n'
        f"cat {state_file}\n",
        monkeypatch,
    )
    result = CliRunner().invoke(main, ["doctor", "--profile", str(L4), "--kubectl"])
    assert result.exit_code == 1 and "pod/ml/infer: claim-unallocated: " in result.output
    calls = (tmp_path / "args").read_text().splitlines()
    assert calls == [" ".join(kubectl.ARGS), " ".join(kubectl.DRA_ARGS)]


def test_another_kubectl_failure_is_still_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_kubectl(tmp_path, "echo 'error: You must be logged in' >&2; exit 1\n", monkeypatch)
    with pytest.raises(kubectl.KubectlError, match="exit 1.*logged in"):
        kubectl.fetch()
