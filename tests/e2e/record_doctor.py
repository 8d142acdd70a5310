"""Record ``gpustack doctor``'s failure states from a real control plane (see controlplane.py).

Why: hand-written states hold what their author believed the API server and controllers write;
these are what they do write (the DaemonSet and Job controllers' ``FailedCreate`` events with the
admission plugins' own messages, the DaemonSets' status, the scheduler's placement).

Each scenario synthesizes a profile, applies its cluster folder with one thing broken, adds
fake nodes (GPU nodes labelled as Node Feature Discovery, gpustack's GPU node rule and GPU feature
discovery leave them, with their GPUs advertised, and a CPU node), lets the controllers and the
scheduler settle, reports every bound pod Running and Ready as a kubelet would (there is none),
and writes ``kubectl get nodes,pods,daemonsets,events -A -o json`` (without ``managedFields``)
to ``tests/doctor/fixtures/recorded/<scenario>.json``. tests/doctor/test_recorded.py reads them.

Reproduce (about a minute per control plane; binaries as for the e2e tier)::

    KUBEBUILDER_ASSETS=/work/kubebuilder-assets .venv/bin/python -m tests.e2e.record_doctor \
        [SCENARIO ...]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from tests.e2e.controlplane import ASSETS_VAR, ControlPlane, missing_assets
from tests.e2e.folder import REPO, Folder
from tests.e2e.rollout import CPU_NODE, FIELD_MANAGER, _set_node, _wait_established, teardown

RECORDED: Final = REPO / "tests" / "doctor" / "fixtures" / "recorded"
#: How long the controllers and the scheduler get before the state is recorded.
SETTLE_SECONDS: Final = 25.0


@dataclass(frozen=True)
class Scenario:
    """``profile``: the profile synthesized; ``gke_quota``: the control plane runs GKE's
    ResourceQuota admission; ``drop``: kustomization entries left out (by file name prefix)."""

    profile: Path
    gke_quota: bool = False
    drop: tuple[str, ...] = ()
    what: str = ""


L4: Final = REPO / "tests" / "doctor" / "profile.yaml"

SCENARIOS: Final = {
    # The RuntimeClasses are not there (applied later, or left out of a GitOps sync).
    "runtimeclass-missing": Scenario(
        L4, drop=("runtimeclass-",), what="the folder without its RuntimeClasses"
    ),
    # A GKE cluster, profile without cluster.platform: gke: critical pods need a scoped quota.
    "gke-quota": Scenario(L4, gke_quota=True, what="GKE's critical-pod quota admission"),
    # cluster.nodeSelector with a typo (accepted in the profile, as before validate checked it).
    "selector-typo": Scenario(RECORDED / "selector-typo.yaml", what="nvidia.com/gpu.presnt"),
}


def profile_of(scenario: str) -> Path:
    return SCENARIOS[scenario].profile


def _synthesize(scenario: Scenario, root: Path) -> Path:
    """The scenario's cluster folder (its profile under its own name) with ``drop`` left out."""
    name = str(yaml.safe_load(scenario.profile.read_text())["metadata"]["name"])
    profiles = root / "profiles"
    profiles.mkdir(parents=True)
    shutil.copy(scenario.profile, profiles / f"{name}.yaml")
    gpustack = Path(sys.executable).with_name("gpustack")
    subprocess.run(
        [str(gpustack), "synth", str(profiles), "--out", str(root / "dist"), "--quiet"],
        check=True,
    )
    folder = root / "dist" / "clusters" / name
    kustomization = folder / "kustomization.yaml"
    doc = yaml.safe_load(kustomization.read_text())
    doc["resources"] = [
        r for r in doc["resources"] if not r.rpartition("/")[2].startswith(scenario.drop)
    ]
    kustomization.write_text(yaml.safe_dump(doc, sort_keys=False))
    return folder


