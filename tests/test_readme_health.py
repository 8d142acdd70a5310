"""The GitOps page's health checks for GitOps tools tell the truth about the driver's ``OnDelete``
DaemonSet: the Argo CD Lua check is run (lupa) on DaemonSet states, and the Flux health checks
name objects the cluster folder really holds (the CRD check is in test_readme_gitops.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lupa
import pytest
import yaml

from tests.test_readme_gitops import FENCED_YAML, OBJECTS, README, REPO

KEY = "resource.customizations.health.apps_DaemonSet"


def argocd_lua() -> str:
    for block in FENCED_YAML.findall(README.read_text(encoding="utf-8")):
        for doc in yaml.safe_load_all(block):
            if isinstance(doc, dict) and doc.get("metadata", {}).get("name") == "argocd-cm":
                text: str = doc["data"][KEY]
                return text
    raise AssertionError(f"{README} shows no argocd-cm health check")


def health(obj: dict[str, Any]) -> tuple[str, str]:
    """Run the check as Argo CD does: its Lua body with the object as the table ``obj``."""
    lua = lupa.LuaRuntime(unpack_returned_tuples=True)
    run = lua.eval(f"function(obj)\n{argocd_lua()}\nend")
    result = run(lua.table_from(obj, recursive=True))
    return str(result["status"]), str(result["message"])


def daemonset(strategy: str, generation: int, observed: int, desired: int, available: int,
              updated: int) -> dict[str, Any]:  # fmt: skip
    status = {"observedGeneration": observed, "desiredNumberScheduled": desired,
              "updatedNumberScheduled": updated}  # fmt: skip
    if available:
        status["numberAvailable"] = available  # the API omits zero counts
    return {
        "metadata": {"name": "nvidia-driver-daemonset", "generation": generation},
        "spec": {"updateStrategy": {"type": strategy}},
        "status": status,
    }


CASES: list[tuple[str, dict[str, Any], str]] = [
    ("first-install-building", daemonset("OnDelete", 1, 1, 3, 0, 3), "Progressing"),
    ("driver-up-everywhere", daemonset("OnDelete", 1, 1, 3, 3, 3), "Healthy"),
    ("spec-not-observed", daemonset("OnDelete", 2, 1, 3, 3, 3), "Progressing"),
    ("bump-pending-drain", daemonset("OnDelete", 2, 2, 3, 3, 1), "Healthy"),
    ("rolling-update-midway", daemonset("RollingUpdate", 2, 2, 3, 3, 1), "Progressing"),
    ("rolling-update-done", daemonset("RollingUpdate", 2, 2, 3, 3, 3), "Healthy"),
    ("no-gpu-nodes-yet", daemonset("RollingUpdate", 1, 1, 0, 0, 0), "Healthy"),
]


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_argocd_health_check(obj: dict[str, Any], expected: str) -> None:
    status, message = health(obj)
    assert status == expected, message
    if obj["status"]["updatedNumberScheduled"] < obj["status"]["desiredNumberScheduled"] and (
        status == "Healthy"
    ):
        assert "drain each node and delete its pod" in message


def test_flux_health_checks_name_objects_of_the_cluster_folder() -> None:
    flux = next(o for o in OBJECTS if o["kind"] == "Kustomization")
    assert flux["spec"]["wait"] is False  # wait: true never gets past an OnDelete driver bump
    folder = REPO / flux["spec"]["path"].removeprefix("./")
    manifests = [yaml.safe_load(p.read_text()) for p in Path(folder).glob("*/*.yaml")]
    present = {
        (m["kind"], m["metadata"]["name"], m["metadata"].get("namespace")) for m in manifests
    }
    checks = flux["spec"]["healthChecks"]
    assert {c["name"] for c in checks} >= {"nvidia-driver-daemonset"}
    for check in checks:
        assert (check["kind"], check["name"], check["namespace"]) in present, check
    exprs = {(e["apiVersion"], e["kind"]) for e in flux["spec"]["healthCheckExprs"]}
    assert ("apps/v1", "DaemonSet") in exprs
