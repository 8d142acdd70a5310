"""Record ``gpustack doctor``'s failure states from a real control plane (see controlplane.py).

Why: hand-written states hold what their author believed the API server and controllers write;
these are what they do write (the DaemonSet and Job controllers' ``FailedCreate`` events with the
admission plugins' own messages, the DaemonSets' status, the scheduler's placement).

Each scenario synthesizes a profile, applies its cluster folder with one thing broken, adds
fake nodes (GPU nodes labelled as Node Feature Discovery, gpustack's GPU node rule and GPU feature
discovery leave them, with their GPUs advertised, and a CPU node), lets the controllers and the
scheduler settle, reports every bound pod Running and Ready as a kubelet would (there is none),
and writes ``kubectl get nodes,pods,daemonsets,events -A -o json`` (without ``managedFields``)
to ``tests/doctor/fixtures/recorded/<scenario>.json`` (``SCENARIOS``, read by
tests/doctor/test_recorded.py), or to ``tests/doctor/fixtures/<scenario>.json``
(``FIXTURE_SCENARIOS``: the doctor's older fixtures, read by tests/doctor/test_doctor.py, made
on two L4 nodes and a control-plane node or on one A100 node, with the scenario's labels, taints,
advertised resources and team pods). Those only a kubelet could make stay hand-written
(``HAND_WRITTEN`` says why).

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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from tests.e2e.controlplane import ASSETS_VAR, ControlPlane, missing_assets
from tests.e2e.folder import REPO, Folder
from tests.e2e.rollout import CPU_NODE, FIELD_MANAGER, _set_node, _wait_established, teardown

RECORDED: Final = REPO / "tests" / "doctor" / "fixtures" / "recorded"
CONTROL_PLANE: Final = "node-role.kubernetes.io/control-plane"
#: How long the controllers and the scheduler get before the state is recorded.
SETTLE_SECONDS: Final = 25.0


#: Per node: labels to set (``None``: remove) or resources the kubelet reports.
PerNode = Mapping[str, Mapping[str, str | None]]


@dataclass(frozen=True)
class Scenario:
    """``profile``: the profile synthesized; ``gke_quota``: the control plane runs GKE's
    ResourceQuota admission; ``drop``: kustomization entries left out (by file name prefix).

    The rest shapes the nodes and what happens after the stack is up (the doctor's older
    fixtures, tests/doctor/fixtures/): ``gpu_nodes`` names the GPU nodes (default: the folder's
    pools), ``cpu_node`` the other one, a control-plane node when ``control_plane``;
    ``gpu_taint`` taints the GPU nodes ``nvidia.com/gpu:NoSchedule``; ``labels`` changes a node's
    labels before the folder is applied, ``stage`` gives a node the labels of an earlier stage
    (``fresh``: NFD's only, nothing advertised); ``allocatable`` is what a node's kubelet reports
    once the plugin pods run; ``then`` acts on the running cluster; ``out`` is where the state is
    written."""

    profile: Path
    gke_quota: bool = False
    drop: tuple[str, ...] = ()
    what: str = ""
    gpu_nodes: tuple[str, ...] = ()
    cpu_node: str = CPU_NODE
    control_plane: bool = False
    gpu_taint: bool = False
    labels: PerNode = field(default_factory=dict)
    stage: Mapping[str, str] = field(default_factory=dict)
    resources: PerNode = field(default_factory=dict)
    allocatable: PerNode = field(default_factory=dict)
    then: Callable[[ControlPlane], None] | None = None
    out: Path = RECORDED


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


FIXTURES: Final = RECORDED.parent
MIG: Final = REPO / "tests" / "doctor" / "profile-mig.yaml"
GPU_TAINT: Final = "nvidia.com/gpu:NoSchedule"
#: A GPU workload's pod spec (tolerating the GPU nodes' taint unless told not to).
TRAIN_IMAGE: Final = "docker.io/pytorch/pytorch:2.6.0-cuda12.6-cudnn9-runtime"


def _gpu_pod(name: str, gpus: int, *, tolerate: bool = True, **spec: Any) -> dict[str, Any]:
    container = {
        "name": "train", "image": TRAIN_IMAGE, "command": ["sleep", "infinity"],
        "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
    }  # fmt: skip
    pod_spec: dict[str, Any] = {"containers": [container], **spec}
    if tolerate:
        pod_spec["tolerations"] = [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
        ]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "ml"}, "spec": pod_spec,
    }  # fmt: skip


def _run_pods(*pods: dict[str, Any]) -> Callable[[ControlPlane], None]:
    """A team's namespace ``ml`` and its GPU pods (the scheduler places them, or says why not)."""

    def step(cp: ControlPlane) -> None:
        cp.kubectl("create", "namespace", "ml")
        cp.kubectl("wait", "--for=jsonpath={.metadata.name}=default", "serviceaccount/default",
                   "-n", "ml", "--timeout=60s")  # fmt: skip
        cp.kubectl("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                         "items": list(pods)}))  # fmt: skip

    return step


def _taint_and_restart_plugin(node: str) -> Callable[[ControlPlane], None]:
    """The node is tainted ``dedicated=ml`` (the stack does not tolerate it), then the device
    plugin's pod there goes (a rollout, an eviction): the DaemonSet controller cannot put it back;
    the driver and toolkit pods stay (NoSchedule evicts nothing)."""

    def step(cp: ControlPlane) -> None:
        cp.kubectl("taint", "node", node, "dedicated=ml:NoSchedule")
        on_node = f"spec.nodeName={node}"
        pods = json.loads(
            cp.kubectl("get", "pods", "-A", "-o", "json", "--field-selector", on_node)
        )
        for pod in pods["items"]:
            if pod["metadata"].get("labels", {}).get("app.kubernetes.io/component") == (
                "device-plugin"
            ):
                cp.kubectl("delete", "pod", pod["metadata"]["name"], "-n",
                           pod["metadata"]["namespace"], "--force", "--grace-period=0")  # fmt: skip

    return step


_L4_NODES: Final = {"gpu_nodes": ("gpu-1", "gpu-2"), "cpu_node": "cp-1", "control_plane": True,
                    "gpu_taint": True, "out": FIXTURES}  # fmt: skip
_MIG_NODES: Final = {**_L4_NODES, "gpu_nodes": ("a100-1",)}

#: The doctor's fixtures that stay written by hand (tests/doctor/fixtures/README.md), and why:
#: what is broken in each is a container's state, which only a kubelet running the container
#: reports (a control plane without kubelets runs no container: the recorder can only claim
#: "Running and Ready" for every bound pod, as a kubelet would for a healthy one).
HAND_WRITTEN: Final = {
    "driver-not-ready": "the driver container's startup probe failing (module not loaded)",
    "toolkit-not-ready": "the toolkit container waiting on the runtime's config",
    "device-plugin-crashloop": "a container exiting 2 and restarting (CrashLoopBackOff)",
    "device-plugin-not-ready": "an init container still running (PodInitializing)",
}

#: The doctor's older fixtures (tests/doctor/fixtures/<name>.json, read by test_doctor.py), made
#: on the control plane.
FIXTURE_SCENARIOS: Final = {
    "healthy": Scenario(
        L4,
        **_L4_NODES,  # type: ignore[arg-type]
        then=_run_pods(_gpu_pod("train-a", 1, nodeSelector={"kubernetes.io/hostname": "gpu-1"})),
        what="two L4 nodes, the stack Ready, a GPU pod running",
    ),
    "node-not-selected": Scenario(
        L4,
        **_L4_NODES,  # type: ignore[arg-type]
        stage={"gpu-2": "fresh"},
        labels={"gpu-2": {"nvidia.com/gpu.present": None}},
        what="a GPU node without the selector's label",
    ),
    "device-plugin-missing": Scenario(
        L4,
        **_L4_NODES,  # type: ignore[arg-type]
        then=_taint_and_restart_plugin("gpu-2"),
        allocatable={"gpu-2": {"nvidia.com/gpu": "0"}},
        what="a taint the device plugin does not tolerate, added before its pod was replaced",
    ),
    "pod-pending": Scenario(
        L4,
        **_L4_NODES,  # type: ignore[arg-type]
        then=_run_pods(
            _gpu_pod("no-toleration", 1, tolerate=False),
            _gpu_pod(
                "wrong-pool",
                1,
                nodeSelector={"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"},
            ),
            _gpu_pod("too-big", 4),
        ),  # fmt: skip
        what="GPU pods the scheduler cannot place",
    ),
    "allocatable-missing": Scenario(
        L4,
        **_L4_NODES,  # type: ignore[arg-type]
        allocatable={"gpu-1": {"nvidia.com/gpu": "0"}},
        what="the plugin Ready, the kubelet reporting no allocatable GPU",
    ),
    "mig-healthy": Scenario(
        MIG,
        **_MIG_NODES,  # type: ignore[arg-type]
        labels={
            "a100-1": {"nvidia.com/mig.config": "default", "nvidia.com/mig.config.state": "success"}
        },  # fmt: skip
        what="the MIG layout applied",
    ),
    "mig-not-applied": Scenario(
        MIG,
        **_MIG_NODES,  # type: ignore[arg-type]
        resources={"a100-1": {"nvidia.com/gpu": "1"}},
        what="MIG-mode not applied: the whole GPU advertised",
    ),
}
ALL: Final = {**SCENARIOS, **FIXTURE_SCENARIOS}


def profile_of(scenario: str) -> Path:
    return ALL[scenario].profile


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


def _set_nodes(cp: ControlPlane, folder: Folder, scenario: Scenario) -> None:
    """The scenario's GPU nodes at their stage, and its CPU (or control-plane) node."""
    pools: dict[str, str | None] = (
        dict.fromkeys(scenario.gpu_nodes) if scenario.gpu_nodes else folder.pools()
    )
    for node, pool in pools.items():
        stage = scenario.stage.get(node, "advertised")
        labels = folder.gpu_node_labels(stage, pool)
        for key, value in scenario.labels.get(node, {}).items():
            labels.pop(key, None) if value is None else labels.__setitem__(key, value)
        resources = folder.gpu_resources(pool) if stage == "advertised" else {}
        if node in scenario.resources:
            resources = {k: v for k, v in scenario.resources[node].items() if v is not None}
        _set_node(cp, node, labels, resources)
        if scenario.gpu_taint:
            cp.kubectl("taint", "node", node, GPU_TAINT)
    labels = folder.platform_labels()
    if scenario.control_plane:
        labels[CONTROL_PLANE] = ""
    _set_node(cp, scenario.cpu_node, labels, {})
    if scenario.control_plane:
        cp.kubectl("taint", "node", scenario.cpu_node, f"{CONTROL_PLANE}:NoSchedule")


def state_text(doc: dict[str, Any]) -> str:
    """The List as JSON, one object a line (a third the size of indented JSON, and a diff still
    shows which object changed)."""
    rest = {k: v for k, v in doc.items() if k != "items"}
    head = json.dumps(rest, sort_keys=True)[:-1]
    lines = ",\n".join(json.dumps(i, sort_keys=True, separators=(",", ":")) for i in doc["items"])
    return f'{head}, "items": [\n{lines}\n]}}\n'


def record(cp: ControlPlane, name: str, scenario: Scenario) -> Path:
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
        _set_nodes(cp, folder, scenario)
        cp.run("apply", "--server-side", f"--field-manager={FIELD_MANAGER}", "-k", str(path))
        time.sleep(SETTLE_SECONDS)
        _report_ready(cp)
        _until(lambda: False, 5.0)  # the DaemonSet controller counts the Ready pods
        if scenario.then is not None:
            scenario.then(cp)
            time.sleep(SETTLE_SECONDS / 2)
            _report_ready(cp)
            _until(lambda: False, 5.0)
        for node, allocatable in scenario.allocatable.items():
            cp.kubectl(
                "patch", "node", node, "--subresource=status", "--type=merge",
                "-p", json.dumps({"status": {"allocatable": allocatable}}),
            )  # fmt: skip
        state = json.loads(cp.kubectl("get", "nodes,pods,daemonsets,events", "-A", "-o", "json"))
        target = scenario.out / f"{name}.json"
        target.write_text(state_text(_strip(state)))
        teardown(cp, folder)
        cp.kubectl("delete", "namespace", "ml", "--ignore-not-found", check=False)
        return target
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(names: list[str]) -> int:
    reason = missing_assets()
    if reason is not None:
        print(reason, file=sys.stderr)
        return 2
    chosen = names or list(ALL)
    unknown = sorted(set(chosen) - set(ALL))
    if unknown:
        print(f"unknown scenario {unknown}; known: {', '.join(ALL)}", file=sys.stderr)
        return 2
    assets = Path(os.environ[ASSETS_VAR])
    for gke in (False, True):
        todo = [n for n in chosen if ALL[n].gke_quota == gke]
        if not todo:
            continue
        cp = ControlPlane.start(assets, gke=gke)
        try:
            for name in todo:
                print(record(cp, name, ALL[name]), flush=True)
        finally:
            cp.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
