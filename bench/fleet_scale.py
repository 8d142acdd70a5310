"""How cold synth, a no-op rerun and their process-tree peak memory grow with the fleet: one
row per fleet size (default 1,000, 5,000 and 10,000 distinct clusters: minutes in all).

Why: a fleet repository grows, and what must stay flat is memory (issue #37: the Python process
held every cluster's files until the write phase, 2 GiB for 10,000 clusters). Each figure is one
fresh ``gpustack synth`` process; the peak is the sum of the resident memory of the process and
all its descendants (workers and their Node children), sampled every 20 ms, as in
``bench/synth_fleet.py``. Clusters each carry their own label (``--fleet distinct``). CPU
seconds and the load average before each row are printed beside the wall times: on a shared
machine the wall time says as much about the neighbours (and the disk, which creates ~37 files
per cluster) as about gpustack.

``--touched`` adds a third run after a comment was added to every profile: every cluster is
checked and rendered again over the folder it already has, as after a gpustack upgrade.

Usage: ``.venv/bin/python bench/fleet_scale.py [COUNT ...] [--jobs J] [--touched]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

# run as scripts, bench/ is on sys.path
from synth_clusters import gpustack_command, write_profiles
from synth_fleet import load, timed


def touch_all(profiles: Path) -> None:
    """A comment added to every profile: each cluster is checked and rendered again over the
    folder it has (what a gpustack upgrade does to a fleet), and nothing it writes changes."""
    for profile in profiles.glob("*.yaml"):
        with profile.open("a") as f:
            f.write("# touched\n")


def row(count: int, jobs: int | None, touched: bool = False) -> str:
    work = Path(tempfile.mkdtemp(prefix="gpustack-scale-"))
    try:
        before = load()
        (work / "profiles").mkdir()
        write_profiles(work / "profiles", count, width=5, fleet="distinct")
        synth = [*gpustack_command(), "synth", "profiles", "--out", "dist", "--quiet"]
        if jobs is not None:
            synth += ["--jobs", str(jobs)]
        cold, cold_peak, user, system = timed(synth, work)
        noop, noop_peak, nuser, nsystem = timed(synth, work)
        again = ""
        if touched:
            touch_all(work / "profiles")
            wall, peak, tuser, tsystem = timed(synth, work)
            again = f" {wall:>8.1f} s {tuser + tsystem:>7.1f} s {peak / 2**20:>7.0f} MiB"
        return (
            f"{count:>7} {cold:>8.1f} s {user + system:>7.1f} s {cold_peak / 2**20:>7.0f} MiB "
            f"{noop:>7.2f} s {nuser + nsystem:>6.2f} s {noop_peak / 2**20:>6.0f} MiB{again}"
            f"   {before}"
        )
    finally:
        shutil.rmtree(work)


def main(counts: list[int], jobs: int | None, touched: bool = False) -> None:
    print(f"{os.cpu_count()} CPUs, jobs: {jobs or 'gpustack default'}")
    more = f" {'touched':>10} {'cpu':>9} {'peak':>11}" if touched else ""
    print(
        f"{'clusters':>7} {'cold':>10} {'cpu':>9} {'peak':>11} {'no-op':>9} {'cpu':>8} "
        f"{'peak':>10}{more}   load average before"
    )
    for count in counts:
        print(row(count, jobs, touched), flush=True)
    print(f"load average after: {load()}")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Fleet-size scaling of `gpustack synth`.")
    parser.add_argument(
        "counts", nargs="*", type=int, metavar="COUNT", help="default: 1000 5000 10000"
    )
    parser.add_argument("--jobs", type=int, default=None, help="synth --jobs (default: its own)")
    parser.add_argument(
        "--touched",
        action="store_true",
        help="then a comment added to every profile and synth again (all rendered over dist/)",
    )
    args = parser.parse_args(argv)
    args.counts = args.counts or [1000, 5000, 10000]
    if any(c < 1 for c in args.counts):
        parser.error("each COUNT must be at least 1")
    return args


if __name__ == "__main__":
    ns = parse(sys.argv[1:])
    main(ns.counts, ns.jobs, ns.touched)
