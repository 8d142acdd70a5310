"""``gpustack plan`` on a committed copy of the repository: the format asked for on stdout,
and with ``--exit-code`` status 4 exactly when the plan is disruptive."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpustack.cli import main
from gpustack.exits import Exit
from tests.plan.repo import committed_copy, edit

CLUSTER = "l4-inference-timeslicing"
#: case -> (the profile edit, whether the plan is disruptive)
CASES = {
    "sharing replicas": (("replicas: 4", "replicas: 8"), True),
    "nothing": (("", ""), False),
}


@pytest.mark.parametrize(("change", "disruptive"), CASES.values(), ids=CASES.keys())
def test_exit_code_says_whether_the_plan_disrupts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: tuple[str, str], disruptive: bool
) -> None:
    root = committed_copy(tmp_path)
    profile = edit(root, CLUSTER, *change)
    monkeypatch.chdir(root)
    args = ["plan", str(profile), "--format", "json"]
    plain = CliRunner().invoke(main, args)
    assert plain.exit_code == Exit.OK, plain.output
    doc = json.loads(plain.stdout)
    assert doc["disruptive"] is disruptive
    assert [c["name"] for c in doc["clusters"]] == [CLUSTER]
    gated = CliRunner().invoke(main, [*args, "--exit-code"])
    assert gated.exit_code == (Exit.DISRUPTIVE if disruptive else Exit.OK), gated.output
    assert gated.stdout == plain.stdout


def test_github_format_is_a_comment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = committed_copy(tmp_path)
    edit(root, CLUSTER, "replicas: 4", "replicas: 8")
    monkeypatch.chdir(root)
    done = CliRunner().invoke(main, ["plan", "--format", "github"])
    assert done.exit_code == Exit.OK, done.output
    assert done.stdout.startswith("<!-- gpustack-plan -->\n### gpustack plan: `HEAD` → ")
    assert f"#### `{CLUSTER}`: changed" in done.stdout
