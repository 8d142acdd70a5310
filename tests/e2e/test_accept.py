"""The acceptance run (``gpustack accept manifests``, gpustack/accept/) on a real control plane:
for every example cluster folder, after the tier's rollout (rollout.py: the folder applied, GPU
nodes advertised), the acceptance objects written for the live cluster's state pass the API
server's strict field validation and admission, and each acceptance Job's pods are bound one to
each GPU node of the plugin config it targets, none to the CPU node.

Every acceptance Job requests all GPUs of its nodes, so the Jobs run one after another: each is
applied once the previous one's pods have all been placed and have finished (reported
``Succeeded``, as a kubelet would once the check exits 0). Applied all at once, the Jobs compete
for the same GPUs, and since the scheduler's required pod anti-affinity does not count finished
pods, a Job's later pod can land on a node where its sibling already finished (seen here on
h100-training: the devices Job bound twice to one node, never to another); the run must be applied
Job by Job. The example Jobs have finished the same way before.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
import yaml

from gpustack.accept.manifests import COMPONENT, JOB_LABEL
from tests.e2e.controlplane import ControlPlane
from tests.e2e.folder import PROFILES, Folder, folders
from tests.e2e.rollout import CPU_NODE, FIELD_MANAGER, rollout, teardown
from tests.e2e.test_clusters import is_gke

#: How long the acceptance Jobs get to have every pod bound once, on a busy machine.
BIND_SECONDS: Final = 120.0
SELECTOR: Final = f"app.kubernetes.io/component={COMPONENT}"


def _gpustack(*args: str) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("gpustack")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=120)


def _pods(cp: ControlPlane, ns: str, selector: str | None = None) -> list[dict[str, Any]]:
    args = ["get", "pods", "-n", ns, "-o", "json"] + (["-l", selector] if selector else [])
    return list(json.loads(cp.kubectl(*args))["items"])


def _succeed(cp: ControlPlane, pod: dict[str, Any]) -> None:
    """What a kubelet reports once every container exited 0."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    done = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now,
                           "finishedAt": now}}  # fmt: skip
    body = {
        "status": {
            "phase": "Succeeded",
            "startTime": now,
            "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
                {
                    "type": "Ready",
                    "status": "False",
                    "reason": "PodCompleted",
                    "lastTransitionTime": now,
                },
            ],
            "containerStatuses": [
                {
                    "name": c["name"],
                    "ready": False,
                    "restartCount": 0,
                    "image": c["image"],
                    "imageID": "",
                    "state": done,
                }
                for c in pod["spec"]["containers"]
            ],
        }
    }
    meta = pod["metadata"]
    cp.kubectl(
        "patch", "pod", meta["name"], "-n", meta["namespace"], "--subresource=status",
        "--type=merge", "-p", json.dumps(body),
    )  # fmt: skip


def _finish_examples(cp: ControlPlane, folder: Folder) -> None:
    """The example Jobs ran to completion (their pods hold the GPUs until then)."""
    for ns, _job in folder.jobs():
        for pod in _pods(cp, ns):
            if "job-name" in pod["metadata"].get("labels", {}) and pod["spec"].get("nodeName"):
                _succeed(cp, pod)


@pytest.fixture(scope="module", params=folders(), ids=lambda p: p.name)
def accepted(request: pytest.FixtureRequest) -> Iterator[tuple[Folder, dict[str, Any]]]:
    folder = Folder.load(request.param)
    cp: ControlPlane = request.getfixturevalue(
        "gke_control_plane" if is_gke(folder) else "control_plane"
    )
    try:
        seen = rollout(cp, folder)
        assert seen.apply_rc == 0, seen.apply_stderr
        _finish_examples(cp, folder)
        yield folder, _accept(cp, folder, request.getfixturevalue("tmp_path_factory"))
    finally:
        cp.kubectl("delete", "jobs,services,networkpolicies,configmaps", "-A", "-l", SELECTOR,
                   "--cascade=orphan", "--ignore-not-found", check=False)  # fmt: skip
        teardown(cp, folder)


