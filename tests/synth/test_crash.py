"""Crash safety: SIGKILL a run at random points, then check what a killed run may leave.

After every kill each cluster folder is whole, old or new (never a mix, never a staging folder
under ``clusters/``); ``compare`` (``--check``) says "up to date" exactly when the output is the
new state with no leftovers; and the next run, whichever way it goes, needs no ``--force`` (a
killed run leaves no false "hand edits") and leaves the exact new state with nothing hidden.

The run is a forked copy of this process doing what ``gpustack synth`` does after cdk8s (which
writes nothing): :func:`~gpustack.synth.writer.run`, lock, plan and apply. Forking costs no
interpreter start, so a few seconds give dozens of kills; half of them are drawn from the end of
a run, where folders are swapped and the index is rewritten. The seed is printed on failure and
``GPUSTACK_CRASH_SEED`` replays it.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest

from gpustack.synth import fsswap, writer
from gpustack.synth.layout import ClusterOutput, ManifestFile
from gpustack.synth.statcache import CACHE_NAME
from gpustack.synth.writer import SourcedCluster, compare, make_plan, run

from .objects import tree

BUDGET_S = 3.0
MAX_KILLS = 60
FILES = 30


def cluster(name: str, version: int) -> SourcedCluster:
    # Version 2 changes every file and drops and adds some, so old and new are told apart.
    paths = [f"part-{i % 4}/object-{i}.yaml" for i in range(version * 5, FILES + version * 5)]
    files = [ManifestFile(p, f"{name} v{version} {p}\n".encode()) for p in paths]
    files.append(ManifestFile("kustomization.yaml", f"{name} v{version}\n".encode()))
    return SourcedCluster(ClusterOutput(name, tuple(files)), f"../profiles/{name}.yaml")


#: a, b and c; then a changes, b stays, c's profile is deleted (pruned) and d is new.
A = [cluster("a", 1), cluster("b", 1), cluster("c", 1)]
B = [cluster("a", 2), cluster("b", 1), cluster("d", 1)]


def set_profiles(root: Path, *names: str) -> None:
    """Make ``root/profiles`` hold exactly ``names`` (what decides what a run removes)."""
    folder = root / "profiles"
    folder.mkdir(exist_ok=True)
    for p in folder.iterdir():
        if p.stem not in names:
            p.unlink()
    for n in names:
        (folder / f"{n}.yaml").write_text(f"metadata: {{name: {n}}}\n")


def run_b_in_child(out: Path) -> int:
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns into pytest
        code = 1
        try:
            run(out, B, prune=True)
            code = 0
        finally:
            os._exit(code)
    return pid


def part(snapshot: dict[str, bytes | None], name: str) -> dict[str, bytes | None]:
    prefix = f"clusters/{name}"
    return {k: v for k, v in snapshot.items() if k == prefix or k.startswith(prefix + "/")}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_sigkill_at_random_points_leaves_old_or_new_and_an_honest_check(tmp_path: Path) -> None:
    seed = int(os.environ.get("GPUSTACK_CRASH_SEED", random.randrange(2**32)))
    rng = random.Random(seed)
    out = tmp_path / "dist"
    set_profiles(tmp_path, "a", "b", "c")
    run(out, A)
    old = tree(out)
    set_profiles(tmp_path, "a", "b", "d")
    began = time.monotonic()
    run(out, B, prune=True)
    duration = time.monotonic() - began
    new = tree(out)

    kills = 0
    outcomes: set[str] = set()
    deadline = time.monotonic() + BUDGET_S
    while kills < MAX_KILLS and time.monotonic() < deadline:
        set_profiles(tmp_path, "a", "b", "c")
        run(out, A, prune=True)  # back to A, from a killed state too, and without --force
        assert tree(out) == old, f"seed {seed}"
        set_profiles(tmp_path, "a", "b", "d")
        at = rng.uniform(0, 1.2) if rng.random() < 0.5 else rng.uniform(0.6, 1.1)
        pid = run_b_in_child(out)
        time.sleep(at * duration)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        kills += 1

        now = tree(out)
        for name in ("a", "b", "c", "d"):
            got = part(now, name)
            assert got in (part(old, name), part(new, name)), (
                f"seed {seed}: clusters/{name} is neither old nor new"
            )
        visible = {k.split("/")[1] for k in now if k.startswith("clusters/")}
        assert visible <= {"a", "b", "c", "d"}, f"seed {seed}: {visible}"  # staging stays out
        up_to_date = compare(make_plan(out, B, prune=True)) == []
        assert up_to_date == (now == new), f"seed {seed}: --check is not honest"
        outcomes.add("new" if now == new else "old" if now == old else "between")

        run(out, B, prune=True)
        assert tree(out) == new, f"seed {seed}: the next run did not finish the job"
        # nothing left over; the local stat cache may stay (gpustack.synth.statcache)
        assert set(os.listdir(out / ".gpustack")) - {CACHE_NAME} == {"index.json"}
    print(f"seed {seed}: {kills} kills, outcomes {sorted(outcomes)}", file=sys.stderr)
    assert kills >= 5, f"seed {seed}: only {kills} kills in {BUDGET_S} s"


class Killed(BaseException):
    """Stands for SIGKILL: no ``except`` clause of the writer catches it, so nothing rolls back."""


#: The writer's steps that change the disk; a run is "killed" right before one of them.
STEPS = [(writer, "_stage"), (writer, "_write_index"), (fsswap, "swap_in"), (fsswap, "remove")]


def test_a_kill_before_any_step_leaves_old_or_new_and_an_honest_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deterministic half of the random test above: every phase boundary, every time."""
    out = tmp_path / "dist"
    set_profiles(tmp_path, "a", "b", "c")
    run(out, A)
    old = tree(out)
    set_profiles(tmp_path, "a", "b", "d")
    run(out, B, prune=True)
    new = tree(out)

    calls = 0
    kill_at = 0  # 0: not armed

    def counted(fn: object) -> object:
        def step(*args: object, **kwargs: object) -> object:
            nonlocal calls
            calls += 1
            if calls == kill_at:
                raise Killed
            return fn(*args, **kwargs)  # type: ignore[operator]

        return step

    for module, name in STEPS:
        monkeypatch.setattr(module, name, counted(getattr(module, name)))

    for step in range(1, 100):
        set_profiles(tmp_path, "a", "b", "c")
        run(out, A, prune=True)
        assert tree(out) == old
        set_profiles(tmp_path, "a", "b", "d")
        calls, kill_at = 0, step
        try:
            run(out, B, prune=True)
        except Killed:
            pass
        else:
            break  # the run got past every step: each one has been a kill point
        finally:
            kill_at = 0
        now = tree(out)
        for c in ("a", "b", "c", "d"):
            assert part(now, c) in (part(old, c), part(new, c)), f"step {step}: clusters/{c}"
        assert {k.split("/")[1] for k in now if k.startswith("clusters/")} <= {"a", "b", "c", "d"}
        assert (compare(make_plan(out, B, prune=True)) == []) == (now == new), f"step {step}"
        run(out, B, prune=True)
        assert tree(out) == new, f"step {step}"
    assert step > 8  # staging, claim, swaps, removals and the final index were all hit
