"""Every file option of every command, found in the click tree, against every hostile input
(issue #33, Deliver 2).

tests/test_hostile_inputs.py drives a hand-written list of entry points; ``validate --state``,
``accept manifests --state`` and ``accept report`` were not on it, and read their files
without gpustack's limits (a FIFO hung them, ``/dev/zero`` filled the memory). Here the list
is the command line itself: :func:`file_options` walks ``gpustack``'s click tree, and every
parameter of every command must be a file option (a ``click.Path``/``click.File``, or a string
declared in :data:`NAMED_FILES`) or declared in :data:`NOT_FILES`, so a new command or option
fails :func:`test_every_parameter_is_classified` until it is driven here.

Each case runs the command in a forked child of this process (the CLI is imported once: a
case costs a fork, not an interpreter start) under a hard address-space limit and a hard
timeout, with the hostile input as that one option (and as standard input where the option
takes ``-``). It must end with status 1 or 2 and without a traceback. The test prints the
command x option x input matrix it drove (``pytest -s``).
"""

from __future__ import annotations

import os
import resource
import signal
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from gpustack.cli import main
from tests.hostile import laughs, write_large

REPO = Path(__file__).resolve().parents[1]
PROFILE = REPO / "tests" / "doctor" / "profile.yaml"
STATE = REPO / "tests" / "doctor" / "fixtures" / "healthy.json"
#: A run past these is a hang or a reader without limits (the regressions: 6.9 GB in 10 s).
TIMEOUT_S = 20
ADDRESS_SPACE = 3 << 30

#: Parameters that are not files, by command.
NOT_FILES: dict[str, set[str]] = {
    "accept manifests": {"nodes", "tolerance", "min_busbw", "image"},
    "accept report": {"nodes", "tolerance", "min_busbw", "fmt"},
    "completion": {"shell"},
    "doctor": {"use_kubectl", "kube_context", "fmt"},
    "explain": {"graph"},
    "init": {"name", "product", "gpus_per_node", "example_gpus"},
    "lint": {"fmt", "disabled"},
    "plan": {"base", "fmt", "exit_code"},
    "images": {"fmt", "cluster"},
    "synth": {
        "check", "base", "full", "force", "prune", "default_profile", "jobs", "quiet", "fmt",
        "diff",
    },
    "template": {"argocd"},
    "validate": {"fmt", "use_kubectl", "kube_context"},
}  # fmt: skip
#: String parameters that name files (``lint`` takes paths, folders and ``-`` as strings).
NAMED_FILES: dict[str, set[str]] = {"lint": {"paths"}}
#: Folders a command writes into: a hostile one must be refused too, but a usable one is fine.
OUTPUTS = {("init", "profiles_dir"), ("synth", "out")}


def commands(group: click.Group = main, prefix: str = "") -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    for name, cmd in group.commands.items():
        full = f"{prefix}{name}"
        if isinstance(cmd, click.Group):
            found.update(commands(cmd, f"{full} "))
        else:
            found[full] = cmd
    return found


def _is_file(command: str, param: click.Parameter) -> bool:
    return isinstance(param.type, click.Path | click.File) or param.name in NAMED_FILES.get(
        command, set()
    )


def file_options() -> list[tuple[str, str]]:
    """(command, parameter name) for every file parameter of every command."""
    return [
        (name, str(p.name))
        for name, cmd in commands().items()
        for p in cmd.params
        if _is_file(name, p)
    ]


def _takes_dash(command: str, param: str) -> bool:
    found = next(p for p in commands()[command].params if p.name == param)
    return isinstance(param_type := found.type, click.File) or bool(
        getattr(param_type, "allow_dash", False) or param in NAMED_FILES.get(command, set())
    )


# --- the hostile inputs -------------------------------------------------------------------------


def _profile_with(value: str) -> Callable[[Path], object]:
    """A valid profile with one more value (a constructor-error scalar); every reader reads it."""
    return lambda p: p.write_text(PROFILE.read_text() + f"annotations: {value}\n")


