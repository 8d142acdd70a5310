"""Each command's ``--help`` ends with one real example (issue #32, item 5), and each example
works: run from a copy of this repository (its profiles and dist/), the ``gpustack`` part of
the example line exits as a working command does. The two that need a cluster (``doctor
--kubectl``, ``accept report`` of ``kubectl logs``) run too, and must fail only for the missing
cluster or its logs, never with a usage error."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from gpustack.cli import main
from gpustack.cli.common import EXAMPLE
from gpustack.exits import Exit
from tests.docs.test_snippets import IGNORED

REPO = Path(__file__).resolve().parents[2]
#: Examples that need a cluster: the status they exit with here (no cluster, no logs).
NEEDS_CLUSTER = {("doctor",): Exit.FAILED, ("accept", "report"): Exit.FAILED}
#: Examples that compare with a commit: the copy is committed, and its commit is ``origin/main``.
NEEDS_GIT = {("plan",)}


def _commands(
    group: click.Group = main, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], click.Command]]:
    out: list[tuple[tuple[str, ...], click.Command]] = []
    for name, command in sorted(group.commands.items()):
        out.append(((*path, name), command))
        if isinstance(command, click.Group):
            out += _commands(command, (*path, name))
    return out


COMMANDS = _commands()


def _help(path: tuple[str, ...]) -> str:
    done = click.testing.CliRunner().invoke(main, [*path, "--help"], terminal_width=80)
    assert done.exit_code == 0, done.output
    return done.stdout


def example_of(path: tuple[str, ...]) -> str:
    """The example line of a command's help (the line after its ``Example, …:`` paragraph)."""
    lines = _help(path).splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip().startswith(EXAMPLE)]
    assert len(starts) == 1, f"gpustack {' '.join(path)}: one example, not {len(starts)}"
    rest = lines[starts[0] :]
    end = next(i for i, line in enumerate(rest) if line.rstrip().endswith(":"))
    return next(line.strip() for line in rest[end + 1 :] if line.strip())


def gpustack_part(line: str) -> list[str]:
    """The words of the ``gpustack …`` command in a shell line (a pipe's stage, before ``>``)."""
    stage = next(s for s in line.split(" | ") if s.strip().startswith("gpustack "))
    return shlex.split(stage.split(" > ")[0])


def test_every_command_is_covered() -> None:
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {
        "validate",
        "synth",
        "lint",
        "doctor",
        "template",
        "init",
        "completion",
        "plan",
    } <= names
    assert {"accept", "accept manifests", "accept report"} <= names


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the repository for each example (``init`` adds a profile: a later ``synth
    --check`` would see it)."""
    copy = tmp_path / "repo"
    shutil.copytree(REPO, copy, symlinks=True, ignore=shutil.ignore_patterns(*IGNORED))
    return copy


def commit(root: Path) -> None:
    """The checkout as one commit, also named ``origin/main`` (what a CI job compares with)."""
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"],
        ["update-ref", "refs/remotes/origin/main", "HEAD"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, timeout=120)


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=[" ".join(p) for p, _ in COMMANDS])
def test_the_help_example_works(path: tuple[str, ...], checkout: Path) -> None:
    words = gpustack_part(example_of(path))
    assert words[0] == "gpustack"
    if path[0] != "accept" or len(path) > 1:  # a group's example may show a subcommand
        assert tuple(words[1 : 1 + len(path)]) == path, words
    if path in NEEDS_GIT:
        commit(checkout)
    done = subprocess.run(
        [sys.executable, "-m", "gpustack", *words[1:]],
        cwd=checkout,
        input="",
        capture_output=True,
        text=True,
        timeout=300,
    )
    want = NEEDS_CLUSTER.get(path, Exit.OK)
    assert done.returncode == want, f"{words}: exit {done.returncode}\n{done.stderr[-2000:]}"
    assert "Usage:" not in done.stderr
