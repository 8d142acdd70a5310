"""``kubectl apply -k`` installs what pods need before the pods (issue 20, item 5).

kubectl applies a kustomization's objects in the order ``kubectl kustomize`` prints them. A pod
naming a RuntimeClass that does not exist yet is refused at admission (the RuntimeClass plugin),
which a DaemonSet or Job reports as a FailedCreate event on every fresh cluster; a custom resource
whose CRD comes later is not even sent. So every RuntimeClass and CRD of a cluster folder must be
printed before every object that makes pods, and each CRD before the resources of its kind. The
e2e tier (tests/e2e) sees the events themselves on a real control plane.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.tooling import require_tool

CLUSTERS = Path(__file__).resolve().parents[1] / "dist" / "clusters"
FOLDERS = sorted(p for p in CLUSTERS.iterdir() if (p / "kustomization.yaml").is_file())
#: Kinds whose controllers create pods as soon as they exist.
POD_MAKERS = {"DaemonSet", "Deployment", "StatefulSet", "ReplicaSet", "Job", "CronJob"}


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj["spec"]
    if obj["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    return dict(spec["template"]["spec"])


def needs(obj: dict[str, Any]) -> set[tuple[str, str]]:
    """(kind, name) of what a pod-making object's pods are refused without."""
    spec = pod_spec(obj)
    out = {("Namespace", obj["metadata"].get("namespace", "default"))}
    out.add(("ServiceAccount", spec.get("serviceAccountName", "default")))
    if spec.get("runtimeClassName"):
        out.add(("RuntimeClass", spec["runtimeClassName"]))
    return out


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_kustomize_prints_what_pods_need_first(folder: Path) -> None:
    kubectl = require_tool("kubectl")
    out = subprocess.run(
        [kubectl, "kustomize", str(folder)], capture_output=True, text=True, check=True
    ).stdout
    docs = [d for d in yaml.safe_load_all(out) if d]
    defined = {(d["kind"], d["metadata"]["name"]) for d in docs}
    seen: set[tuple[str, str]] = set()
    for d in docs:
        if d["kind"] in POD_MAKERS:
            late = sorted((needs(d) & defined) - seen)
            assert late == [], f"{d['kind']} {d['metadata']['name']} is printed before {late}"
        if d["kind"] == "CustomResourceDefinition":
            kind = d["spec"]["names"]["kind"]
            assert all(k != kind for k, _ in seen), f"{kind} printed before its CRD"
        seen.add((d["kind"], d["metadata"]["name"]))
