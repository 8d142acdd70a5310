"""A command asked for ``--format json`` (or ``github``) reports an invalid profile in that
format on stdout, as ``validate`` does, and exits 1 (issue #24, item 4: ``synth --format json``
printed nothing on stdout)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpustack.cli import main
from tests.test_synth_cli import PROFILE

BAD = PROFILE.format(name="alpha").replace("product: L4", "product: 7")
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n"
STATE = '{"apiVersion": "v1", "kind": "List", "items": []}\n'
LOGS = ""

#: command -> its arguments with ``p.yaml`` the invalid profile (and m.yaml, s.json, l.txt)
COMMANDS = {
    "synth": ["synth", "p.yaml", "--out", "d"],
    "lint": ["lint", "m.yaml", "--profile", "p.yaml"],
    "doctor": ["doctor", "--profile", "p.yaml", "--state", "s.json"],
    "accept report": ["accept", "report", "p.yaml", "l.txt", "--nodes", "1"],
}


def _tree(tmp_path: Path) -> None:
    for name, text in {"p.yaml": BAD, "m.yaml": POD, "s.json": STATE, "l.txt": LOGS}.items():
        (tmp_path / name).write_text(text)


@pytest.mark.parametrize("args", COMMANDS.values(), ids=COMMANDS.keys())
def test_json_is_validates_document_on_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    _tree(tmp_path)
    wanted = CliRunner().invoke(main, ["validate", "p.yaml", "--format", "json"])
    assert wanted.exit_code == 1
    result = CliRunner().invoke(main, [*args, "--format", "json"])
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc == json.loads(wanted.stdout)
    assert doc["ok"] is False and doc["issues"][0]["jsonPath"] == "$.gpus.product"
    assert "p.yaml" in result.stderr  # the human report stays on stderr
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("args", [COMMANDS["lint"]], ids=["lint"])
def test_github_gets_annotations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    _tree(tmp_path)
    result = CliRunner().invoke(main, [*args, "--format", "github"])
    assert result.exit_code == 1
    assert result.stdout.startswith("::error file=p.yaml")


@pytest.mark.parametrize("args", COMMANDS.values(), ids=COMMANDS.keys())
def test_text_keeps_stdout_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    _tree(tmp_path)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "$.gpus.product" in result.stderr
