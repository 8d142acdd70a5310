"""Every entry point against hostile files (issue #21, Deliver 2), through its command line.

The loader's own tests (tests/profile/test_limits.py) once passed while ``validate`` hung on a
FIFO: a second reader (``strays.manifest_kinds``) read the file again without the limits. So
here each command runs as a process, as a user or CI runs it, on each hostile file: a FIFO,
``/dev/zero``, a link to it, 3,000-level nesting, a "billion laughs" file of nested aliases, a
YAML merge key that merges its own mapping, and a 40 MB file. The process runs under a hard
address-space limit (RLIMIT_AS) and a hard timeout, each far below what the regressions took
(4.6 GB in 8 s, past 120 s at 3.2 GB); it must exit with the documented status and say what is
wrong in one line naming the file, without a traceback. How long and how much memory each
answer takes is measured by ``bench/hostile_inputs.py``, not asserted here.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.hostile import laughs, write_large

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PROFILE = REPO / "tests" / "doctor" / "profile.yaml"
STATE = REPO / "tests" / "doctor" / "fixtures" / "healthy.json"
#: Hard bounds: a run past them is killed (or fails to allocate) and fails. The measured
#: answers take well under a second and 100 MB resident (bench/hostile_inputs.py). The
#: address-space limit is inherited by what a command starts: ``synth`` starts Node for cdk8s in
#: the background as soon as a cluster is out of date, and V8 reserves about 1.5 GB of address
#: space, so the limit sits at 2 GiB, still below what each regression took (3.2 to 4.6 GB).
TIMEOUT_S = 20
ADDRESS_SPACE = 2 << 30


#: name -> how to make it at a path (``/dev/zero`` is named directly: nothing to make).
INPUTS: dict[str, Callable[[Path], object] | None] = {
    "fifo": lambda p: os.mkfifo(p),
    "dev-zero": None,
    "link-to-dev-zero": lambda p: p.symlink_to("/dev/zero"),
    # JSON is YAML too: one text nests 3,000 deep for every reader
    "nested-3000": lambda p: p.write_text('{"a": ' + "[" * 3000 + "]" * 3000 + "}\n"),
    "billion-laughs": lambda p: p.write_text(laughs()),
    # a merge key that merges its own mapping: PyYAML's readers recurse on it without end
    "self-merge": lambda p: p.write_text("kind: Pod\nspec: &x\n  <<: *x\n  containers: []\n"),
    "large-40MB": write_large,
}


@dataclass(frozen=True)
class Entry:
    """One way a user hands gpustack a file: ``argv(file, tmp)``, the exit status it documents,
    and whether the file is given on standard input."""

    argv: Callable[[str, Path], list[str]]
    status: int
    stdin: bool = False
    env: Callable[[str], dict[str, str]] | None = None


def _argocd_env(file: str) -> dict[str, str]:
    return {"ARGOCD_APP_PARAMETERS": json.dumps([{"name": "profile", "string": file}])}


ENTRIES: dict[str, Entry] = {
    "validate": Entry(lambda f, t: ["gpustack", "validate", f], 1),
    "validate-folder": Entry(lambda f, t: ["gpustack", "validate", str(Path(f).parent)], 1),
    "synth": Entry(lambda f, t: ["gpustack", "synth", "--out", str(t / "dist"), f], 1),
    "template": Entry(lambda f, t: ["gpustack", "template", f], 1),
    "template-argocd": Entry(lambda f, t: ["gpustack", "template", "--argocd"], 1, env=_argocd_env),
    "lint": Entry(lambda f, t: ["gpustack", "lint", f], 1),
    "lint-stdin": Entry(lambda f, t: ["gpustack", "lint", "-"], 1, stdin=True),
    "lint-profile": Entry(lambda f, t: ["gpustack", "lint", "--profile", f, str(STATE)], 1),
    "doctor-state": Entry(
        lambda f, t: ["gpustack", "doctor", "--profile", str(PROFILE), "--state", f], 1
    ),
    "doctor-state-stdin": Entry(
        lambda f, t: ["gpustack", "doctor", "--profile", str(PROFILE), "--state", "-"],
        1,
        stdin=True,
    ),
    "doctor-profile": Entry(
        lambda f, t: ["gpustack", "doctor", "--profile", f, "--state", str(STATE)], 1
    ),
    "plugin-config": Entry(
        lambda f, t: [
            "gpustack-device-plugin",
            "--config-file",
            f,
            "--socket-dir",
            str(t),
            "--kubelet-socket",
            "",
        ],
        1,
    ),
}


def applies(entry: str, name: str) -> bool:
    """A FIFO on standard input is the shell's business (it blocks before gpustack starts); a
    folder holds no ``/dev/zero`` (a link to it is the folder's case)."""
    if ENTRIES[entry].stdin and name == "fifo":
        return False
    return not (entry == "validate-folder" and name == "dev-zero")


CASES = [
    pytest.param(entry, name, id=f"{entry}-{name}")
    for entry in ENTRIES
    for name in INPUTS
    if applies(entry, name)
]


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    os.setsid()


@dataclass(frozen=True)
class Ran:
    status: int
    out: str
    err: str
    #: Seconds and peak resident KiB of the process (for bench/hostile_inputs.py).
    seconds: float
    max_rss_kib: int


def run_hostile(entry: Entry, file: str, tmp: Path, stdin_path: str | None = None) -> Ran:
    """Run one entry point under the hard limits; the test fails if it outlives them."""
    argv = entry.argv(file, tmp)
    env = {**os.environ, "NO_COLOR": "1", "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    if entry.env is not None:
        env.update(entry.env(file))
    out, err = tmp / "stdout", tmp / "stderr"
    with out.open("wb") as o, err.open("wb") as e:
        stdin = open(stdin_path or os.devnull, "rb")  # noqa: SIM115 - closed below
        try:
            proc = subprocess.Popen(
                [str(BIN / argv[0]), *argv[1:]],
                stdin=stdin,
                stdout=o,
                stderr=e,
                cwd=tmp,
                env=env,
                preexec_fn=_limits,
            )
        finally:
            stdin.close()
        started = time.monotonic()
        while True:  # os.wait4: this process's own rusage, not every child's maximum
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > TIMEOUT_S:
                os.killpg(proc.pid, signal.SIGKILL)
                os.wait4(proc.pid, 0)
                proc.returncode = -signal.SIGKILL
                pytest.fail(f"{' '.join(argv)} ran past {TIMEOUT_S} s")
            time.sleep(0.01)
        seconds = time.monotonic() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Ran(proc.returncode, out.read_text(), err.read_text(), seconds, usage.ru_maxrss)


def make_input(name: str, tmp: Path) -> str:
    """The hostile file, as a name relative to ``tmp`` (the working directory)."""
    make = INPUTS[name]
    if make is None:
        return "/dev/zero"
    folder = tmp / "in"
    folder.mkdir()
    make(folder / "p.yaml")
    return "in/p.yaml"


@pytest.mark.parametrize(("entry_name", "input_name"), CASES)
def test_a_hostile_file_is_one_line_and_the_documented_status(
    tmp_path: Path, entry_name: str, input_name: str
) -> None:
    entry = ENTRIES[entry_name]
    file = make_input(input_name, tmp_path)
    stdin = str(tmp_path / file) if entry.stdin else None
    ran = run_hostile(entry, file, tmp_path, stdin_path=stdin)
    output = ran.out + ran.err
    assert "Traceback" not in output, output[-3000:]
    assert ran.status == entry.status, output[-3000:]
    lines = output.splitlines()
    shown = "<stdin>" if entry.stdin else file
    # one line names the file and says what is wrong; a report adds its summary line
    assert [line for line in lines if shown in line] == lines[:1], output[-3000:]
    assert len(lines) <= 2 and len(lines[0]) < 300, output[-3000:]


# --- what synth reads back from its own output folder -------------------------------------------


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with one profile and its synthesized dist/ (made once, copied per case)."""
    root = tmp_path_factory.mktemp("synthesized")
    (root / "profiles").mkdir()
    shutil.copy(PROFILE, root / "profiles" / "gpu.yaml")
    done = subprocess.run(
        [str(BIN / "gpustack"), "synth", "-q"], cwd=root, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return root


INDEX_INPUTS = ["fifo", "link-to-dev-zero", "large-40MB"]


@pytest.mark.parametrize("check", [True, False], ids=["check", "write"])
@pytest.mark.parametrize("input_name", INDEX_INPUTS)
def test_a_hostile_index_is_one_line(
    synthesized: Path, tmp_path: Path, input_name: str, check: bool
) -> None:
    """A pull request can put anything at dist/.gpustack/index.json: synth and synth --check
    refuse it in one line instead of waiting on it or reading it without end."""
    root = tmp_path / "repo"
    shutil.copytree(synthesized, root, symlinks=True)
    index = root / "dist" / ".gpustack" / "index.json"
    index.unlink()
    make = INPUTS[input_name]
    assert make is not None
    make(index)
    entry = Entry(lambda f, t: ["gpustack", "synth", *(["--check"] if check else [])], 1)
    ran = run_hostile(entry, "dist/.gpustack/index.json", root)
    output = ran.out + ran.err
    assert "Traceback" not in output, output[-3000:]
    assert ran.status == 1, output[-3000:]
    assert output.splitlines() == [_REFUSAL[input_name]]


_UNREADABLE = (
    "Error: cannot read dist/.gpustack/index.json: not a regular file (a FIFO, socket or "
    "device); remove it, or restore it from git"
)
#: What each answer is: a large file is within the index's 64 MiB, read, and is no index.
_REFUSAL = {
    "fifo": _UNREADABLE,
    "link-to-dev-zero": _UNREADABLE,
    "large-40MB": "Error: dist/.gpustack/index.json is not a gpustack index; restore it from git "
    "(`git checkout -- dist/.gpustack/index.json`), or delete the output folder's .gpustack/ "
    "and re-run with --force to take the folder over",
}