def _accept(cp: ControlPlane, folder: Folder, tmp: pytest.TempPathFactory) -> dict[str, Any]:
    """Write the acceptance objects for the live state, apply them strictly, and run their pods
    to completion one at a time per node; what was seen."""
    ns = folder.profile.cluster.namespace
    state = tmp.mktemp("accept") / "state.json"
    state.write_text(cp.kubectl("get", "nodes,pods,daemonsets,events", "-A", "-o", "json"))
    # A profile that selects every node (simulated GPUs) would count the CPU node as a GPU node.
    count = ["--state", str(state)] if folder.profile.cluster.node_selector else [
        "--nodes", str(sum(1 for pool in folder.pools().values() if pool is None))]  # fmt: skip
    written = _gpustack("accept", "manifests", str(PROFILES / f"{folder.name}.yaml"), *count)
    assert written.returncode == 0, written.stderr
    # Strict validation and admission of the whole stream, as `kubectl apply -f -` would send it.
    checked = cp.run(
        "apply", "--server-side", f"--field-manager={FIELD_MANAGER}", "--validate=strict",
        "--dry-run=server", "-f", "-", stdin=written.stdout,
    )  # fmt: skip
    objects = [o for o in yaml.safe_load_all(written.stdout) if o]
    others = [o for o in objects if o["kind"] != "Job"]
    _apply(cp, others)
    jobs = {j["metadata"]["name"]: j for j in objects if j["kind"] == "Job"}
    bound: dict[str, set[str]] = {name: set() for name in jobs}
    seen_pods: set[str] = set()
    for name, job in jobs.items():
        # One Job at a time: each requests every GPU of its nodes (see the module docstring).
        _apply(cp, [job])
        want = int(job["spec"]["completions"])
        selector = f"{JOB_LABEL}={name}"
        deadline = time.monotonic() + BIND_SECONDS
        running: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            running = [p for p in _pods(cp, ns, selector) if p["spec"].get("nodeName")]
            if len(running) >= want:
                break
            time.sleep(1.0)
        for pod in running:
            seen_pods.add(pod["metadata"]["uid"])
            bound[name].add(pod["spec"]["nodeName"])
        for pod in running:  # every pod of the Job placed: now they may finish
            _succeed(cp, pod)
    want_all = sum(int(j["spec"]["completions"]) for j in jobs.values())
    pending = [
        f"{p['metadata']['name']}: {[c.get('message') for c in p['status'].get('conditions', [])]}"
        for p in _pods(cp, ns, SELECTOR)
        if not p["spec"].get("nodeName")
    ]
    return {
        "apply_rc": checked.returncode,
        "apply_stderr": checked.stderr,
        "jobs": jobs,
        "bound": bound,
        "pods_bound": len(seen_pods),
        "pods_wanted": want_all,
        "pending": pending,
    }


def _apply(cp: ControlPlane, objects: list[dict[str, Any]]) -> None:
    if objects:
        doc = {"apiVersion": "v1", "kind": "List", "items": objects}
        cp.kubectl(
            "apply", "--server-side", f"--field-manager={FIELD_MANAGER}", "--validate=strict",
            "-f", "-", stdin=json.dumps(doc),
        )  # fmt: skip


def _target_nodes(folder: Folder, job: dict[str, Any]) -> set[str]:
    """The GPU nodes of the plugin config the Job selects (its node config label, or none)."""
    label = folder.profile.device_plugin.node_config_label
    config = job["spec"]["template"]["spec"]["nodeSelector"].get(label)
    return {node for node, pool in folder.pools().items() if pool == config}


def test_accept_objects_apply_strictly(accepted: tuple[Folder, dict[str, Any]]) -> None:
    _, seen = accepted
    assert seen["apply_rc"] == 0, seen["apply_stderr"]
    assert "warning" not in seen["apply_stderr"].lower(), seen["apply_stderr"]
    assert seen["jobs"], "no acceptance Job"


def test_each_accept_job_binds_one_pod_to_each_node_it_targets(
    accepted: tuple[Folder, dict[str, Any]],
) -> None:
    folder, seen = accepted
    assert seen["pods_bound"] == seen["pods_wanted"], seen["pending"]
    for name, job in seen["jobs"].items():
        want = _target_nodes(folder, job)
        assert want, f"{name} targets no GPU node"
        assert int(job["spec"]["completions"]) == len(want), name
        assert seen["bound"][name] == want, name
        assert CPU_NODE not in seen["bound"][name], name