def _until(check: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not check():
        time.sleep(1.0)


def _pods(cp: ControlPlane) -> list[dict[str, Any]]:
    return list(json.loads(cp.kubectl("get", "pods", "-A", "-o", "json"))["items"])


def _report_ready(cp: ControlPlane) -> None:
    """What a kubelet reports for each pod bound to its node: Running, every container Ready."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for pod in _pods(cp):
        spec, meta = pod["spec"], pod["metadata"]
        if not spec.get("nodeName") or pod.get("status", {}).get("phase") == "Running":
            continue

        def status(c: dict[str, Any], ready: bool) -> dict[str, Any]:
            state = {"running": {"startedAt": now}} if ready else {
                "terminated": {"exitCode": 0, "reason": "Completed", "startedAt": now,
                               "finishedAt": now}}  # fmt: skip
            return {
                "name": c["name"], "ready": ready, "started": ready, "restartCount": 0,
                "image": c["image"], "imageID": "", "state": state,
            }  # fmt: skip

        conditions = [
            {"type": t, "status": "True", "lastTransitionTime": now}
            for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
        ]
        body = {
            "status": {
                "phase": "Running",
                "conditions": conditions,
                "startTime": now,
                "hostIP": "10.0.0.10",
                "initContainerStatuses": [status(c, False) for c in spec.get("initContainers", [])],
                "containerStatuses": [status(c, True) for c in spec["containers"]],
            }
        }
        cp.kubectl(
            "patch", "pod", meta["name"], "-n", meta["namespace"], "--subresource=status",
            "--type=merge", "-p", json.dumps(body),
        )  # fmt: skip


def _strip(doc: dict[str, Any]) -> dict[str, Any]:
    """Leave out what no diagnosis reads and only makes the file large (managedFields)."""
    for item in doc["items"]:
        item.get("metadata", {}).pop("managedFields", None)
    return doc


def record(cp: ControlPlane, name: str, scenario: Scenario, out: Path) -> Path:
    root = Path(tempfile.mkdtemp(prefix=f"gpustack-record-{name}-"))
    try:
        path = _synthesize(scenario, root)
        folder = Folder.load(path, root / "profiles")
        # the cluster has what the folder states it needs; the folder applies in one pass
        crds = [str(p) for p in folder.external_crds()]
        if crds:
            cp.kubectl(
                "apply", "--server-side", f"--field-manager={FIELD_MANAGER}",
                *[a for f in crds for a in ("-f", f)],
            )  # fmt: skip
            _wait_established(cp, crds)
        for node, pool in folder.pools().items():
            labels = folder.gpu_node_labels("advertised", pool)
            _set_node(cp, node, labels, folder.gpu_resources(pool))
        _set_node(cp, CPU_NODE, folder.platform_labels(), {})
        cp.run("apply", "--server-side", f"--field-manager={FIELD_MANAGER}", "-k", str(path))
        time.sleep(SETTLE_SECONDS)
        _report_ready(cp)
        _until(lambda: False, 5.0)  # the DaemonSet controller counts the Ready pods
        state = json.loads(cp.kubectl("get", "nodes,pods,daemonsets,events", "-A", "-o", "json"))
        target = out / f"{name}.json"
        target.write_text(json.dumps(_strip(state), indent=1, sort_keys=True) + "\n")
        teardown(cp, folder)
        return target
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(names: list[str]) -> int:
    reason = missing_assets()
    if reason is not None:
        print(reason, file=sys.stderr)
        return 2
    chosen = names or list(SCENARIOS)
    unknown = sorted(set(chosen) - set(SCENARIOS))
    if unknown:
        print(f"unknown scenario {unknown}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    assets = Path(os.environ[ASSETS_VAR])
    for gke in (False, True):
        todo = [n for n in chosen if SCENARIOS[n].gke_quota == gke]
        if not todo:
            continue
        cp = ControlPlane.start(assets, gke_quota=gke)
        try:
            for name in todo:
                print(record(cp, name, SCENARIOS[name], RECORDED))
        finally:
            cp.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
