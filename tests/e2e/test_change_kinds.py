"""``gpustack plan`` against what the controllers do (issue #35, item 3).

For each kind of change a platform team makes to a profile, the base and the changed profile are
synthesized, ``gpustack plan``'s comparison reads the two folders, and then the real control
plane takes them: the base folder rolls out onto a GPU node (tests/e2e/rollout.py), the changed
folder is applied over it server-side, and the test waits until every DaemonSet and Deployment
controller has observed its new spec. What the controllers did must be what the plan said:

- the workloads whose pods were replaced (a base pod deleted or terminating, or for a Deployment
  a new ReplicaSet) are exactly the plan's ``RollingUpdate`` rollouts that had pods;
- an ``OnDelete`` workload (the driver's) keeps every pod (the plan's manual step), unless its
  placement changes (the plan's ``placement-changes``: pods leave nodes it no longer selects);
- a change the plan calls metadata only, or changes of nothing but config the pods do not read,
  replaces no pod at all.

Pods bound to a node without a kubelet never finish terminating, so "replaced" is seen as the
controller deleting the old pod; that is the controller's decision, which is what the plan
predicts. The base has no example Jobs: a Job's template is immutable, and the plan reports such
a change as a replacement that the GitOps tool performs, not the controller.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import pytest
import yaml

from gpustack.plan.compare import compare_objects
from gpustack.plan.model import PLACEMENT, ClusterPlan, Ref
from gpustack.plan.objects import read_objects
from tests.e2e.controlplane import ControlPlane
from tests.e2e.folder import PROFILES, Folder
from tests.e2e.rollout import rollout, teardown
from tests.e2e.variants import merge

NAME: Final = "change"
#: How long the controllers get to act on the changed folder once they have observed it.
GRACE_SECONDS: Final = 4.0
TIMEOUT_SECONDS: Final = 40.0

#: The base: an A100 MIG cluster (driver, toolkit, plugin, GFD, NFD, the MIG manager) with the DCGM
#: exporter and a label, without example Jobs.
BASE_OVERRIDES: Final[dict[str, Any]] = {
    "metadata": {"name": NAME, "labels": {"team": "a"}},
    "workloads": {"examples": []},
    "dcgmExporter": {
        "enabled": True,
        "counters": [{"field": "DCGM_FI_DEV_GPU_UTIL", "help": "GPU utilization (in %)."}],
    },
}

#: change kind -> what it merges into the base profile.
CHANGES: Final[dict[str, dict[str, Any]]] = {
    "driver version": {"driver": {"version": "580.105.08"}},
    "kernel module type": {"driver": {"kernelModuleType": "proprietary"}},
    "toolkit version": {"toolkit": {"version": "v1.18.1"}},
    "plugin image": {"devicePlugin": {"image": "nvcr.io/nvidia/cloud-native/k8s-device-plugin"}},
    "sharing replicas": {
        "devicePlugin": {
            "sharing": {
                "timeSlicing": {"resources": [{"name": "nvidia.com/mig-1g.10gb", "replicas": 2}]}
            }
        }
    },
    "MIG layout": {"gpus": {"mig": {"1g.10gb": 1}}},
    "DCGM counters": {
        "dcgmExporter": {
            "counters": [
                {"field": "DCGM_FI_DEV_GPU_UTIL", "help": "GPU utilization (in %)."},
                {"field": "DCGM_FI_DEV_FB_USED", "help": "Framebuffer memory used (in MiB)."},
            ]
        }
    },
    "a label": {"metadata": {"labels": {"team": "b"}}},
    "namespace move": {"cluster": {"namespace": "gpu-operands"}},
    "node selector": {
        "cluster": {
            "nodeSelector": {
                "nvidia.com/gpu.present": "true",
                "topology.kubernetes.io/region": "us-east-1",
            }
        }
    },
    "RDMA": {"driver": {"rdma": {"enabled": True}}},
    "CDI": {"toolkit": {"cdi": {"enabled": False}}},
}


@dataclass(frozen=True)
class Side:
    folder: Folder
    files: dict[str, bytes]


def _profile(overrides: dict[str, Any]) -> dict[str, Any]:
    data = yaml.safe_load((PROFILES / "a100-mig-mixed.yaml").read_text())
    return merge(merge(data, BASE_OVERRIDES), overrides)


def _synthesize(root: Path, data: dict[str, Any]) -> Side:
    profiles = root / "profiles"
    profiles.mkdir(parents=True)
    (profiles / f"{NAME}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    gpustack = Path(sys.executable).with_name("gpustack")
    done = subprocess.run(
        [str(gpustack), "synth", str(profiles), "--out", str(root / "dist"), "--quiet"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    path = root / "dist" / "clusters" / NAME
    files = {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*.yaml"))}
    return Side(Folder.load(path, profiles), files)


def _workload_of(pod: dict[str, Any], owners: dict[tuple[str, str], Ref]) -> Ref | None:
    ns = pod["metadata"]["namespace"]
    for ref in pod["metadata"].get("ownerReferences", []):
        if ref["kind"] == "DaemonSet":
            return Ref("DaemonSet", ns, ref["name"])
        if ref["kind"] == "ReplicaSet":
            return owners.get((ns, ref["name"]))
    return None


def _items(cp: ControlPlane, kind: str, namespaces: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for ns in namespaces:
        got = cp.kubectl("get", kind, "-n", ns, "-o", "json", "--ignore-not-found")
        out += json.loads(got)["items"] if got.strip() else []
    return out


def _replica_sets(cp: ControlPlane, namespaces: list[str]) -> dict[tuple[str, str], Ref]:
    """ReplicaSet (namespace, name) -> its Deployment."""
    found = {}
    for rs in _items(cp, "replicasets", namespaces):
        for ref in rs["metadata"].get("ownerReferences", []):
            if ref["kind"] == "Deployment":
                ns = rs["metadata"]["namespace"]
                found[(ns, rs["metadata"]["name"])] = Ref("Deployment", ns, ref["name"])
    return found


def _pods(cp: ControlPlane, namespaces: list[str]) -> dict[str, tuple[Ref | None, bool]]:
    """Pod UID -> (its workload, whether it is terminating)."""
    owners = _replica_sets(cp, namespaces)
    return {
        p["metadata"]["uid"]: (_workload_of(p, owners), "deletionTimestamp" in p["metadata"])
        for p in _items(cp, "pods", namespaces)
    }


def _observed(
    cp: ControlPlane,
    namespaces: list[str],
    before: dict[str, tuple[Ref | None, bool]],
    sets_before: set[tuple[str, str]],
) -> set[Ref]:
    """The workloads the controllers replaced pods of since ``before``."""
    now = _pods(cp, namespaces)
    replaced = {
        workload
        for uid, (workload, _) in before.items()
        if workload is not None and (uid not in now or now[uid][1])
    }
    # a Deployment of the base that got a new ReplicaSet rolls (a new Deployment's first one is
    # a start, which the plan lists as such)
    had = {workload for workload, _ in before.values()}
    new_sets = {
        ref
        for key, ref in _replica_sets(cp, namespaces).items()
        if key not in sets_before and ref in had
    }
    return replaced | new_sets


def _settled(cp: ControlPlane, namespaces: list[str]) -> bool:
    """Every DaemonSet and Deployment controller has observed its object's current spec."""
    for kind in ("daemonsets", "deployments"):
        for obj in _items(cp, kind, namespaces):
            seen = obj.get("status", {}).get("observedGeneration", 0)
            if seen < obj["metadata"]["generation"]:
                return False
    return True


