"""``gpustack completion SHELL`` prints click's completion script, and ``python -m gpustack``
is the command (issue #24, item 4: completion worked only through click's variable; ``-m``
failed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_synth_cli import GPUSTACK, clean_env
from tests.tooling import require_tool

SHELLS = ["bash", "zsh", "fish"]


def _run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*GPUSTACK, *args], env=clean_env(**env), capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize("shell", SHELLS)
def test_completion_prints_clicks_own_script(shell: str) -> None:
    printed = _run("completion", shell)
    assert printed.returncode == 0, printed.stderr
    own = _run(_GPUSTACK_COMPLETE=f"{shell}_source")  # what click prints for the variable
    assert own.returncode == 0
    assert printed.stdout == own.stdout and printed.stdout.strip()


#: what bash completes after the words typed, through the printed script
BASH = {
    "a command": (["gpustack", "sy"], ["synth"]),
    "an option": (["gpustack", "synth", "--fo"], ["--force", "--format"]),
    "a choice": (["gpustack", "completion", "z"], ["zsh"]),
}


@pytest.mark.parametrize(("words", "wanted"), BASH.values(), ids=BASH.keys())
def test_the_bash_script_completes(tmp_path: Path, words: list[str], wanted: list[str]) -> None:
    bash = require_tool("bash")
    script = _run("completion", "bash").stdout
    if Path(GPUSTACK[0]).name != "gpustack":
        pytest.fail("the console script is not installed next to this Python")
    (tmp_path / "gpustack.bash").write_text(script)
    words_shell = " ".join(f"'{w}'" for w in words)
    done = subprocess.run(
        [
            bash,
            "-c",
            f"source {tmp_path}/gpustack.bash; COMP_WORDS=({words_shell}); "
            f"COMP_CWORD={len(words) - 1}; _gpustack_completion gpustack; "
            'printf "%s\\n" "${COMPREPLY[@]}"',
        ],
        env=clean_env(PATH=f"{Path(GPUSTACK[0]).parent}{os.pathsep}{os.environ['PATH']}"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split()) == wanted


def test_python_m_gpustack_is_the_command(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gpustack", "--help"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: gpustack [OPTIONS] COMMAND")
    assert "completion" in done.stdout
