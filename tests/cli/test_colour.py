"""Colour where a terminal shows it, none where it does not (issue #32, item 5).

Each case runs the real ``gpustack`` program with its output on a pseudo-terminal, as a person
sees it, and then on a pipe, as ``grep`` and CI see it: findings (``validate``, and the errors
of a command given an invalid profile, on stderr), ``synth --check --diff`` and ``doctor``.
``NO_COLOR`` turns colour off on a terminal, ``FORCE_COLOR`` on for a pipe, and machine formats
never get it.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_synth_cli import PROFILE

GPUSTACK = [sys.executable, "-m", "gpustack"]
ESC = "\x1b["
DOCTOR = Path(__file__).resolve().parents[1] / "doctor"
BAD = PROFILE.format(name="alpha").replace("product: L4", "product: L5")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TERM")}
    return {**env, "TERM": "xterm-256color", **extra}


def on_terminal(args: list[str], cwd: Path, **extra: str) -> tuple[int, str]:
    """Run ``gpustack ARGS`` with stdout and stderr on a pseudo-terminal: its status and what
    the terminal received."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [*GPUSTACK, *args], cwd=cwd, env=_env(**extra), stdout=follower, stderr=follower
    )
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            proc.kill()
            raise AssertionError(f"gpustack {args} printed nothing for 120 s")
        try:
            data = os.read(leader, 65536)
        except OSError:  # the terminal closed: the program exited
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(timeout=60), b"".join(chunks).decode()


def on_pipe(args: list[str], cwd: Path, **extra: str) -> tuple[int, str]:
    done = subprocess.run(
        [*GPUSTACK, *args], cwd=cwd, env=_env(**extra), capture_output=True, text=True
    )
    return done.returncode, done.stdout + done.stderr


@pytest.fixture
def bad(tmp_path: Path) -> Path:
    (tmp_path / "bad.yaml").write_text(BAD)
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [["validate", "bad.yaml"], ["template", "bad.yaml"]],
    ids=["validate (stdout)", "template's refusal (stderr)"],
)
def test_findings_are_coloured_on_a_terminal_only(args: list[str], bad: Path) -> None:
    status, shown = on_terminal(args, bad)
    assert status == 1
    assert f"{ESC}1m{ESC}33mbad.yaml:" in shown or f"{ESC}33m{ESC}1mbad.yaml:" in shown, shown
    assert ESC in shown.splitlines()[-1]  # the summary line: red
    for run, extra in (
        (on_pipe, {}),
        (on_terminal, {"NO_COLOR": "1"}),
        (on_terminal, {"NO_COLOR": "1", "FORCE_COLOR": "1"}),
        (on_terminal, {"TERM": "dumb"}),
    ):
        status, shown = run(args, bad, **extra)
        assert status == 1 and "bad.yaml:" in shown
        assert ESC not in shown, (run.__name__, extra)
    status, shown = on_pipe(args, bad, FORCE_COLOR="1")
    assert ESC in shown


def test_machine_formats_are_never_coloured(bad: Path) -> None:
    for fmt in ("json", "github"):
        status, shown = on_terminal(["validate", "bad.yaml", "--format", fmt], bad)
        assert status == 1 and ESC not in shown


def test_check_diff_is_coloured_on_a_terminal_only(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "alpha.yaml").write_text(PROFILE.format(name="alpha"))
    assert on_pipe(["synth", "p", "--out", "d"], tmp_path)[0] == 0
    kust = tmp_path / "d" / "clusters" / "alpha" / "kustomization.yaml"
    kust.write_text(kust.read_text() + "# edited\n")
    args = ["synth", "p", "--out", "d", "--check", "--diff"]
    status, shown = on_terminal(args, tmp_path)
    assert status == 3
    lines = shown.splitlines()
    assert f"{ESC}33mdiffers:{ESC}0m d/clusters/alpha/kustomization.yaml" in lines
    assert f"{ESC}31m-# edited{ESC}0m" in lines
    assert any(line.startswith(f"{ESC}36m@@ ") for line in lines)
    status, plain = on_pipe(args, tmp_path)
    assert status == 3 and ESC not in plain
    assert "-# edited" in plain.splitlines()


def test_doctor_is_coloured_on_a_terminal_only() -> None:
    args = [
        "doctor",
        "--profile",
        "profile.yaml",
        "--state",
        "fixtures/device-plugin-missing.json",
    ]
    status, shown = on_terminal(args, DOCTOR)
    assert status == 1
    first = shown.splitlines()[0]
    assert first.startswith(f"{ESC}33m{ESC}1m") or first.startswith(f"{ESC}1m{ESC}33m"), first
    assert f"{ESC}31m" in first
    status, plain = on_pipe(args, DOCTOR)
    assert status == 1 and ESC not in plain
    assert plain.splitlines()[0].startswith("node/")
