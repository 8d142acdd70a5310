"""The five fleet figures of issue #13: cold synth, no-op rerun, one profile changed, ``--check``
of an unchanged fleet, and the peak RSS of the whole process tree, for N clusters (1000).

Why: a fleet repository runs ``gpustack synth`` (or ``--check`` in CI) on every commit, and
almost every commit changes one profile or none; what matters is that the cost follows what
changed, not the size of the fleet. Each figure is one fresh ``gpustack synth`` process (wall
time); the RSS is sampled every 20 ms as the sum over the process and all its descendants
(workers and their Node children), the largest of all runs. The machine's load average is
printed before and after, since on a shared machine it explains the numbers.

The default fleet repeats four variants of the packaged default profile (the fleet the issue's
figures were measured on): clusters of one variant differ only in their names, so gpustack
renders each component once per shape and reuses it. ``--fleet distinct`` (or ``--distinct``)
adds a per-cluster label ``fleet.example.com/cluster: cNNNN`` on every object, so no two
clusters have equal objects (issue #23); ``--fleet mixed`` is a realistic fleet: that label, plus
regional mirrors, node pools in the selector, GPUs per node and a canary driver version (see
``bench/synth_clusters.py``). User and system CPU seconds are printed beside each wall time:
on a shared machine the wall time says more about the neighbours than about gpustack.

Usage: ``.venv/bin/python bench/synth_fleet.py [--count N] [--jobs J]
[--fleet variants|distinct|mixed]`` (default 1000 clusters of variants, default jobs:
gpustack's default, the CPU count)
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# the same generated fleet as bench/synth_clusters.py (run as scripts, bench/ is on sys.path)
from synth_clusters import FLEETS, gpustack_command, write_profiles


def _tree_rss(pid: int) -> int:
    """Resident memory (bytes) of ``pid`` and all its descendants."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return total


def timed(
    args: list[str], cwd: Path, ok: tuple[int, ...] = (0,)
) -> tuple[float, int, float, float]:
    """Wall seconds, peak tree RSS, and user and system CPU seconds (the process and all its
    descendants) of one run of ``args``."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, _tree_rss(proc.pid))
            stop.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    elapsed = time.perf_counter() - start
    stop.set()
    sampler.join()
    if proc.returncode not in ok:
        sys.exit(f"{' '.join(args)} failed ({proc.returncode}):\n{err.decode()}")
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, peak, now.ru_utime - used.ru_utime, now.ru_stime - used.ru_stime


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


DESCRIBED = {
    "variants": "4 variants",
    "distinct": "every cluster labelled",
    "mixed": "mixed: labels, mirrors, pools, GPUs per node, canary driver",
}


def main(count: int, jobs: int | None, fleet: str = "variants") -> None:
    command = gpustack_command()
    work = Path(tempfile.mkdtemp(prefix="gpustack-fleet-"))
    print(
        f"{count} clusters ({DESCRIBED[fleet]}), {os.cpu_count()} CPUs, "
        f"load average before: {load()}"
    )
    try:
        (work / "profiles").mkdir()
        write_profiles(work / "profiles", count, width=4, fleet=fleet)
        synth = [*command, "synth", "profiles", "--out", "dist", "--quiet"]
        if jobs is not None:
            synth += ["--jobs", str(jobs)]
        results: list[tuple[str, float, int, float, float]] = []
        results.append(("cold synth", *timed(synth, work)))
        results.append(("no-op rerun", *timed(synth, work)))
        one = work / "profiles" / f"cluster-{count // 2:04d}.yaml"
        one.write_text(one.read_text().replace("perNode: 1", "perNode: 2"))
        results.append(("one profile changed", *timed(synth, work)))
        results.append(("--check, unchanged", *timed([*synth, "--check"], work)))
        files = sum(1 for _ in (work / "dist" / "clusters").rglob("*.yaml"))
        print(f"{files} files written")
        # user + system CPU beside the wall time: system time is mostly the filesystem creating
        # the cluster folders' entries, which varies a lot between machines and disks.
        for what, seconds, _, user, system in results:
            print(
                f"{what:<22} {seconds:>7.2f} s   (cpu {user + system:>6.2f} s: "
                f"user {user:.2f} s, system {system:.2f} s)"
            )
        print(f"{'peak RSS (tree)':<22} {max(r[2] for r in results) / 2**20:>7.0f} MiB")
        print(f"load average after: {load()}")
    finally:
        shutil.rmtree(work)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="The fleet figures of `gpustack synth`.")
    parser.add_argument("--count", type=int, default=1000, help="clusters (default 1000)")
    parser.add_argument("--jobs", type=int, default=None, help="synth --jobs (default: its own)")
    parser.add_argument(
        "--fleet", choices=FLEETS, default=None, help="how the clusters differ (default: variants)"
    )
    parser.add_argument(
        "--distinct", action="store_true", help="the same as --fleet distinct (per-cluster label)"
    )
    args = parser.parse_args(argv)
    if args.distinct and args.fleet not in (None, "distinct"):
        parser.error("--distinct is --fleet distinct; give one of them")
    args.fleet = args.fleet or ("distinct" if args.distinct else "variants")
    if args.count < 1:
        parser.error("--count must be at least 1")
    return args


if __name__ == "__main__":
    ns = parse(sys.argv[1:])
    main(ns.count, ns.jobs, ns.fleet)
