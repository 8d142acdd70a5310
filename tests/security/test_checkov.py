"""checkov over every synthesized cluster: each finding is one gpustack accepts, with a reason.

The accepted findings live in ``checkov-accepted.yaml`` next to this file, reviewed for the
checkov release CI installs (``.ci/run`` pins it). A new finding (a
construct lost a hardening) fails, and so does an entry no finding matches any more (a hardening
that was never recorded), so the list stays the true security posture of ``dist/``.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.tooling import require_tool

REPO = Path(__file__).parents[2]
CLUSTERS = REPO / "dist" / "clusters"
ACCEPTED_FILE = Path(__file__).with_name("checkov-accepted.yaml")


@dataclass(frozen=True)
class Finding:
    check: str
    cluster: str
    component: str
    resource: str


@dataclass(frozen=True)
class Accepted:
    check: str
    components: frozenset[str]
    clusters: frozenset[str] | None
    reason: str

    def covers(self, f: Finding) -> bool:
        return (
            f.check == self.check
            and f.component in self.components
            and (self.clusters is None or f.cluster in self.clusters)
        )


def load_accepted(path: Path = ACCEPTED_FILE) -> list[Accepted]:
    entries = yaml.safe_load(path.read_text(encoding="utf-8"))
    accepted = []
    for e in entries:
        assert set(e) <= {"check", "components", "clusters", "reason"}, e
        assert e["reason"].strip(), f"{e['check']}: every accepted finding needs a reason"
        clusters = e.get("clusters")
        accepted.append(
            Accepted(
                e["check"],
                frozenset(e["components"]),
                frozenset(clusters) if clusters is not None else None,
                e["reason"],
            )
        )
    return accepted


def findings(report: Any) -> list[Finding]:
    """Failed checks of a ``checkov -o json`` report, placed by their file in dist/clusters."""
    reports = report if isinstance(report, list) else [report]
    found = []
    for r in reports:
        if r.get("check_type") not in (None, "kubernetes"):
            continue
        for f in r["results"]["failed_checks"]:
            cluster, component, _ = Path(f["file_path"]).parts[-3:]
            found.append(Finding(f["check_id"], cluster, component, f["resource"]))
    return found


def unaccepted(found: Iterable[Finding], accepted: list[Accepted]) -> list[Finding]:
    return [f for f in found if not any(a.covers(f) for a in accepted)]


def unused(found: Iterable[Finding], accepted: list[Accepted]) -> list[Accepted]:
    found = list(found)
    return [a for a in accepted if not any(a.covers(f) for f in found)]


@pytest.fixture(scope="module")
def report() -> Any:
    checkov = require_tool("checkov")
    proc = subprocess.run(
        [checkov, "--directory", str(CLUSTERS), "--framework", "kubernetes", "--output", "json",
         "--quiet", "--compact", "--skip-download"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    # exit 1 means "some check failed", which the accepted list is about; anything else is an
    # error of checkov itself
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


def test_checkov_scanned_every_cluster(report: Any) -> None:
    reports = report if isinstance(report, list) else [report]
    summary = next(r["summary"] for r in reports if r.get("check_type") == "kubernetes")
    objects = sum(
        1
        for p in CLUSTERS.glob("*/*/*.yaml")
        if yaml.safe_load(p.read_text())["kind"] != "Namespace"
    )
    assert summary["parsing_errors"] == 0
    assert summary["resource_count"] >= objects > 0
    assert summary["passed"] > 0


def test_every_finding_is_accepted(report: Any) -> None:
    new = unaccepted(findings(report), load_accepted())
    lines = [f"{f.check} {f.cluster}/{f.component} {f.resource}" for f in new]
    assert not new, "checkov findings not in checkov-accepted.yaml:\n" + "\n".join(lines)


def test_every_accepted_finding_still_occurs(report: Any) -> None:
    stale = unused(findings(report), load_accepted())
    lines = [f"{a.check} {sorted(a.components)}" for a in stale]
    assert not stale, "accepted but no longer found (remove them):\n" + "\n".join(lines)


# --- the matching itself, without checkov --------------------------------------------------------

PLUGIN = Finding("CKV_K8S_22", "lab-1gpu", "device-plugin", "DaemonSet.ns.p")
DRIVER = Finding("CKV_K8S_16", "lab-1gpu", "driver", "DaemonSet.ns.d")
ONLY_H100 = Accepted("CKV_K8S_22", frozenset({"device-plugin"}), frozenset({"h100"}), "r")
ANY_DRIVER = Accepted("CKV_K8S_16", frozenset({"driver"}), None, "r")


@pytest.mark.parametrize(
    ("finding", "accepted", "covered"),
    [
        (DRIVER, ANY_DRIVER, True),
        (PLUGIN, ONLY_H100, False),  # another cluster
        (Finding("CKV_K8S_22", "h100", "device-plugin", "x"), ONLY_H100, True),
        (Finding("CKV_K8S_17", "lab-1gpu", "driver", "x"), ANY_DRIVER, False),  # another check
        (Finding("CKV_K8S_16", "lab-1gpu", "examples", "x"), ANY_DRIVER, False),  # component
    ],
)
def test_accepted_covers(finding: Finding, accepted: Accepted, covered: bool) -> None:
    assert accepted.covers(finding) is covered
    assert (unaccepted([finding], [accepted]) == []) is covered
    assert (unused([finding], [accepted]) == []) is covered


def test_findings_are_placed_by_file() -> None:
    report = {
        "check_type": "kubernetes",
        "results": {
            "failed_checks": [
                {
                    "check_id": "CKV_K8S_16",
                    "file_path": "/lab-1gpu/driver/daemonset-nvidia-driver-daemonset.yaml",
                    "resource": "DaemonSet.gpustack-system.nvidia-driver-daemonset",
                }
            ]
        },
    }
    assert findings(report) == [
        Finding(
            "CKV_K8S_16", "lab-1gpu", "driver", "DaemonSet.gpustack-system.nvidia-driver-daemonset"
        )
    ]