def _unreadable(p: Path) -> None:
    """No permission to read (root reads it anyway, and finds no valid YAML)."""
    p.write_text("kind: [\n")
    p.chmod(0)


#: name -> how to make it at a path; a string names an existing path.
INPUTS: dict[str, Callable[[Path], object] | str] = {
    "fifo": lambda p: os.mkfifo(p),
    "dev-zero": "/dev/zero",
    "dev-urandom": "/dev/urandom",
    "link-to-dev-zero": lambda p: p.symlink_to("/dev/zero"),
    "symlink-loop": lambda p: p.symlink_to(p.name),
    "folder": lambda p: p.mkdir(),
    "unreadable": _unreadable,
    "empty": lambda p: p.write_bytes(b""),
    "large-40MB": write_large,
    "nested-3000": lambda p: p.write_text('{"items": ' + "[" * 3000 + "]" * 3000 + "}\n"),
    "billion-laughs": lambda p: p.write_text(laughs()),
    "self-merge": lambda p: p.write_text("kind: Pod\nspec: &x\n  <<: *x\n  containers: []\n"),
    "bad-utf8": lambda p: p.write_bytes(b"kind: Pod\nmetadata: {name: \xff\xfe}\n"),
    "nul": lambda p: p.write_bytes(b"kind: Pod\x00\nmetadata: {}\n"),
    "binary": lambda p: p.write_bytes(bytes(range(256)) * 64),
    "date-2001-13-45": _profile_with("2001-13-45"),
    "int-4301-digits": _profile_with("1" * 4301),
    "bool-maybe": _profile_with("!!bool maybe"),
    "timestamp-x": _profile_with("!!timestamp x"),
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each hostile input made once (they are only read), by name; and what every command
    loads (the rules, the catalog) loaded here once, so each forked child starts warm."""
    from gpustack.accept import plan  # noqa: F401 - imported to warm the children
    from gpustack.accept import report as accept_report  # noqa: F401
    from gpustack.checker import check_paths
    from gpustack.doctor import checks, report  # noqa: F401
    from gpustack.kube import manifests  # noqa: F401
    from gpustack.nodestate import source, validate  # noqa: F401

    check_paths([PROFILE])
    folder = tmp_path_factory.mktemp("hostile")
    made: dict[str, str] = {}
    for name, make in INPUTS.items():
        if isinstance(make, str):
            made[name] = make
        else:
            make(folder / f"{name}.yaml")
            made[name] = str(folder / f"{name}.yaml")
    return made


# --- running one command in a forked child ------------------------------------------------------


#: The status of a child killed at :data:`TIMEOUT_S`.
HUNG = -int(signal.SIGKILL)


@dataclass(frozen=True)
class Ran:
    status: int
    output: str
    seconds: float


def run_forked(argv: list[str], cwd: Path, stdin: str = os.devnull) -> Ran:
    """``gpustack *argv`` in a forked child, its standard streams on files; a traceback it
    prints, and status 70, for any exception click does not turn into an exit."""
    out = cwd / ".output"
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        status = 70
        try:
            os.setpgid(0, 0)
            resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
            os.chdir(cwd)
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            source = os.open(stdin, os.O_RDONLY | os.O_NONBLOCK)
            os.set_blocking(source, True)
            os.dup2(source, 0)
            sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
            sys.stdout = sys.stderr = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
            os.environ["NO_COLOR"] = "1"
            try:
                main.main(args=argv, prog_name="gpustack", standalone_mode=True)
                status = 0
            except SystemExit as exc:
                status = exc.code if isinstance(exc.code, int) else 1
            except BaseException:
                traceback.print_exc()
            sys.stdout.flush()
        finally:
            os._exit(status)
    while True:
        done, wait_status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - started > TIMEOUT_S:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return Ran(HUNG, f"ran past {TIMEOUT_S} s (a hang)", time.monotonic() - started)
        time.sleep(0.005)
    text = out.read_text(errors="replace") if out.exists() else ""
    return Ran(os.waitstatus_to_exitcode(wait_status), text, time.monotonic() - started)


# --- what each command is given besides the option under test -----------------------------------


def _valid(command: str, tmp: Path) -> dict[str, str]:
    manifest = tmp / "pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n")
    logs = tmp / "logs.txt"
    logs.write_text("")
    return {
        "accept manifests": {"profile_path": str(PROFILE), "state_path": str(STATE)},
        "accept report": {"profile_path": str(PROFILE), "logs": str(logs)},
        "doctor": {"profile_path": str(PROFILE), "state_path": str(STATE)},
        "init": {"name": "c1", "product": "H100-SXM5-80GB", "profiles_dir": str(tmp / "p")},
        "lint": {"paths": str(manifest), "profile_path": str(PROFILE)},
        "synth": {"paths": str(PROFILE), "out": str(tmp / "dist"), "check": "true"},
        "plan": {"paths": str(PROFILE), "out": str(tmp / "dist")},
        "images": {"profiles": str(PROFILE)},
        "template": {"profile": str(PROFILE)},
        "explain": {"profile": str(PROFILE)},
        "validate": {"paths": str(PROFILE), "state_path": str(STATE)},
        "completion": {"shell": "bash"},
    }[command]


def argv_for(command: str, values: dict[str, str]) -> list[str]:
    """The command line that gives each parameter its value (flags by ``"true"``)."""
    argv = command.split()
    for p in commands()[command].params:
        if p.name not in values:
            continue
        value = values[str(p.name)]
        if isinstance(p, click.Argument):
            argv.append(value)
        elif isinstance(p, click.Option) and p.is_flag:
            argv.append(p.opts[0])
        else:
            argv += [p.opts[0], value]
    return argv


#: Inputs a reader may take as valid: ``lint`` reads an empty file as no objects and keeps a
#: value YAML cannot type as its text (as the API server would); ``accept report`` reads any
#: text as a log and reports the results it lacks.
_SCALARS = {"date-2001-13-45", "int-4301-digits", "bool-maybe", "timestamp-x"}
_TEXT = {"empty", "large-40MB", "nested-3000", "billion-laughs", "self-merge", "bad-utf8", "nul"}
VALID_FOR: dict[tuple[str, str], set[str]] = {
    ("lint", "paths"): {"empty", *_SCALARS},
    ("accept report", "logs"): {*_TEXT, "binary", "unreadable", *_SCALARS},
}


def _problem(ran: Ran, argv: list[str], named: str | None, valid: bool) -> str | None:
    """What is wrong with a run: a traceback, a status other than 1 or 2 (0 too where the input
    is ``valid`` for the option), or (``named``) a refusal that does not name the input, so it
    is not the hostile input that failed the command."""
    shown = f"gpustack {' '.join(argv)}"
    if ran.status == HUNG:
        return f"{shown}: {ran.output}"
    if "Traceback" in ran.output:
        return f"{shown}: a traceback\n{ran.output[-2000:]}"
    if ran.status not in ((0, 1, 2) if valid else (1, 2)):
        return f"{shown}: status {ran.status}\n{ran.output[-2000:]}"
    if not ran.output.strip():
        return f"{shown}: said nothing"
    if named is not None and not valid and named not in ran.output:
        return f"{shown}: does not name {named}\n{ran.output[-2000:]}"
    return None


OPTIONS = [pytest.param(c, p, id=f"{c.replace(' ', '-')}-{p}") for c, p in file_options()]
DASH_OPTIONS = [
    pytest.param(c, p, id=f"{c.replace(' ', '-')}-{p}")
    for c, p in file_options()
    if _takes_dash(c, p)
]
#: The shell opens these before gpustack starts (a FIFO blocks it there).
_NOT_ON_STDIN = {"fifo", "folder", "symlink-loop", "unreadable"}
DRIVEN: list[str] = []


@pytest.mark.parametrize(("command", "param"), OPTIONS)
def test_every_hostile_input_to_a_file_option_is_refused(
    tmp_path: Path, inputs: dict[str, str], command: str, param: str
) -> None:
    output = (command, param) in OUTPUTS
    problems = []
    for name in INPUTS:
        if output and name == "folder":
            continue  # a usable output folder: synth would synthesize, which is not reading
        cwd = tmp_path / name
        cwd.mkdir()
        argv = argv_for(command, {**_valid(command, cwd), param: inputs[name]})
        ran = run_forked(argv, cwd)
        DRIVEN.append(f"{command} {param} {name}: status {ran.status} in {ran.seconds:.2f} s")
        valid = output or name in VALID_FOR.get((command, param), set())
        problems.append(_problem(ran, argv, Path(inputs[name]).name, valid))
    assert not [p for p in problems if p], "\n".join(p for p in problems if p)


@pytest.mark.parametrize(("command", "param"), DASH_OPTIONS)
def test_every_hostile_stdin_is_refused(
    tmp_path: Path, inputs: dict[str, str], command: str, param: str
) -> None:
    problems = []
    for name in INPUTS:
        if name in _NOT_ON_STDIN:
            continue
        cwd = tmp_path / name
        cwd.mkdir()
        argv = argv_for(command, {**_valid(command, cwd), param: "-"})
        ran = run_forked(argv, cwd, stdin=inputs[name])
        DRIVEN.append(f"{command} {param} - <{name}: status {ran.status} in {ran.seconds:.2f} s")
        valid = name in VALID_FOR.get((command, param), set())
        problems.append(_problem(ran, argv, "stdin", valid))
    assert not [p for p in problems if p], "\n".join(p for p in problems if p)


def test_every_parameter_is_classified() -> None:
    """A new command or option is a file (driven above) or declared not to be one."""
    unknown = [
        f"{name} {p.name}"
        for name, cmd in commands().items()
        for p in cmd.params
        if not _is_file(name, p) and p.name not in NOT_FILES.get(name, set())
    ]
    assert not unknown, f"classify these in NOT_FILES or drive them: {unknown}"
    assert {c for c, _ in file_options()} | set(NOT_FILES) == set(commands())


def test_the_matrix_covers_the_known_readers() -> None:
    """The options issue #33 found reading without limits are among those driven."""
    driven = set(file_options())
    assert {
        ("validate", "state_path"),
        ("accept manifests", "state_path"),
        ("accept report", "logs"),
    } <= driven


def test_the_harness_tells_a_refusal_from_an_answer(tmp_path: Path) -> None:
    """A valid profile, given where a hostile input goes, is a problem for the check."""
    argv = ["validate", str(PROFILE)]
    ran = run_forked(argv, tmp_path)
    assert _problem(ran, argv, "profile.yaml", valid=False) is not None
    assert _problem(ran, argv, "profile.yaml", valid=True) is None


def test_a_valid_run_passes_the_harness(tmp_path: Path) -> None:
    """The harness can tell success: a valid command exits 0 in the child."""
    argv = ["validate", str(PROFILE)]
    ran = run_forked(argv, tmp_path)
    assert ran.status == 0, ran.output


def test_an_exception_in_the_child_is_a_traceback(tmp_path: Path) -> None:
    """The harness can fail: a command that raises shows a traceback and status 70."""
    argv = ["validate", "--format", "json", str(PROFILE)]
    from unittest import mock

    with mock.patch("gpustack.report.render", side_effect=RuntimeError("boom")):
        ran = run_forked(argv, tmp_path)
    assert ran.status == 70 and "Traceback" in ran.output, ran.output


def teardown_module() -> None:
    if DRIVEN:
        print(f"\ndrove {len(DRIVEN)} command x option x input cases:")
        print("\n".join(DRIVEN))
