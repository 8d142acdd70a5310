"""Synthesize many clusters in worker processes (``gpustack synth --jobs N``).

cdk8s runs in Node, and each synthesis is a few dozen synchronous calls into it, so one Python
process keeps one core busy at best. For a batch large enough to pay for the start-up (about a
second: Python, cdk8s and Node), the clusters are dealt round-robin to ``jobs`` workers
(:mod:`gpustack.synth.worker`), each of which starts cdk8s once and synthesizes its share.
Smaller batches, or ``jobs=1``, run in this process. The result is the same either way: each
cluster's files depend on its profile alone, and results are put back in input order.

A fleet is a few shapes repeated, and each process renders a component once per distinct props
(:mod:`gpustack.constructs.memo`): a cluster that differs from another only in its name costs a
few milliseconds, not a round of cdk8s. So the work is counted in *shapes* (profiles equal but
for ``metadata.name``), workers are started only when there are enough shapes to share, and
clusters of one shape go to the same worker, where all but the first are cache hits.

Workers run with ``-O``: jsii's generated bindings check every argument's type at run time
under ``if __debug__`` (about a quarter of the time per render), and our constructs hand them
values that mypy and the tests already check; gpustack has no ``assert`` on this path. Unless
``-O`` would compile cdk8s' bindings in every worker again: where bytecode may not be written
(``PYTHONDONTWRITEBYTECODE``, common in container images) and no optimized bytecode exists,
each ``-O`` worker would spend about a second and 100 MB compiling ~30 MB of generated Python,
more than the checks cost.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from gpustack.profile.model import Profile
from gpustack.synth.errors import SynthError
from gpustack.synth.layout import ClusterOutput

#: Below this many distinct shapes per worker, starting workers costs more than it saves: a
#: worker starts in about a second and sends its clusters back through a pipe, while a new
#: shape renders in ~30 ms (most of its components are cache hits of an earlier shape). On
#: 2 CPUs the mixed fleet of ``bench/synth_fleet.py`` (60 shapes) took 20.8 s in one process
#: and 29.0 s with two workers, whose Nodes also doubled the peak memory. Measured again for
#: issue #37 with 5,000 distinct clusters (4 shapes, a label each, 2 CPUs, load average ~3):
#: 57 s, 42 s of CPU and 325 MiB in one process; 123 s, 74 s of CPU and 579 MiB with two
#: workers forced. A cluster that is only stamped costs a worker about what shipping it back
#: (pickled, then spooled here) costs this process, and each worker brings its own Node: the
#: shape count, not the cluster count, decides, and a distinct fleet stays in this process.
PER_WORKER_MIN = 100
#: A new shape costs a worker about this many cache hits (~30 ms against ~5 ms).
SHAPE_COST = 6
#: Extra interpreter arguments of the workers (a test hook), after ``-O`` when it is used.
WORKER_FLAGS: tuple[str, ...] = ()
#: The generated binding module gpustack uses: whether its optimized bytecode exists decides
#: ``-O`` (which drops its run-time type checks).
_BINDINGS = "cdk8s"

Progress = Callable[[int], None]
#: What becomes of each cluster's files as they arrive: ``keep(number, output)`` gives what is
#: held until the write (the fleet's spool: :mod:`gpustack.synth.spool`).
Keep = Callable[[int, ClusterOutput], ClusterOutput]


def _as_is(_: int, output: ClusterOutput) -> ClusterOutput:
    return output


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def workers_for(shapes: int, jobs: int) -> int:
    """How many workers to start for ``shapes`` distinct shapes (0: synthesize in this
    process)."""
    n = min(jobs, shapes // PER_WORKER_MIN)
    return n if n >= 2 else 0


def prepare_to_synthesize(count: int, jobs: int) -> None:
    """``count`` clusters will certainly be synthesized (maybe more): when they will be in this
    process (too few for workers, whatever their shapes), start cdk8s now, in the background
    (:func:`gpustack.synth.node.start_cdk8s`)."""
    if workers_for(count, jobs) == 0:
        from gpustack.synth.node import start_cdk8s

        start_cdk8s()


def shape(profile: Profile) -> bytes:
    """The SHA-256 of ``profile`` without its cluster name and labels: equal for clusters
    whose components share renderings (labels are stamped on afterwards, see
    :mod:`gpustack.constructs.stamp`; used to group work, never as a cache key).

    A digest, held for every cluster of the run, of the model's ``repr`` (its dataclasses
    write every field): a pickle made Python 3.11 give each of the profile's ~33 objects the
    ``__dict__`` it otherwise keeps inline, ~2 KB per cluster kept until the end of the run."""
    anonymous = replace(profile, metadata=replace(profile.metadata, name="", labels=()))
    return hashlib.sha256(repr(anonymous).encode("utf-8", "surrogatepass")).digest()


def deal(shapes: Sequence[bytes], n: int) -> list[list[int]]:
    """Indexes of clusters (given by their :func:`shape`) for each of ``n`` workers: whole
    shapes, the largest first, each
    to the worker with the least work so far (a shape costs one render plus one cache hit per
    further cluster, counted as :data:`SHAPE_COST` clusters plus its size). Each worker's list
    is in input order."""
    groups: dict[bytes, list[int]] = {}
    for i, key in enumerate(shapes):
        groups.setdefault(key, []).append(i)
    load = [0] * n
    shares: list[list[int]] = [[] for _ in range(n)]
    for members in sorted(groups.values(), key=lambda m: (-len(m), m[0])):
        w = min(range(n), key=lambda k: (load[k], k))
        shares[w].extend(members)
        load[w] += SHAPE_COST + len(members)
    return [sorted(share) for share in shares]


def optimize() -> bool:
    """Whether workers run with ``-O`` (see the module docstring)."""
    # find_spec of the package itself: a submodule's would import the package, starting Node
    # in this process, which only deals out work
    package, _, sub = _BINDINGS.partition(".")
    spec = importlib.util.find_spec(package)
    roots = spec.submodule_search_locations if spec is not None else None
    if not roots:
        return True
    source = Path(next(iter(roots)), *sub.split("."), "__init__.py")
    if not source.is_file():
        return True
    if Path(importlib.util.cache_from_source(str(source), optimization=1)).exists():
        return True
    return not sys.dont_write_bytecode


def _worker_env() -> dict[str, str]:
    env = dict(os.environ)  # JSII_NODE and the banner opt-outs are set by now
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH")) if p)
    return env


def synthesize_many(
    jobs_list: Sequence[tuple[Path, Profile]],
    jobs: int,
    on_done: Progress | None = None,
    keep: Keep = _as_is,
) -> list[ClusterOutput]:
    """The laid-out files of each profile, in order, each passed through ``keep`` as it
    arrives; :class:`SynthError` for the first profile (in input order) that can't be
    synthesized."""
    from gpustack.synth.worker import synthesize_one

    shapes = [shape(p) for _, p in jobs_list] if jobs > 1 else []
    n = workers_for(len(set(shapes)), jobs) if jobs > 1 else 0
    if n == 0:
        outputs = []
        for i, (path, profile) in enumerate(jobs_list):
            outputs.append(keep(i, synthesize_one(path, profile)))
            if on_done is not None:
                on_done(i + 1)
        return outputs
    return _in_workers(jobs_list, deal(shapes, n), on_done, keep)


def _in_workers(
    jobs_list: Sequence[tuple[Path, Profile]],
    shares: list[list[int]],
    on_done: Progress | None,
    keep: Keep = _as_is,
) -> list[ClusterOutput]:
    results: queue.Queue[tuple[Any, str, Any]] = queue.Queue()
    procs: list[subprocess.Popen[bytes]] = []
    threads: list[threading.Thread] = []
    flags = (("-O",) if optimize() else ()) + WORKER_FLAGS
    try:
        for indexes in shares:
            if not indexes:
                continue
            share = [(i, str(jobs_list[i][0]), jobs_list[i][1]) for i in indexes]
            proc = subprocess.Popen(
                [sys.executable, *flags, "-m", "gpustack.synth.worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=_worker_env(),
                # out of the terminal's process group: Ctrl-C reaches this process, which
                # stops the workers (below) and says so in one line, not each worker and its
                # Node with a traceback of their own
                start_new_session=True,
            )
            procs.append(proc)
            t = threading.Thread(target=_feed_and_read, args=(proc, share, results), daemon=True)
            t.start()
            threads.append(t)
        outputs: dict[int, ClusterOutput] = {}
        errors: dict[int, str] = {}
        finished = 0
        while finished < len(procs):
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
                outputs[number] = keep(number, value)
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
