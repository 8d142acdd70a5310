"""Mutated inputs for every entry point that reads a file (issue #33, Deliver 2): the engine of
tests/test_reader_fuzz.py (a few hundred inputs) and bench/fuzz_readers.py (10,000 and more).

Each entry point is a command as a user runs it, in this process (click's runner: a traceback
is an exception the command let through), or the device plugin's config loader. An input is a
valid seed (profiles, manifests, recorded states, AICR snapshots, acceptance logs, plugin
configs from this repository) changed by one to three mutations: a value or line replaced by
one of :data:`TOKENS` (values PyYAML's constructors reject, alias bombs, deep nesting, NUL,
bad UTF-8, tags), bytes flipped, cut, doubled or truncated. Seeded, so a failure names its
input. An input that takes more than :data:`HANG_S` seconds of CPU, or :data:`HANG_WALL_S`
seconds of wall time (a read that blocks uses no CPU), is a hang: interval timers interrupt it.
CPU time, because on a shared machine wall time also counts the time others' processes ran.
"""

from __future__ import annotations

import json
import random
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from click.testing import CliRunner

from gpustack.cli import main

REPO = Path(__file__).resolve().parents[1]
HANG_S = 5.0
HANG_WALL_S = 60.0

#: What a mutation puts in: the shapes issue #33 found tracebacks for, and their kin.
TOKENS: list[bytes] = [
    b"2001-13-45", b"2001-02-30 25:61:61", b"1" * 4301, b"-" + b"9" * 5000, b"!!bool maybe",
    b"!!timestamp x", b"!!int x", b"!!float x", b"!!binary ???", b"!!set {a: 1}", b"!!omap [a]",
    b"!!python/object:os.system x", b"!!str", b"!custom x", b"&a [*a, *a]", b"*undefined",
    b"<<: *a", b"<<: [1, 2]", b"? [a, b]\n: c", b"{a: 1, a: 2}", b"\x00", b"\xff\xfe", b"\t",
    b"[" * 200, b"{" * 100, b"-1e999", b".nan", b"0x", b"0o9", b"0b2", b"~", b"null", b"'",
    b'"', b"|", b">-", b"%YAML 1.1\n---", b"---", b"...", b"\xef\xbb\xbf", "\u2028".encode(),
    b'{"a": ' + b"[" * 3000 + b"]" * 3000 + b"}", b"[]", b"{}", b"1.30", b"on", b"yes",
    b"GPUSTACK-ACCEPT " + b"[" * 3000, b'GPUSTACK-ACCEPT {"check": 1, "gpus": "x", "mig": [1]}',
    b'GPUSTACK-ACCEPT {"expect": 3, "problems": 7, "container": []}',
]  # fmt: skip


def _laughs() -> bytes:
    lines = [b'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for name, previous in zip("bcdefghi", "abcdefgh", strict=True):
        lines.append(f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]".encode())
    return b"\n".join(lines) + b"\n"


def mutate(seed: bytes, rng: random.Random) -> bytes:
    """``seed`` changed by one to three mutations."""
    data = seed
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        lines = data.split(b"\n")
        i = rng.randrange(len(lines))
        if op < 0.35 and b": " in lines[i]:  # a value replaced
            key = lines[i].split(b": ", 1)[0]
            lines[i] = key + b": " + rng.choice(TOKENS)
        elif op < 0.5:  # a line inserted, with the indentation of its neighbour
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            lines.insert(i, indent + rng.choice(TOKENS))
        elif op < 0.6:  # a line removed or doubled
            if rng.random() < 0.5:
                del lines[i]
            else:
                lines.insert(i, lines[i])
        elif op < 0.7 and data:  # bytes flipped
            raw = bytearray(data)
            for _ in range(rng.randint(1, 8)):
                raw[rng.randrange(len(raw))] = rng.randrange(256)
            return bytes(raw)
        elif op < 0.8 and data:  # truncated
            return data[: rng.randrange(len(data))]
        elif op < 0.9:  # a token anywhere in a line
            at = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:at] + rng.choice(TOKENS) + lines[i][at:]
        else:  # a whole hostile document
            return rng.choice([_laughs(), rng.choice(TOKENS), b"kind: Pod\nspec: &x\n  <<: *x\n"])
        data = b"\n".join(lines)
    return data


@dataclass(frozen=True)
class Entry:
    """One way a user hands gpustack a file: ``run(file)`` returns the exception the entry
    point let through (``None`` when it answered: any status, a message)."""

    seeds: Callable[[], list[bytes]]
    run: Callable[[Path], BaseException | None]


def _cli(*argv: str, stdin: bool = False) -> Callable[[Path], BaseException | None]:
    def run(file: Path) -> BaseException | None:
        args = [a.replace("{}", "-" if stdin else str(file)) for a in argv]
        done = CliRunner().invoke(main, args, input=file.read_bytes() if stdin else None)
        if done.exception is not None and not isinstance(done.exception, SystemExit):
            return done.exception
        return None

    return run


