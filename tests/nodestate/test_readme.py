"""The site's page on ``validate --state`` (docs/how-to/node-state.md): its console output is
what the command prints, and its CI step, run as a shell script on a checkout with recorded
states, fails on drift."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpustack.cli import main

REPO = Path(__file__).parents[2]
HERE = Path(__file__).parent
PAGE = REPO / "docs" / "how-to" / "node-state.md"


def section() -> str:
    return PAGE.read_text(encoding="utf-8")


def test_console_example_is_what_validate_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    block = re.search(r"```console\n\$ gpustack (.*?)\n(.*?)```", section(), re.S)
    assert block is not None
    args, shown = block.group(1).split(), block.group(2)
    monkeypatch.chdir(REPO)
    found = CliRunner().invoke(main, args)
    assert found.exit_code == 1
    assert found.output == shown


def test_ci_step_fails_on_drift_and_passes_on_a_match(tmp_path: Path) -> None:
    step = re.search(r"- run: \|\n((?:    .*\n)+)```", section())
    assert step is not None
    script = "\n".join(line[4:] for line in step.group(1).splitlines())
    (tmp_path / "profiles").mkdir()
    (tmp_path / "states").mkdir()
    shutil.copy(HERE / "h100-eks.yaml", tmp_path / "profiles" / "h100-eks.yaml")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}

    def run(state: str) -> subprocess.CompletedProcess[str]:
        shutil.copy(HERE / "fixtures" / state, tmp_path / "states" / "h100-eks.json")
        return subprocess.run(
            ["sh", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )

    good = run("eks-h100.json")
    assert good.returncode == 0, good.stdout + good.stderr
    bad = run("eks-h100-drift.json")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert bad.stdout.count("::error file=profiles/h100-eks.yaml,line=") == 3, bad.stdout
