"""Ctrl-C: exit 130 with one line, never a traceback, and nothing half-written (issue #24,
item 4). In process, an interrupt is injected at each phase boundary of a write; in a real
process group, SIGINT arrives while clusters render (in this process and in workers)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpustack.exits import INTERRUPTED, Exit
from gpustack.synth.report import STALE
from tests.test_synth_cli import PROFILE, clean_env, files, synth

#: where the interrupt comes: (module, function, on which call)
PHASES = {
    "resolving the inputs": ("gpustack.actions.synth", "resolve", 1),
    "reading the index": ("gpustack.actions.synth", "read_state", 1),
    "finding fresh clusters": ("gpustack.actions.synth", "find_fresh", 1),
    "validating": ("gpustack.actions.synth", "validate", 1),
    "rendering": ("gpustack.actions.synth", "render", 1),
    "the GitOps files": ("gpustack.gitops.delivery", "delivery_files", 1),
    "staging the second cluster": ("gpustack.synth.writer", "_stage", 2),
    "swapping in the second cluster": ("gpustack.synth.fsswap", "swap_in", 2),
}


def _bump(profiles: Path) -> None:
    for name in ("alpha", "beta"):
        text = PROFILE.format(name=name).replace('"580.105.08"', '"570.195.03"')
        (profiles / f"{name}.yaml").write_text(text)


def _interrupt_on(call: int, real: Callable[..., Any]) -> Callable[..., Any]:
    calls = []

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == call:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    return wrapper


@pytest.mark.parametrize(("module", "name", "call"), PHASES.values(), ids=PHASES.keys())
def test_an_interrupt_exits_130_in_one_line_and_leaves_the_output_as_it_was(
    profiles: Path, monkeypatch: pytest.MonkeyPatch, module: str, name: str, call: int
) -> None:
    import importlib

    out = profiles.parent / "dist"
    assert synth(profiles, "--out", out).exit_code == 0
    before = files(out)
    _bump(profiles)
    target = importlib.import_module(module)
    with monkeypatch.context() as patch:
        patch.setattr(target, name, _interrupt_on(call, getattr(target, name)))
        result = synth(profiles, "--out", out)
    assert result.exit_code == Exit.INTERRUPTED
    assert result.stderr == INTERRUPTED + "\n"
    assert result.stdout == ""
    assert files(out) == before  # no cluster half-written, no staged copy left behind
    assert synth(profiles, "--out", out, "--check").exit_code == STALE
    assert synth(profiles, "--out", out).exit_code == 0
    assert synth(profiles, "--out", out, "--check").exit_code == 0


#: A real ``gpustack synth`` that sends SIGINT to its process group as the first cluster is
#: rendered, as Ctrl-C in a terminal does, and takes a second to notice (its children, Node and
#: any worker, react first: their errors would show).
_HOOK = """
import os, signal, sys, time
from gpustack.synth import parallel, report
# Ctrl-C as a terminal's foreground job gets it: a suite started in the background (``make test
# &``) hands its children SIGINT ignored, and Python then installs no handler for it.
signal.signal(signal.SIGINT, signal.default_int_handler)
parallel.PER_WORKER_MIN = 1  # workers for two shapes
real = report.ProgressLine.__call__
def hook(self, done):
    if done == 1:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        os.killpg(0, signal.SIGINT)
        time.sleep(1)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    return real(self, done)
report.ProgressLine.__call__ = hook
sys.argv[0] = "gpustack"
from gpustack.__main__ import main
main()
"""

JOBS = {"in this process": "1", "in workers": "2"}


@pytest.mark.parametrize("jobs", JOBS.values(), ids=JOBS.keys())
def test_sigint_while_rendering_is_one_line_and_exit_130(profiles: Path, jobs: str) -> None:
    out = profiles.parent / "dist"
    text = PROFILE.format(name="beta").replace("product: L4", "product: L40S")
    (profiles / "beta.yaml").write_text(text)  # a second shape: one per worker
    done = subprocess.run(
        [sys.executable, "-c", _HOOK, "synth", str(profiles), "--out", str(out), "-j", jobs],
        env=clean_env(),
        capture_output=True,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
        timeout=300,
    )
    assert (done.returncode, done.stderr, done.stdout) == (Exit.INTERRUPTED, INTERRUPTED + "\n", "")
    assert not out.exists()


def test_the_console_script_entry_is_main_of_gpustack_main() -> None:
    """Ctrl-C during the CLI's import is handled there (the script imports nothing else)."""
    import tomllib

    doc = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert doc["project"]["scripts"]["gpustack"] == "gpustack.__main__:main"


def test_an_interrupt_while_the_cli_loads_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import builtins

    from gpustack import __main__ as entry

    real = builtins.__import__

    def interrupted(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "gpustack.cli":
            raise KeyboardInterrupt
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", interrupted)
    with pytest.raises(SystemExit) as exited:
        entry.main()
    assert exited.value.code == Exit.INTERRUPTED
    assert capsys.readouterr() == ("", INTERRUPTED + "\n")
