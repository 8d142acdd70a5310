"""Synthesize many clusters in worker processes (``gpustack synth --jobs N``).

cdk8s runs in Node, and each synthesis is a few dozen synchronous calls into it, so one Python
process keeps one core busy at best. For a batch large enough to pay for the start-up (about a
second: Python, cdk8s and Node), the clusters are dealt round-robin to ``jobs`` workers
(:mod:`gpustack.synth.worker`), each of which starts cdk8s once and synthesizes its share.
Smaller batches, or ``jobs=1``, run in this process. The result is the same either way: each
cluster's files depend on its profile alone, and results are put back in input order.

Workers run with ``-O``: jsii's generated bindings check every argument's type at run time
under ``if __debug__`` (about a quarter of the time per cluster), and our constructs hand them
values that mypy and the tests already check; gpustack has no ``assert`` on this path.
"""

from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from gpustack.profile.model import Profile
from gpustack.synth.errors import SynthError
from gpustack.synth.layout import ClusterOutput

#: Below this many clusters per worker, starting workers costs more than it saves.
PER_WORKER_MIN = 12
#: Interpreter flags of the workers (see the module docstring).
WORKER_FLAGS = ("-O",)

Progress = Callable[[int], None]


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def workers_for(count: int, jobs: int) -> int:
    """How many workers to start for ``count`` clusters (0: synthesize in this process)."""
    n = min(jobs, count // PER_WORKER_MIN)
    return n if n >= 2 else 0


def _worker_env() -> dict[str, str]:
    env = dict(os.environ)  # JSII_NODE and the banner opt-outs are set by now
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    return env


def synthesize_many(
    jobs_list: Sequence[tuple[Path, Profile]],
    jobs: int,
    on_done: Progress | None = None,
) -> list[ClusterOutput]:
    """The laid-out files of each profile, in order; :class:`SynthError` for the first profile
    (in input order) that can't be synthesized."""
    from gpustack.synth.worker import synthesize_one

    n = workers_for(len(jobs_list), jobs)
    if n == 0:
        outputs = []
        for i, (path, profile) in enumerate(jobs_list):
            outputs.append(synthesize_one(path, profile))
            if on_done is not None:
                on_done(i + 1)
        return outputs
    return _in_workers(jobs_list, n, on_done)


def _in_workers(
    jobs_list: Sequence[tuple[Path, Profile]], n: int, on_done: Progress | None
) -> list[ClusterOutput]:
    results: queue.Queue[tuple[Any, str, Any]] = queue.Queue()
    procs: list[subprocess.Popen[bytes]] = []
    threads: list[threading.Thread] = []
    try:
        for w in range(n):
            share = [(i, str(p), prof) for i, (p, prof) in enumerate(jobs_list) if i % n == w]
            proc = subprocess.Popen(
                [sys.executable, *WORKER_FLAGS, "-m", "gpustack.synth.worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=_worker_env(),
            )
            procs.append(proc)
            t = threading.Thread(target=_feed_and_read, args=(proc, share, results), daemon=True)
            t.start()
            threads.append(t)
        outputs: dict[int, ClusterOutput] = {}
        errors: dict[int, str] = {}
        finished = 0
        while finished < n:
            number, status, value = results.get()
            if number is None:
                finished += 1
                if status != "done":
                    raise SynthError(
                        f"a synthesis worker stopped unexpectedly (exit status {value}); "
                        "its error is printed above"
                    )
                continue
            if status == "ok":
                outputs[number] = value
            else:
                errors[number] = value
            if on_done is not None:
                on_done(len(outputs) + len(errors))
        if errors:
            raise SynthError(errors[min(errors)])
        return [outputs[i] for i in range(len(jobs_list))]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        for t in threads:
            t.join(timeout=5)
        for proc in procs:
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    pipe.close()


def _feed_and_read(
    proc: subprocess.Popen[bytes],
    share: list[tuple[int, str, Profile]],
    results: queue.Queue[Any],
) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    try:
        pickle.dump(share, proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        proc.stdin.close()
        for _ in share:
            results.put(pickle.load(proc.stdout))
    except (OSError, EOFError, pickle.UnpicklingError):
        results.put((None, "failed", proc.wait()))
        return
    code = proc.wait()
    results.put((None, "done" if code == 0 else "failed", code))
