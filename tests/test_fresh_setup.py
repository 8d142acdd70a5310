"""The README's Quickstart on a fresh machine (issue #32, item 1): ``make test`` set up a venv
without torch, so mypy stopped at the acceptance harness's ``import torch`` and pytest never
ran; only ``.ci/run`` installed it. Now the Makefile's own set-up installs it, and CI runs exactly
the README's test command after installing system tools only, so a green CI means the README's
two commands work on a fresh clone.

``make --dry-run`` with a venv path that does not exist shows what a fresh clone's run does,
without the minutes of installing it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
CI_RUN = (REPO / ".ci" / "run").read_text(encoding="utf-8")


def _quickstart_commands() -> list[str]:
    """The commands of the Quickstart's first block (``make run``, ``make test``)."""
    quick = README[README.index("## Quickstart") :]
    block = re.search(r"```[^\n]*\n(.*?)```", quick, re.DOTALL)
    assert block is not None
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def _dry_run(target: str, tmp_path: Path) -> list[str]:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    venv = tmp_path / "fresh-venv"
    done = subprocess.run(
        [make, "--dry-run", "--no-print-directory", f"VENV={venv}", target],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return [line.replace(str(venv), ".venv") for line in done.stdout.splitlines()]


@pytest.mark.parametrize("target", ["lint", "test"])
def test_a_fresh_venv_gets_torch_before_mypy_runs(target: str, tmp_path: Path) -> None:
    lines = _dry_run(target, tmp_path)
    torch = [i for i, line in enumerate(lines) if re.search(r"pip install .*'torch==", line)]
    mypy = [i for i, line in enumerate(lines) if line.startswith(".venv/bin/mypy")]
    assert lines[0] == "python3 -m venv .venv", lines
    assert torch and mypy and torch[0] < mypy[0], "\n".join(lines)
    if target == "test":
        assert lines[-1] == ".venv/bin/pytest"


def test_make_run_does_not_install_torch(tmp_path: Path) -> None:
    # synthesizing needs no PyTorch: `make run` stays the quick first step
    assert not any("torch" in line for line in _dry_run("run", tmp_path))


def test_ci_runs_exactly_the_readmes_test_command_after_system_tools_only() -> None:
    assert _quickstart_commands() == ["make run", "make test"]
    commands = [
        line.strip()
        for line in CI_RUN.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert commands[-1] == "make test"
    # nothing of the project's venv is set up or installed by CI itself
    for line in commands[:-1]:
        assert ".venv" not in line and not re.match(r"make\b", line), line


def test_the_quickstart_after_make_run_works_without_the_venv_on_path(tmp_path: Path) -> None:
    """The block after ``make run`` runs in a shell as a user has it: ``.venv`` exists (here a
    link to this venv) but is not on ``PATH`` (tests/docs runs every block with it there, which
    hid the ``gpustack: command not found`` every reader got)."""
    import os
    import sys

    from tests.docs.blocks import blocks_of
    from tests.docs.test_snippets import IGNORED

    quick = README.index("## Quickstart")
    after = [b for b in blocks_of(REPO / "README.md") if b.lang == "sh" and not b.syntax_only]
    block = next(b for b in after if README.count("\n", 0, quick) < b.line)
    copy = tmp_path / "repo"
    shutil.copytree(REPO, copy, symlinks=True, ignore=shutil.ignore_patterns(*IGNORED))
    (copy / ".venv").symlink_to(Path(sys.prefix))
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != venv_bin)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"} | {"PATH": path}
    assert shutil.which("gpustack", path=path) is None, "gpustack is on PATH outside the venv"
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.text],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (copy / "dist" / "clusters" / "gpu-east" / "kustomization.yaml").is_file()
