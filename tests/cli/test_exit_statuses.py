"""Every command's ``--help`` states its exit statuses from one table (:mod:`gpustack.exits`),
and each command really exits with the status its help gives for a case (issue #24, item 4:
``synth --help`` said ``--check`` exits 1; it exits 3)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from gpustack.cli import main
from gpustack.exits import Exit
from tests.test_synth_cli import PROFILE

#: The statuses only one command exits with (``synth --check``, ``plan --exit-code``): its help
#: lists them, no other command's does.
OWN: dict[Exit, str] = {Exit.STALE: "synth", Exit.DISRUPTIVE: "plan"}

GOOD = PROFILE.format(name="alpha")
BAD = PROFILE.format(name="alpha").replace("product: L4", "product: 7")
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
    - name: c
      image: busybox
"""

#: case -> (files to write, the command line, the status, how its help says it)
CASES: dict[str, tuple[dict[str, str], list[str], Exit, str]] = {
    "synth writes": ({"p/a.yaml": GOOD}, ["synth", "p", "--out", "d"], Exit.OK, "when done"),
    "synth --check finds it stale": (
        {"p/a.yaml": GOOD},
        ["synth", "p", "--out", "d", "--check"],
        Exit.STALE,
        "when --check finds the output out of date",
    ),
    "synth of an invalid profile": (
        {"p/a.yaml": BAD},
        ["synth", "p", "--out", "d"],
        Exit.FAILED,
        "on invalid input or a refusal",
    ),
    "synth --diff without --check": ({}, ["synth", "--diff"], Exit.USAGE, "on a usage error"),
    "validate, valid": ({"p/a.yaml": GOOD}, ["validate", "p"], Exit.OK, "when all are valid"),
    "validate, invalid": ({"p/a.yaml": BAD}, ["validate", "p"], Exit.FAILED, "when any is not"),
    "lint, clean": ({"m.yaml": POD}, ["lint", "m.yaml"], Exit.OK, "when clean"),
    "lint, invalid profile": (
        {"m.yaml": POD, "a.yaml": BAD},
        ["lint", "m.yaml", "--profile", "a.yaml"],
        Exit.FAILED,
        "on any finding (or an invalid profile)",
    ),
    "doctor without a state": (
        {"a.yaml": GOOD},
        ["doctor", "--profile", "a.yaml"],
        Exit.USAGE,
        "on a usage error",
    ),
    "template, invalid": ({"a.yaml": BAD}, ["template", "a.yaml"], Exit.FAILED, "on an invalid"),
    "init writes": (
        {},
        ["init", "c1", "--product", "L4", "--profiles", "p"],
        Exit.OK,
        "when written",
    ),
    "init over a profile": (
        {"p/c1.yaml": GOOD},
        ["init", "c1", "--product", "L4", "--profiles", "p"],
        Exit.FAILED,
        "when the profile exists",
    ),
    "completion, bash": ({}, ["completion", "bash"], Exit.OK, "on success"),
    "completion, unknown shell": ({}, ["completion", "tcsh"], Exit.USAGE, "on a usage error"),
}


def _help(path: list[str]) -> str:
    text = CliRunner().invoke(main, [*path, "--help"]).stdout
    return " ".join(text.split())


def _statuses(text: str) -> str:
    (found,) = re.findall(r"Exit status: (.*?\.)(?: |$)", text)
    return str(found)


def _commands(group: click.Group, path: list[str]) -> Iterator[list[str]]:
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _commands(command, [*path, name])
        else:
            yield [*path, name]


COMMANDS = list(_commands(main, []))


@pytest.mark.parametrize(("files", "args", "status", "said"), CASES.values(), ids=CASES.keys())
def test_each_command_exits_as_its_help_says(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    args: list[str],
    status: Exit,
    said: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    if status is Exit.STALE:
        assert CliRunner().invoke(main, ["synth", "p", "--out", "d"]).exit_code == 0
        (tmp_path / "p/a.yaml").write_text(GOOD.replace('"580.105.08"', '"570.195.03"'))
    result = CliRunner().invoke(main, args)
    assert result.exit_code == status, result.output
    assert f"{int(status)} {said}" in _statuses(_help(args[:1]))


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_every_command_states_the_statuses_of_the_table(path: list[str]) -> None:
    statuses = _statuses(_help(path))
    listed = [int(n) for n in re.findall(r"(?:^|, )(\d+) (?:when|on) ", statuses)]
    shared = [s for s in Exit if s not in (Exit.OK, Exit.FAILED, *OWN)]
    own = [s for s, command in OWN.items() if path == [command]]
    wanted = sorted([Exit.OK, Exit.FAILED, *shared, *own])
    assert listed == [int(s) for s in wanted]


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_every_exit_status_an_option_names_is_the_tables(path: list[str]) -> None:
    """``--check``: "exit 3"; any other option that names a status names one of the table."""
    named = re.findall(r"(--[a-z-]+)[^-]*?\bexit (\d+)", _help(path))
    assert all(int(n) in set(Exit) for _, n in named)
    if path == ["synth"]:
        assert ("--check", str(int(Exit.STALE))) in named
