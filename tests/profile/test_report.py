"""Reporters render a CheckResult exactly; no CLI involved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpustack.checker import Accepted, CheckResult, Issue, LoadedProfile
from gpustack.profile.model import Profile
from gpustack.report import render, summary

ISSUES = (
    Issue(
        "profiles/a.yaml",
        4,
        12,
        "$.driver.version",
        "'535' does not match x",
        "e.g. 580.1",
        "schema",
    ),
    Issue("profiles/b,c.yaml", 1, 1, "$", "invalid YAML: 100% wrong\nreally", rule="load"),
)
ACCEPTED = Accepted(
    Issue(
        "profiles/ok.yaml",
        6,
        22,
        "$.cluster.kubernetesVersion",
        "Kubernetes 1.99 is not supported",
        "use 1.29 to 1.35",
        "kubernetes-version-supported",
    ),
    "canary clusters",
)
GOOD = LoadedProfile(Path("profiles/ok.yaml"), Profile.from_dict({"metadata": {"name": "ok"}}))
FAILED = CheckResult(profiles=(GOOD,), issues=ISSUES, files_checked=3, files_failed=2)
PASSED = CheckResult(profiles=(GOOD,), issues=(), files_checked=1)
NOTICE = Issue(
    "profiles/ok.yaml",
    6,
    22,
    "$.cluster.kubernetesVersion",
    "Kubernetes 1.33 reached its upstream end of life on 2026-06-28",
    rule="kubernetes-end-of-life",
    notice=True,
)
NOTICED = CheckResult(profiles=(GOOD,), issues=(), files_checked=1, notices=(NOTICE,))


@pytest.mark.parametrize(
    "result,line",
    [
        (FAILED, "2 errors in 2 of 3 profiles"),
        (PASSED, "1 profile valid"),
        (NOTICED, "1 profile valid (1 notice)"),
        (CheckResult((), ISSUES[:1], 1, 1), "1 error in 1 of 1 profile"),
        (CheckResult((GOOD,), (), 1, accepted=(ACCEPTED,)), "1 profile valid (1 finding accepted)"),
        (
            CheckResult((), ISSUES, 3, 2, accepted=(ACCEPTED, ACCEPTED)),
            "2 errors in 2 of 3 profiles (2 findings accepted)",
        ),
    ],
)
def test_summary(result: CheckResult, line: str) -> None:
    assert summary(result) == line


def test_text() -> None:
    assert render(FAILED, "text") == (
        "profiles/a.yaml:4:12: $.driver.version: '535' does not match x (e.g. 580.1)"
        " (rule: schema)\n"
        "profiles/b,c.yaml:1:1: $: invalid YAML: 100% wrong\nreally (rule: load)\n"
        "2 errors in 2 of 3 profiles\n"
    )
    assert render(PASSED, "text") == "1 profile valid\n"


def test_text_color_only_when_asked() -> None:
    assert "\x1b[" not in render(FAILED, "text")
    colored = render(FAILED, "text", color=True)
    assert "\x1b[33m" in colored and colored.endswith("\x1b[0m\n")


def test_json() -> None:
    doc = json.loads(render(FAILED, "json"))
    assert doc == {
        "ok": False,
        "filesChecked": 3,
        "filesFailed": 2,
        "issues": [
            {
                "file": "profiles/a.yaml",
                "line": 4,
                "col": 12,
                "jsonPath": "$.driver.version",
                "message": "'535' does not match x",
                "hint": "e.g. 580.1",
                "rule": "schema",
            },
            {
                "file": "profiles/b,c.yaml",
                "line": 1,
                "col": 1,
                "jsonPath": "$",
                "message": "invalid YAML: 100% wrong\nreally",
                "hint": None,
                "rule": "load",
            },
        ],
        "notices": [],
        "accepted": [],
        "profiles": [{"file": "profiles/ok.yaml", "name": "ok"}],
        "summary": "2 errors in 2 of 3 profiles",
    }


def test_github_annotations_escape_data_and_properties() -> None:
    assert render(FAILED, "github").splitlines() == [
        "::error file=profiles/a.yaml,line=4,col=12,title=gpustack validate (schema)::"
        "$.driver.version: '535' does not match x (e.g. 580.1)",
        "::error file=profiles/b%2Cc.yaml,line=1,col=1,title=gpustack validate (load)::"
        "$: invalid YAML: 100%25 wrong%0Areally",
        "2 errors in 2 of 3 profiles",
    ]


def test_json_lists_accepted_findings_with_their_reason() -> None:
    doc = json.loads(render(CheckResult((GOOD,), (), 1, accepted=(ACCEPTED,)), "json"))
    assert doc["ok"] is True
    assert doc["accepted"] == [
        {
            "file": "profiles/ok.yaml",
            "line": 6,
            "col": 22,
            "jsonPath": "$.cluster.kubernetesVersion",
            "message": "Kubernetes 1.99 is not supported",
            "hint": "use 1.29 to 1.35",
            "rule": "kubernetes-version-supported",
            "reason": "canary clusters",
        }
    ]
    assert doc["summary"] == "1 profile valid (1 finding accepted)"


@pytest.mark.parametrize(
    ("fmt", "first"),
    [
        (
            "text",
            "profiles/ok.yaml:6:22: $.cluster.kubernetesVersion: notice: Kubernetes 1.33 reached"
            " its upstream end of life on 2026-06-28 (rule: kubernetes-end-of-life)",
        ),
        (
            "github",
            "::notice file=profiles/ok.yaml,line=6,col=22,title=gpustack validate"
            " (kubernetes-end-of-life)::$.cluster.kubernetesVersion: notice: Kubernetes 1.33"
            " reached its upstream end of life on 2026-06-28",
        ),
    ],
)
def test_a_notice_is_printed_and_fails_nothing(fmt: str, first: str) -> None:
    assert NOTICED.ok
    assert render(NOTICED, fmt).splitlines() == [first, "1 profile valid (1 notice)"]


def test_json_lists_notices_apart_from_issues() -> None:
    doc = json.loads(render(NOTICED, "json"))
    assert (doc["ok"], doc["issues"]) == (True, [])
    assert [n["rule"] for n in doc["notices"]] == ["kubernetes-end-of-life"]
