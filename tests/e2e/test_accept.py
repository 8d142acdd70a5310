"""The acceptance run (``gpustack accept manifests``, gpustack/accept/) on a real control plane:
for every example cluster folder, after the tier's rollout (rollout.py: the folder applied, GPU
nodes advertised), the acceptance objects written for the live cluster's state are applied as
the docs show, in ONE ``kubectl apply --server-side`` of the whole stream, pass the API server's
strict field validation and admission, and each check runs exactly once on each GPU node of the
plugin config it targets, never on the CPU node.

Every acceptance Job requests all GPUs of its nodes, so applied at once they queue for the same
nodes, and the scheduler's required pod anti-affinity does not count finished pods: an Indexed
Job's queued pod could land where its sibling already finished (seen here on h100-training
before the Jobs were pinned: the all-reduce Job bound to gpu-0, gpu-2 and gpu-3, never gpu-1).
Written from a state, each per-node check is one Job per node pinned by its hostname, so no
placement is left to the scheduler. This test plays the kubelet: a pod finishes as soon as it is
bound, except a multi-node all-reduce rank, which finishes only once every rank of its Job is
bound (torchrun's ranks wait for each other), the order that broke the unpinned Jobs.
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

from gpustack.accept.manifests import CHECK_LABEL, COMPONENT, JOB_LABEL
from tests.e2e.controlplane import ControlPlane
from tests.e2e.folder import PROFILES, Folder, folders
from tests.e2e.rollout import CPU_NODE, FIELD_MANAGER, rollout, teardown
from tests.e2e.test_clusters import is_gke

#: How long the acceptance Jobs get to have every pod bound and finished, on a busy machine.
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


#: The folders whose clusters run a device plugin: without one, ``gpustack accept`` refuses
#: (its Jobs request the plugin's resources; tests/accept/test_cli.py).
PLUGIN_FOLDERS = [p for p in folders() if Folder.load(p).profile.device_plugin.enabled]


@pytest.fixture(scope="module", params=PLUGIN_FOLDERS, ids=lambda p: p.name)
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
    """Write the acceptance objects for the live state, apply the whole stream strictly at
    once, and finish each pod as a kubelet would once it is placed; what was seen."""
    ns = folder.profile.cluster.namespace
    state = tmp.mktemp("accept") / "state.json"
    state.write_text(cp.kubectl("get", "nodes,pods,daemonsets,events", "-A", "-o", "json"))
    # A profile that selects every node (simulated GPUs) would count the CPU node as a GPU node.
    count = ["--state", str(state)] if folder.profile.cluster.node_selector else [
        "--nodes", str(sum(1 for pool in folder.pools().values() if pool is None))]  # fmt: skip
    written = _gpustack("accept", "manifests", str(PROFILES / f"{folder.name}.yaml"), *count)
    assert written.returncode == 0, written.stderr
    # The one-step apply the docs show: `gpustack accept manifests ... | kubectl apply -f -`.
    applied = cp.run(
        "apply", "--server-side", f"--field-manager={FIELD_MANAGER}", "--validate=strict",
        "-f", "-", stdin=written.stdout,
    )  # fmt: skip
    objects = [o for o in yaml.safe_load_all(written.stdout) if o]
    jobs = {j["metadata"]["name"]: j for j in objects if j["kind"] == "Job"}
    pods_of = {name: int(job["spec"]["completions"]) for name, job in jobs.items()}
    gangs = {  # the multi-node all-reduce: its ranks wait for each other
        name
        for name, job in jobs.items()
        if job["spec"]["template"]["metadata"]["labels"][CHECK_LABEL].startswith("allreduce-nodes")
    }
    want_all = sum(pods_of.values())
    checked: dict[str, list[str]] = {}  # check -> the node of each pod that ran it
    done: set[str] = set()
    deadline = time.monotonic() + BIND_SECONDS
    while applied.returncode == 0 and len(done) < want_all and time.monotonic() < deadline:
        pods = [p for p in _pods(cp, ns, SELECTOR) if p["spec"].get("nodeName")]
        placed: dict[str, list[dict[str, Any]]] = {}
        for pod in pods:
            placed.setdefault(pod["metadata"]["labels"][JOB_LABEL], []).append(pod)
        for job, found in placed.items():
            fresh = [p for p in found if p["metadata"]["uid"] not in done]
            if not fresh or (job in gangs and len(found) < pods_of[job]):
                continue  # a gang's ranks finish together, once all are placed
            for pod in fresh:
                check = pod["metadata"]["labels"][CHECK_LABEL]
                checked.setdefault(check, []).append(pod["spec"]["nodeName"])
                done.add(pod["metadata"]["uid"])
                _succeed(cp, pod)
        time.sleep(0.5)
    pending = [
        f"{p['metadata']['name']}: {[c.get('message') for c in p['status'].get('conditions', [])]}"
        for p in _pods(cp, ns, SELECTOR)
        if not p["spec"].get("nodeName")
    ]
    return {
        "apply_rc": applied.returncode,
        "apply_stderr": applied.stderr,
        "jobs": jobs,
        "checked": checked,
        "pods_done": len(done),
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


def test_one_apply_checks_each_gpu_node_exactly_once(
    accepted: tuple[Folder, dict[str, Any]],
) -> None:
    folder, seen = accepted
    assert seen["pods_done"] == seen["pods_wanted"], seen["pending"]
    targets: dict[str, set[str]] = {}
    for job in seen["jobs"].values():
        check = job["spec"]["template"]["metadata"]["labels"][CHECK_LABEL]
        targets.setdefault(check, set()).update(_target_nodes(folder, job))
    assert sorted(seen["checked"]) == sorted(targets)
    for check, want in targets.items():
        assert want, f"{check} targets no GPU node"
        assert CPU_NODE not in seen["checked"][check], check
        assert sorted(seen["checked"][check]) == sorted(want), check  # each once, none twice
