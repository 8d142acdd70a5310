"""Whole-process wall and CPU time of rendering one cluster: ``gpustack template PROFILE`` (what
the Argo CD plugin runs for every Application it renders) and ``gpustack synth PROFILE`` into an
empty folder (a new cluster), each run as a fresh process, interleaved.

Why whole processes: a user and Argo CD's repo-server pay Python's and Node's start-up, the
imports, validation and the first rendering every time; an in-process timing would hide most of
it. Wall times on a shared machine move with the neighbours, so the CPU seconds (the process and
all its children, Node included) are printed beside them, and the load average before and after.

Usage: ``.venv/bin/python bench/one_cluster.py [--runs N] [PROFILE]`` (default: 7 runs of
``profiles/h100-prod-east.yaml``)
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# run as a script, bench/ is on sys.path
from synth_clusters import gpustack_command

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PROFILE = REPO / "profiles" / "h100-prod-east.yaml"


def timed(args: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, with every child) of one run of ``args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr.decode()}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def summary(what: str, runs: list[tuple[float, float]]) -> str:
    walls = [w for w, _ in runs]
    cpus = [c for _, c in runs]
    return (
        f"{what:<34} median {statistics.median(walls):5.2f} s "
        f"(min {min(walls):.2f}, max {max(walls):.2f}; CPU median {statistics.median(cpus):.2f} s)"
    )


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main(profile: Path, runs: int) -> None:
    command = gpustack_command()
    print(f"{profile.name}, {runs} runs each, {os.cpu_count()} CPUs, load average before: {load()}")
    timed([*command, "template", str(profile)])  # bytecode and the jsii package cache are warm
    template: list[tuple[float, float]] = []
    synth: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="gpustack-one-") as tmp:
        for i in range(runs):
            template.append(timed([*command, "template", str(profile)]))
            out = Path(tmp) / f"out-{i}"
            synth.append(timed([*command, "synth", str(profile), "--out", str(out), "--quiet"]))
    print(summary("gpustack template", template))
    print(summary("gpustack synth (a new cluster)", synth))
    print(f"load average after: {load()}")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Whole-process time of rendering one cluster.")
    parser.add_argument("profile", nargs="?", type=Path, default=DEFAULT_PROFILE)
    parser.add_argument("--runs", type=int, default=7, help="runs of each command (default 7)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if not args.profile.is_file():
        parser.error(f"{args.profile}: no such profile")
    args.profile = args.profile.resolve()
    return args


if __name__ == "__main__":
    ns = parse(sys.argv[1:])
    main(ns.profile, ns.runs)
