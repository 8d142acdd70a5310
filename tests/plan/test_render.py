"""The plan's three renderings say the same plan: text for a terminal, Markdown for a
pull-request comment, JSON in its documented structure."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpustack.plan.compare import compare
from gpustack.plan.model import EVICTS, Plan
from gpustack.plan.render_json import FORMAT_VERSION, document
from gpustack.plan.render_text import MARKER, github, text
from tests.plan.objects import folder

CLUSTER = "a100-mig-mixed"
DRIVER_DS = "driver/daemonset-nvidia-driver-daemonset.yaml"
COMMAND = "delete pod -l app.kubernetes.io/component=driver,app.kubernetes.io/name=nvidia-driver"


def plan_of(edit: dict[str, tuple[bytes, bytes]], drop: tuple[str, ...] = ()) -> Plan:
    base = folder(CLUSTER)
    head = {p: c for p, c in base.items() if p not in drop}
    for path, (old, new) in edit.items():
        assert old in head[path]
        head[path] = head[path].replace(old, new)
    return compare({CLUSTER: base, "same": base}, {CLUSTER: head, "same": base}, ("main", "tree"))


BUMP = {DRIVER_DS: (b"595.91.07", b"600.10.01")}


def test_text_names_the_rollout_its_effects_and_commands() -> None:
    shown = text(plan_of(BUMP))
    assert shown.startswith("plan: main → tree\ncluster a100-mig-mixed: changed\n")
    assert "rolls DaemonSet gpustack-system/nvidia-driver-daemonset (driver 595.91.07 → " in shown
    assert "OnDelete; template changes: image, labels" in shown
    assert "GPU workloads are evicted" in shown
    assert f"      $ kubectl -n gpustack-system {COMMAND} --field-selector" in shown
    assert shown.endswith("unchanged: 1 cluster\n")


def test_github_is_a_comment_with_shell_blocks() -> None:
    shown = github(plan_of(BUMP))
    assert shown.startswith(f"{MARKER}\n### gpustack plan: `main` → tree\n")
    assert "#### `a100-mig-mixed`: changed" in shown
    lines = shown.splitlines()
    at = next(i for i, line in enumerate(lines) if COMMAND in line)
    assert lines[at - 2] == "  ```sh" and lines[at + 1] == "  ```"


@pytest.mark.parametrize("render", [text, github])
def test_a_plan_without_disruption_says_so(render: Any) -> None:
    shown = render(plan_of({}, ()))
    assert "no pod is replaced and no manual step is needed" in shown.lower()
    assert "a100-mig-mixed" not in shown


def test_json_has_the_documented_structure() -> None:
    doc = json.loads(json.dumps(document(plan_of(BUMP, drop=("common/runtimeclass-nvidia.yaml",)))))
    assert (doc["formatVersion"], doc["base"], doc["head"], doc["disruptive"]) == (
        FORMAT_VERSION,
        "main",
        "tree",
        True,
    )
    changed, same = doc["clusters"]
    assert same == {
        "name": "same",
        "status": "unchanged",
        "disruptive": False,
        **{
            k: []
            for k in ("rollouts", "migConfigs", "configs", "inPlace", "replaced", "metadataOnly")
        },
        **{k: [] for k in ("added", "removed", "manual")},
    }
    (rollout,) = changed["rollouts"]
    assert rollout["object"] == {
        "kind": "DaemonSet",
        "namespace": "gpustack-system",
        "name": "nvidia-driver-daemonset",
    }
    assert (rollout["strategy"], rollout["maxUnavailable"], rollout["maxSurge"]) == (
        "OnDelete",
        "",
        "",
    )
    assert EVICTS in rollout["effects"]
    assert rollout["version"] == {"before": "595.91.07", "after": "600.10.01"}
    assert [s["kind"] for s in changed["manual"]] == ["prune", "delete-pods"]
    assert changed["removed"] == [{"kind": "RuntimeClass", "namespace": "", "name": "nvidia"}]


def test_a_cluster_added_or_removed_is_counted_with_its_commands() -> None:
    files = folder(CLUSTER)
    shown = text(compare({"gone": files}, {"new": files}, ("main", "tree"))).splitlines()
    count = len([p for p in files if p != "kustomization.yaml"])  # one object per file
    assert shown[1:3] == [
        "cluster gone: removed",
        f"  cluster removed: only a sync that prunes deletes its {count} objects, or",
    ]
    commands = [line for line in shown if line.startswith("      $ kubectl ")]
    assert len(commands) == count
    assert "      $ kubectl -n gpustack-system delete daemonset nvidia-driver-daemonset" in commands
    assert shown[-2:] == [
        "cluster new: added",
        f"  new cluster: {count} objects; its first sync installs the stack",
    ]
