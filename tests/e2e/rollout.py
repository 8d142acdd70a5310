"""One cluster folder's life on a real control plane: prerequisites, one apply, a GPU node through
its stages, and what landed where at each stage.

The observations are recorded as the rollout goes (a stage's placement can only be seen before
the next stage relabels the node) and the tests assert on them afterwards.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from tests.e2e import dra
from tests.e2e.controlplane import ControlPlane
from tests.e2e.folder import STAGES, Folder, node_manifest, node_status

CPU_NODE: Final = "cpu-0"
NOT_READY: Final = "node.kubernetes.io/not-ready"
FIELD_MANAGER: Final = "gpustack-e2e"
#: How long controllers and the scheduler get to converge after each step.
SETTLE_SECONDS: Final = 20.0


@dataclass
class Observed:
    """What the rollout saw."""

    prerequisites: list[str] = field(default_factory=list)
    apply_rc: int = 0
    apply_stderr: str = ""
    #: stage -> node -> names of the DaemonSets with a pod bound to it
    placed: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    #: (namespace, job) -> pods bound, once GPUs are advertised
    jobs_bound: dict[tuple[str, str], int] = field(default_factory=dict)
    #: other controllers' pods (Deployments) not bound at the end
    unbound: list[str] = field(default_factory=list)
    failed_create: list[str] = field(default_factory=list)
    #: ``kubectl diff --server-side`` of the folder after the rollout: exit status and output
    diff_rc: int = -1
    diff_out: str = ""
    #: objects of the folder whose ``metadata.generation`` a second apply changed
    regenerated: list[str] = field(default_factory=list)


def _pods(cp: ControlPlane, namespaces: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for ns in namespaces:
        out += json.loads(cp.kubectl("get", "pods", "-n", ns, "-o", "json"))["items"]
    return out


def _owner(pod: dict[str, Any]) -> tuple[str, str]:
    for ref in pod["metadata"].get("ownerReferences", []):
        return ref["kind"], ref["name"]
    return "", ""


def placement(cp: ControlPlane, folder: Folder) -> dict[str, set[str]]:
    """Node -> DaemonSets of the folder with a pod bound to it."""
    out: dict[str, set[str]] = {n: set() for n in (*folder.pools(), CPU_NODE)}
    for pod in _pods(cp, folder.namespaces()):
        kind, name = _owner(pod)
        node = pod["spec"].get("nodeName")
        if kind == "DaemonSet" and node:
            out.setdefault(node, set()).add(name)
    return out


def expected_placement(folder: Folder) -> dict[str, set[str]]:
    """Every stage of a GPU node runs the whole GPU stack (its pods wait on the node for what they
    need); NFD's worker runs everywhere; a CPU node runs nothing else (unless the profile
    selects every node)."""
    gpu = {node: folder.expected_on_node(node, pool) for node, pool in folder.pools().items()}
    # A profile that selects every node (simulated GPUs on a CI cluster) runs its stack on the
    # CPU node too; any other keeps it off.
    cpu = folder.expected_on(None) if not folder.profile.cluster.node_selector else set()
    return {**gpu, CPU_NODE: folder.everywhere() | cpu}


def until(check: Callable[[], bool], seconds: float = SETTLE_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.5)


def _set_node(
    cp: ControlPlane,
    name: str,
    labels: dict[str, str],
    resources: dict[str, str],
    taints: list[dict[str, str]] | None = None,
) -> None:
    cp.kubectl(
        "apply", "--server-side", f"--field-manager={FIELD_MANAGER}", "--force-conflicts",
        "-f", "-", stdin=json.dumps(node_manifest(name, labels, taints or [])),
    )  # fmt: skip
    cp.kubectl(
        "patch", "node", name, "--subresource=status", "--type=merge",
        "-p", json.dumps(node_status(resources)),
    )  # fmt: skip
    # The API server taints a new Node not-ready; the node lifecycle controller (off here: no
    # kubelet heartbeats) would lift it once the node reports Ready, as it does now.
    cp.kubectl("taint", "node", name, f"{NOT_READY}:NoSchedule-", check=False)


def _wait_established(cp: ControlPlane, files: list[str]) -> None:
    if files:
        args = [a for f in files for a in ("-f", f)]
        cp.kubectl("wait", "--for=condition=Established", "--timeout=60s", *args)


def rollout(cp: ControlPlane, folder: Folder) -> Observed:
    # The previous folder's teardown left nothing behind (its objects would change this one's).
    assert cp.kubectl("get", "nodes", "-o", "name") == "", "nodes left from a previous folder"
    left = cp.kubectl(
        "get", "clusterroles", "-l", "app.kubernetes.io/part-of=gpustack", "-o", "name"
    )
    assert left == "", f"left from a previous folder: {left}"
    seen = Observed()
    # The cluster meets the prerequisites the folder states (CRDs of other projects), then the
    # folder's own CRDs it says to apply first (an example's ComputeDomain), and nothing else:
    # the folder itself must apply in one pass.
    external = [str(p) for p in folder.external_crds()]
    first = [str(p) for p in folder.apply_first()]
    for files in (external, first):
        if files:
            cp.kubectl(
                "apply", "--server-side", f"--field-manager={FIELD_MANAGER}",
                *[a for f in files for a in ("-f", f)],
            )  # fmt: skip
            _wait_established(cp, files)
    seen.prerequisites = [p.rpartition("/")[2] for p in external + first]

    taints = folder.gpu_node_taints()
    for node, pool in folder.pools().items():
        _set_node(cp, node, folder.gpu_node_labels("fresh", pool, node), {}, taints)
    _set_node(cp, CPU_NODE, folder.cpu_node_labels(), {})

    done = cp.run(
        "apply", "--server-side", f"--field-manager={FIELD_MANAGER}", "-k", str(folder.path)
    )
    seen.apply_rc, seen.apply_stderr = done.returncode, done.stderr

    want = expected_placement(folder)
    for stage in STAGES:
        for node, pool in folder.pools().items():
            resources = folder.gpu_resources(pool) if stage == "advertised" else {}
            labels = folder.gpu_node_labels(stage, pool, node)
            _set_node(cp, node, labels, resources, taints)
            if stage == "advertised" and node in folder.dra_nodes():
                dra.publish(cp, folder.profile, node)  # what its DRA kubelet plugin publishes
        until(lambda: placement(cp, folder) == want)
        seen.placed[stage] = placement(cp, folder)

    jobs = folder.jobs()
    dra.play_controller(cp, list(folder.of_kind("ComputeDomain")))

    def bound_jobs() -> dict[tuple[str, str], int]:
        counts = dict.fromkeys(jobs, 0)
        for pod in _pods(cp, folder.namespaces()):
            labels = pod["metadata"].get("labels", {})
            key = (pod["metadata"]["namespace"], labels.get("job-name", ""))
            if key in counts and pod["spec"].get("nodeName"):
                counts[key] += 1
        return counts

    until(lambda: bound_jobs() == jobs, seconds=SETTLE_SECONDS * 2)
    seen.jobs_bound = bound_jobs()
    seen.unbound = [
        f"{p['metadata']['namespace']}/{p['metadata']['name']}"
        for p in _pods(cp, folder.namespaces())
        if _owner(p)[0] == "ReplicaSet" and not p["spec"].get("nodeName")
    ]
    events = json.loads(cp.kubectl("get", "events", "-A", "-o", "json"))["items"]
    seen.failed_create = [
        f"{e['involvedObject']['kind']} {e['metadata']['namespace']}/"
        f"{e['involvedObject']['name']}: {e['message']}"
        for e in events
        if e.get("reason") == "FailedCreate"
    ]
    _sync_clean(cp, folder, seen)
    return seen


def _generations(cp: ControlPlane, folder: Folder) -> dict[str, int]:
    items = json.loads(cp.kubectl("get", "-k", str(folder.path), "-o", "json"))["items"]
    return {
        f"{o['kind']}/{o['metadata'].get('namespace', '')}/{o['metadata']['name']}": o["metadata"][
            "generation"
        ]
        for o in items
        if "generation" in o["metadata"]
    }


def _sync_clean(cp: ControlPlane, folder: Folder, seen: Observed) -> None:
    """What a GitOps tool sees on its next sync once controllers have done their work: the
    server-side dry-run diff of the folder (Argo CD's server-side diff, what NVIDIA advises for
    the GPU Operator's objects) and a second server-side apply, which must bump no object's
    generation (a bumped generation is a changed spec: a rollout, or a sync that never ends)."""
    done = cp.run(
        "diff", "--server-side", f"--field-manager={FIELD_MANAGER}", "-k", str(folder.path)
    )
    seen.diff_rc, seen.diff_out = done.returncode, done.stdout + done.stderr
    before = _generations(cp, folder)
    cp.kubectl("apply", "--server-side", f"--field-manager={FIELD_MANAGER}", "-k", str(folder.path))
    after = _generations(cp, folder)
    seen.regenerated = sorted(k for k in after if before.get(k) != after[k])


def teardown(cp: ControlPlane, folder: Folder) -> None:
    """Remove everything the folder and the rollout made, so the next folder starts clean.

    Pods bound to a node without a kubelet never finish a graceful deletion, so the workloads
    go first (their pods orphaned), then the pods are deleted at once, then the folder."""
    namespaces = folder.namespaces()
    for ns in namespaces:
        cp.kubectl(
            "delete", "daemonsets,deployments,replicasets,jobs", "--all", "-n", ns,
            "--cascade=orphan", "--ignore-not-found", check=False,
        )  # fmt: skip

    def no_pods() -> bool:
        left = _pods(cp, namespaces)
        for pod in left:
            meta = pod["metadata"]
            if meta.get("finalizers"):
                cp.kubectl(
                    "patch", "pod", meta["name"], "-n", meta["namespace"], "--type=merge",
                    "-p", '{"metadata":{"finalizers":null}}', check=False,
                )  # fmt: skip
        for ns in namespaces:
            cp.kubectl(
                "delete", "pods", "--all", "-n", ns, "--force", "--grace-period=0",
                "--ignore-not-found", check=False,
            )  # fmt: skip
        return not left

    until(no_pods, seconds=60)
    cp.kubectl("delete", "-k", str(folder.path), "--ignore-not-found", "--wait=true", check=False)
    for crd in folder.external_crds():
        cp.kubectl("delete", "-f", str(crd), "--ignore-not-found", "--wait=true", check=False)
    cp.kubectl("delete", "resourceslices", "--all", check=False)
    cp.kubectl("delete", "nodes", "--all", "--wait=true", check=False)
    cp.kubectl("delete", "events", "--all", "-A", check=False)