def _expected(plan: ClusterPlan, had_pods: set[Ref]) -> set[Ref]:
    """The workloads the plan says the controllers replace pods of: rolling updates, and any
    DaemonSet whose placement changes (the one placement change here narrows the node selector
    to a label the tier's GPU nodes lack, so every node is left)."""
    return {
        r.ref
        for r in plan.rollouts
        if r.ref in had_pods and (r.strategy == "RollingUpdate" or PLACEMENT in r.effects)
    }


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Side:
    """The base folder, synthesized once for every kind of change."""
    return _synthesize(tmp_path_factory.mktemp("base"), _profile({}))


@pytest.fixture(params=list(CHANGES), ids=list(CHANGES))
def change(
    request: pytest.FixtureRequest, tmp_path: Path, base: Side
) -> Iterator[tuple[str, Side, Side]]:
    head = _synthesize(tmp_path / "head", _profile(copy.deepcopy(CHANGES[request.param])))
    yield request.param, base, head


def test_the_controllers_do_what_the_plan_says(
    change: tuple[str, Side, Side], control_plane: ControlPlane
) -> None:
    kind, base, head = change
    plan = compare_objects(NAME, read_objects(base.files), read_objects(head.files))
    assert plan.status == "changed", f"{kind}: the two profiles render the same objects"
    cp = control_plane
    namespaces = sorted(set(base.folder.namespaces()) | set(head.folder.namespaces()))
    try:
        seen = rollout(cp, base.folder)
        assert seen.apply_rc == 0, seen.apply_stderr
        before = _pods(cp, namespaces)
        sets_before = set(_replica_sets(cp, namespaces))
        had_pods = {w for w, _ in before.values() if w is not None}
        assert had_pods, f"{kind}: the base rolled out no pod"
        done = cp.run(
            "apply", "--server-side", "--field-manager=gpustack-e2e", "-k", str(head.folder.path)
        )
        assert done.returncode == 0, f"{kind}: {done.stderr}"
        want = _expected(plan, had_pods)
        deadline = time.monotonic() + TIMEOUT_SECONDS
        while time.monotonic() < deadline and not _settled(cp, namespaces):
            time.sleep(0.5)
        settled_at = time.monotonic()
        got = _observed(cp, namespaces, before, sets_before)
        # what should roll has rolled, and nothing else moves within the grace period
        while time.monotonic() < deadline and (
            got != want or time.monotonic() - settled_at < GRACE_SECONDS
        ):
            time.sleep(0.5)
            got = _observed(cp, namespaces, before, sets_before)
        on_delete = {
            r.ref for r in plan.rollouts if r.strategy == "OnDelete" and PLACEMENT not in r.effects
        }
        assert got == want, (
            f"{kind}: the plan said {sorted(map(str, want))} roll, the controllers replaced the "
            f"pods of {sorted(map(str, got))}"
        )
        assert not (got & on_delete), f"{kind}: an OnDelete workload's pods were replaced"
        if not plan.rollouts:
            assert got == set(), f"{kind}: no rollout planned, but pods were replaced"
    finally:
        teardown(cp, head.folder)
        teardown(cp, base.folder)


def test_every_change_kind_changes_what_it_says() -> None:
    """The table's changes are the issue's twelve kinds, each a real change of the profile."""
    assert len(CHANGES) == 12
    base = _profile({})
    for kind, overrides in CHANGES.items():
        assert _profile(overrides) != base, kind
