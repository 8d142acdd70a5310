"""``gpustack doctor`` on recorded ``kubectl get nodes,pods,daemonsets,events -A -o json`` state.

The fixtures (fixtures/README.md): ``healthy.json`` (a control-plane node and two GPU nodes with
the whole stack Ready and a GPU pod running) and one fixture per failure, each the healthy cluster
with that one thing broken. Most are recorded from a real control plane
(tests/e2e/record_doctor.py ``FIXTURE_SCENARIOS``); those whose broken thing is a container's
state, which only a kubelet reports, are written by hand in the same shape (``HAND_WRITTEN``).
The healthy fixtures are every check's passing case.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpustack.checker import check_paths
from gpustack.cli import main
from gpustack.doctor.report import diagnose
from gpustack.kube import kubectl, state
from gpustack.profile.model import Profile

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
L4 = HERE / "profile.yaml"
MIG = HERE / "profile-mig.yaml"


def profile(path: Path) -> Profile:
    result = check_paths([path])
    assert result.ok, result.issues
    return result.profiles[0].profile


def run(fixture: str, path: Path = L4) -> list[tuple[str, str]]:
    cluster = state.load((FIXTURES / f"{fixture}.json").read_text(), fixture)
    return [(d.subject, d.check) for d in diagnose(cluster, profile(path))]


CASES = [
    ("node-not-selected", L4, [("node/gpu-2", "node-not-selected")], "nvidia.com/gpu.present=true"),
    ("driver-not-ready", L4, [("node/gpu-2", "driver-not-ready")], "kernel module is not loaded"),
    ("toolkit-not-ready", L4, [("node/gpu-1", "toolkit-not-ready")], "config.toml"),
    ("device-plugin-missing", L4, [("node/gpu-2", "device-plugin-missing")], "dedicated=ml"),
    ("device-plugin-crashloop", L4, [("node/gpu-1", "device-plugin-crashloop")], "last exit 2"),
    ("device-plugin-not-ready", L4, [("node/gpu-1", "device-plugin-not-ready")], "PodInitializing"),
    ("allocatable-missing", L4, [("node/gpu-1", "allocatable-missing")], "nvidia.com/gpu is 0"),
    ("mig-not-applied", MIG, [("node/a100-1", "mig-not-applied")], "perNode is 7"),
]


@pytest.mark.parametrize(("fixture", "path", "expected", "says"), CASES, ids=[c[0] for c in CASES])
def test_one_finding_per_broken_thing(
    fixture: str, path: Path, expected: list[tuple[str, str]], says: str
) -> None:
    cluster = state.load((FIXTURES / f"{fixture}.json").read_text(), fixture)
    found = diagnose(cluster, profile(path))
    assert [(d.subject, d.check) for d in found] == expected
    assert says in found[0].message and found[0].hint


@pytest.mark.parametrize(("fixture", "path"), [("healthy", L4), ("mig-healthy", MIG)])
def test_a_healthy_cluster_has_no_findings(fixture: str, path: Path) -> None:
    assert run(fixture, path) == []


def test_the_first_failing_stage_is_reported_per_node() -> None:
    """A node without a Ready driver also has no plugin and no GPUs: the driver is the cause."""
    doc = json.loads((FIXTURES / "driver-not-ready.json").read_text())
    for item in doc["items"]:
        if item["kind"] == "Node" and item["metadata"]["name"] == "gpu-2":
            item["status"]["allocatable"].pop("nvidia.com/gpu")
    found = diagnose(state.load(json.dumps(doc)), profile(L4))
    assert [(d.subject, d.check) for d in found] == [("node/gpu-2", "driver-not-ready")]


def test_pending_gpu_pods() -> None:
    cluster = state.load((FIXTURES / "pod-pending.json").read_text())
    found = {d.subject: d for d in diagnose(cluster, profile(L4))}
    # in the order kubectl lists the pods (by name)
    assert list(found) == ["pod/ml/no-toleration", "pod/ml/too-big", "pod/ml/wrong-pool"]
    assert "nodes with it: gpu-1 (2), gpu-2 (2)" in found["pod/ml/no-toleration"].message
    assert "excluded by taint nvidia.com/gpu:NoSchedule" in found["pod/ml/no-toleration"].message
    assert "excluded by nodeSelector cloud.google.com" in found["pod/ml/wrong-pool"].message
    too_big = found["pod/ml/too-big"]
    assert "exceeds every node (most: 2)" in too_big.message
    assert "scheduler: 0/3 nodes are available" in too_big.message
    assert too_big.hint == "ask for at most 2 nvidia.com/gpu per pod"
    # the running GPU pod of the healthy cluster is no finding
    assert run("healthy") == []


def test_not_a_kubectl_list_is_one_clear_error() -> None:
    with pytest.raises(state.StateError, match="not a kubectl List"):
        state.load('{"kind": "Node"}', "x.json")
    with pytest.raises(state.StateError, match="not JSON"):
        state.load("nodes:", "x.json")


# --- the command -------------------------------------------------------------------------------


def doctor(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["doctor", *args], input=stdin)
    return result.exit_code, result.output


def test_cli_reads_a_file_or_stdin_and_exits_like_validate() -> None:
    code, out = doctor("--profile", str(L4), "--state", str(FIXTURES / "healthy.json"))
    assert (code, out) == (0, "healthy: 3 nodes, no Pending GPU pod\n")
    text = (FIXTURES / "allocatable-missing.json").read_text()
    code, out = doctor("--profile", str(L4), "--state", "-", "--format", "json", stdin=text)
    doc = json.loads(out)
    assert code == 1 and [f["check"] for f in doc["findings"]] == ["allocatable-missing"]
    assert doctor("--profile", str(L4))[0] == 2  # neither --state nor --kubectl
    code, out = doctor("--profile", str(L4), "--state", "-", stdin="[]")
    assert code == 1 and "not a kubectl List" in out


def test_kubectl_is_run_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in kubectl on PATH records its arguments and prints a recorded state."""
    fake = tmp_path / "kubectl"
    fake.write_text(
        f'#!/bin/sh\necho "$@" > {tmp_path}/args\ncat {FIXTURES / "driver-not-ready.json"}\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    code, out = doctor("--profile", str(L4), "--kubectl", "--context", "prod")
    assert code == 1 and out.startswith("node/gpu-2: driver-not-ready: ")
    args = (tmp_path / "args").read_text().split()
    assert args == ["--context", "prod", *kubectl.ARGS]


def test_kubectl_missing_is_one_clear_error() -> None:
    with pytest.raises(kubectl.KubectlError, match="not found on PATH"):
        kubectl.fetch("no-such-kubectl-here")


def test_logs_of_a_previous_container_only_after_a_crash() -> None:
    l4 = profile(L4)
    crash = diagnose(state.load((FIXTURES / "device-plugin-crashloop.json").read_text(), "c"), l4)
    ready = diagnose(state.load((FIXTURES / "device-plugin-not-ready.json").read_text(), "r"), l4)
    assert (crash[0].hint or "").endswith("--previous")
    assert "--previous" not in (ready[0].hint or "")


# --- why the API server refused a pod (FailedCreate) -------------------------------------------

#: The API server's own FailedCreate messages (the DaemonSet and Job controllers prefix
#: ``Error creating:``), and what the cause and hint must name.
REFUSALS = [
    (
        'Error creating: pods "nvidia-driver-x" is forbidden: insufficient quota to match these'
        " scopes: [{PriorityClass In [system-node-critical system-cluster-critical]}]",
        "ResourceQuota whose scopeSelector names that class",
        "cluster.platform: gke",
    ),
    (
        'Error creating: pods "x" is forbidden: exceeded quota: compute, requested: pods=1,'
        " used: pods=10, limited: pods=10",
        "ResourceQuota compute",
        "describe resourcequota compute",
    ),
    (
        'Error creating: pods "x" is forbidden: pod rejected: RuntimeClass "nvidia" not found',
        "RuntimeClass nvidia does not exist",
        "kubectl get runtimeclass nvidia",
    ),
    (
        'Error creating: pods "x" is forbidden: violates PodSecurity "baseline:latest":'
        ' privileged (container "driver" must not set securityContext.privileged=true)',
        "PodSecurity baseline",
        "pod-security.kubernetes.io/enforce=privileged",
    ),
    (
        'Error creating: pods "x" is forbidden: unable to validate against any security context'
        ' constraint: [provider "anyuid": Forbidden: not usable by user or serviceaccount]',
        "SecurityContextConstraint",
        "add-scc-to-user",
    ),
    (
        'Error creating: admission webhook "validation.gatekeeper.sh" denied the request:'
        " [privileged] no privileged containers",
        "webhook validation.gatekeeper.sh",
        "exempt namespace gpustack-system",
    ),
    ("Error creating: something new", "refuses it: something new", "get events"),
]


@pytest.mark.parametrize(("message", "cause", "hint"), REFUSALS, ids=[r[1] for r in REFUSALS])
def test_a_refusal_names_its_cause(message: str, cause: str, hint: str) -> None:
    from gpustack.doctor.created import explain

    got_cause, got_hint = explain(message, "gpustack-system", profile(L4))
    assert cause in got_cause and hint in got_hint


def _with_label(doc: dict[str, Any], node: str, key: str, value: str | None) -> dict[str, Any]:
    for item in doc["items"]:
        if item["kind"] == "Node" and item["metadata"]["name"] == node:
            if value is None:
                item["metadata"]["labels"].pop(key, None)
            else:
                item["metadata"]["labels"][key] = value
    return doc


@pytest.mark.parametrize(
    ("key", "value", "says", "hint"),
    [
        # a typo'd key the node's labels are close to: name the node's label, fix the profile
        (
            "nvidia.com/gpu.presnt",
            "true",
            "did you mean nvidia.com/gpu.present?",
            "fix cluster.nodeSelector",
        ),
        # a typo'd value
        ("nvidia.com/gpu.present", "ture", 'did you mean "true"?', "fix cluster.nodeSelector"),
    ],
)
def test_a_typo_in_the_selector_is_named_on_gpu_nodes_only(
    key: str, value: str, says: str, hint: str
) -> None:
    # validate refuses the typo (node-selector-label-known/-value); a profile from before that
    # check still reaches a cluster, and doctor must then name the typo
    l4 = profile(L4)
    typo = replace(l4, cluster=replace(l4.cluster, node_selector=((key, value),)))
    found = diagnose(state.load((FIXTURES / "healthy.json").read_text()), typo)
    # cp-1 (no NVIDIA PCI device, no GFD label) gets no advice to put the label on it
    assert [d.subject for d in found] == ["node/gpu-1", "node/gpu-2"]
    assert says in found[0].message and hint in (found[0].hint or "")


def test_no_gpu_node_at_all_is_one_cluster_finding() -> None:
    doc = json.loads((FIXTURES / "node-not-selected.json").read_text())
    for node in ("gpu-1", "gpu-2"):
        for item in doc["items"]:
            if item["kind"] == "Node" and item["metadata"]["name"] == node:
                item["metadata"]["labels"] = {"kubernetes.io/hostname": node}
                item["status"]["capacity"].pop("nvidia.com/gpu", None)
    found = diagnose(state.load(json.dumps(doc)), profile(L4))
    assert [(d.subject, d.check) for d in found][:1] == [("cluster", "node-not-selected")]
    assert "pci-10de.present" in found[0].message


@pytest.mark.parametrize(
    ("labels", "says", "hint"),
    [
        ({}, "no nvidia.com/mig.config label", "nvidia.com/mig.config=default --overwrite"),
        (
            {"nvidia.com/mig.config": "all-disabled"},
            "nvidia.com/mig.config=all-disabled",
            "nvidia.com/mig.config=default --overwrite",
        ),
        (
            {"nvidia.com/mig.config": "default", "nvidia.com/mig.config.state": "failed"},
            "failed to apply",
            "logs",
        ),
        (
            {"nvidia.com/mig.config": "default", "nvidia.com/mig.config.state": "pending"},
            "mig.config.state=pending",
            "re-registers",
        ),
    ],
)
def test_mig_points_at_the_mig_manager_and_its_label(
    labels: dict[str, str], says: str, hint: str
) -> None:
    doc = json.loads((FIXTURES / "mig-not-applied.json").read_text())
    for key in ("nvidia.com/mig.config", "nvidia.com/mig.config.state"):
        _with_label(doc, "a100-1", key, labels.get(key))
    found = diagnose(state.load(json.dumps(doc)), profile(MIG))
    assert [(d.subject, d.check) for d in found] == [("node/a100-1", "mig-not-applied")]
    assert says in found[0].message and hint in (found[0].hint or "")
    assert "nvidia-smi" not in (found[0].hint or "")


def _job_refused(doc: dict[str, Any], message: str) -> dict[str, Any]:
    doc["items"].append(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "train.1", "namespace": "ml"},
            "involvedObject": {"kind": "Job", "name": "train", "namespace": "ml"},
            "reason": "FailedCreate",
            "type": "Warning",
            "message": message,
            "lastTimestamp": "2026-01-01T00:00:00Z",
        }
    )
    return doc


def test_a_refused_job_is_a_finding_until_its_pod_exists() -> None:
    quota = (
        'Error creating: pods "train-x" is forbidden: exceeded quota: gpus, requested: '
        "requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=4, "
        "limited: requests.nvidia.com/gpu=4"
    )
    doc = _job_refused(json.loads((FIXTURES / "healthy.json").read_text()), quota)
    found = diagnose(state.load(json.dumps(doc)), profile(L4))
    assert [(d.subject, d.check) for d in found] == [("job/ml/train", "pods-not-created")]
    assert "ResourceQuota gpus of namespace ml is used up" in found[0].message
    assert "kubectl -n ml describe resourcequota gpus" in (found[0].hint or "")
    # once the controller made the pod (the quota was raised), the old event is history
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "train-x", "namespace": "ml", "labels": {"job-name": "train"}},
        "spec": {"containers": [{"name": "c"}]},
        "status": {"phase": "Running"},
    }
    doc["items"].append(pod)
    assert diagnose(state.load(json.dumps(doc)), profile(L4)) == []