def _plugin_config(file: Path) -> BaseException | None:
    from gpustack.plugin.config import ConfigError, load_config

    try:
        load_config(file)
    except ConfigError:
        pass
    except Exception as exc:  # the plugin would die with a traceback
        return exc
    return None


def _files(*patterns: str) -> Callable[[], list[bytes]]:
    return lambda: [p.read_bytes() for pat in patterns for p in sorted(REPO.glob(pat))]


def _logs() -> list[bytes]:
    lines = [
        {"check": "devices", "node": "n1", "pod": "p", "ok": True, "gpus": ["NVIDIA H100"] * 8},
        {"check": "allreduce-node", "node": "n1", "ok": False, "busbw": 1.0, "problems": ["x"]},
    ]
    return [
        "\n".join(f"[pod/x/c] GPUSTACK-ACCEPT {json.dumps(x)}" for x in lines).encode(),
        *_files("tests/accept/listings/*.txt")(),
    ]


PROFILE = str(REPO / "tests" / "doctor" / "profile.yaml")
STATE = str(REPO / "tests" / "doctor" / "fixtures" / "healthy.json")
_PROFILES = _files("profiles/*.yaml", "tests/profile/cases/valid/*.yaml")
_STATES = _files("tests/doctor/fixtures/*.json", "tests/nodestate/fixtures/*.json")
_SNAPSHOTS = _files("tests/nodestate/fixtures/*.yaml")

ENTRIES: dict[str, Entry] = {
    "validate": Entry(_PROFILES, _cli("validate", "{}")),
    "lint": Entry(_files("tests/lint/cases/*/*.yaml"), _cli("lint", "{}")),
    "lint-stdin": Entry(_files("tests/lint/cases/*/*.yaml"), _cli("lint", "{}", stdin=True)),
    "lint-profile": Entry(_PROFILES, _cli("lint", "--profile", "{}", STATE)),
    "validate-state": Entry(
        lambda: _STATES() + _SNAPSHOTS(), _cli("validate", PROFILE, "--state", "{}")
    ),
    "doctor-state": Entry(_STATES, _cli("doctor", "--profile", PROFILE, "--state", "{}")),
    "doctor-state-stdin": Entry(
        _STATES, _cli("doctor", "--profile", PROFILE, "--state", "{}", stdin=True)
    ),
    "accept-manifests-state": Entry(
        lambda: _STATES() + _SNAPSHOTS(), _cli("accept", "manifests", PROFILE, "--state", "{}")
    ),
    "accept-report": Entry(_logs, _cli("accept", "report", PROFILE, "{}")),
    "plugin-config": Entry(_files("tests/plugin/configs/valid/*.yaml"), _plugin_config),
}


class Hang(BaseException):
    """Raised by the interval timer in an input that ran past :data:`HANG_S`."""


@contextmanager
def _deadline(cpu_s: float, wall_s: float) -> Iterator[None]:
    def fire(_signum: int, _frame: FrameType | None) -> None:
        raise Hang

    previous = [signal.signal(s, fire) for s in (signal.SIGPROF, signal.SIGALRM)]
    signal.setitimer(signal.ITIMER_PROF, cpu_s)
    signal.setitimer(signal.ITIMER_REAL, wall_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        for s, handler in zip((signal.SIGPROF, signal.SIGALRM), previous, strict=True):
            signal.signal(s, handler)


@dataclass
class Outcome:
    entry: str
    inputs: int = 0
    tracebacks: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    #: Wall seconds of the run, and CPU seconds of its slowest input.
    seconds: float = 0.0
    slowest: float = 0.0


def fuzz(name: str, count: int, seed: int = 20261205) -> Outcome:
    """``count`` mutated inputs through the entry point ``name``."""
    entry = ENTRIES[name]
    seeds = entry.seeds()
    rng = random.Random(f"{seed}-{name}")
    outcome = Outcome(name)
    with tempfile.TemporaryDirectory(prefix="gpustack-fuzz-") as tmp:
        file = Path(tmp) / "input.yaml"
        started = time.monotonic()
        for i in range(count):
            data = mutate(rng.choice(seeds), rng)
            file.write_bytes(data)
            began = time.process_time()
            try:
                with _deadline(HANG_S, HANG_WALL_S):
                    escaped = entry.run(file)
            except Hang:
                outcome.hangs.append(f"{name} #{i}: {data[:200]!r}")
                escaped = None
            outcome.slowest = max(outcome.slowest, time.process_time() - began)
            if isinstance(escaped, Hang):
                outcome.hangs.append(f"{name} #{i}: {data[:200]!r}")
            elif escaped is not None:
                outcome.tracebacks.append(f"{name} #{i}: {escaped!r} on {data[:200]!r}")
            outcome.inputs += 1
        outcome.seconds = time.monotonic() - started
    return outcome
