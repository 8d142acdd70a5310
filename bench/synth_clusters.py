"""Whole-process wall time of ``gpustack synth`` for 1 and for 100 clusters.

Why: every CI run and every Argo CD plugin call pays a cold start (Python, cdk8s, a Node child)
before any object is built, and fleets grow; this shows the fixed cost and the cost per cluster
separately. Each size runs ``gpustack synth`` as a fresh process three ways: a first write into
an empty folder, a rerun over the identical output (nothing to swap), and ``--check``.

Usage: ``.venv/bin/python bench/synth_clusters.py [COUNT ...]`` (default: 1 100)
"""

from __future__ import annotations

import argparse
import copy
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from gpustack.synth.sources import packaged_default_profile

VARIANTS = [
    {},
    {"devicePlugin": {"implementation": "nvidia", "deviceListStrategy": ["cdi-cri"]}},
    {"driver": {"enabled": False}, "toolkit": {"enabled": False}},
    {"workloads": {"examples": []}},
]


#: The fleets ``write_profiles`` writes: how their clusters differ.
FLEETS = ("variants", "distinct", "mixed")
#: The mixed fleet's regional mirrors, node pools, GPUs per node and driver versions (one
#: cluster in ten runs the canary driver).
REGIONS = ("us-east", "eu-west", "ap-south")
POOLS = ("gpu-a", "gpu-b")
PER_NODE = (1, 8)
DRIVERS = ("595.91.07", "580.105.08")


def write_profiles(
    folder: Path, count: int, width: int = 3, *, distinct: bool = False, fleet: str = ""
) -> None:
    """``count`` variants of the packaged default profile, each its own cluster (names
    ``cluster-<i>`` with ``width`` digits).

    ``fleet`` (default ``variants``, or ``distinct`` when ``distinct``):

    - ``variants``: four variants repeated; clusters of one variant differ only in their names.
    - ``distinct``: also a per-cluster label ``fleet.example.com/cluster: cNNNN`` on every
      object (cost and observability), so no two clusters have equal objects.
    - ``mixed``: the per-cluster label, and what a real fleet varies: a regional mirror
      (``cluster.imageRegistry``), a node pool in the node selector, GPUs per node, and a
      canary driver version on one cluster in ten (60 shapes rendered, the rest
      stamped).
    """
    fleet = fleet or ("distinct" if distinct else "variants")
    if fleet not in FLEETS:
        raise ValueError(f"unknown fleet {fleet!r}")
    base = yaml.safe_load(packaged_default_profile().read_text())
    for i in range(count):
        doc = copy.deepcopy(base)
        doc.update(copy.deepcopy(VARIANTS[i % len(VARIANTS)]))
        name = f"cluster-{i:0{width}d}"
        doc["metadata"] = {"name": name}
        if fleet != "variants":
            doc["metadata"]["labels"] = {"fleet.example.com/cluster": f"c{i:04d}"}
        if fleet == "mixed":
            region = REGIONS[(i // 4) % len(REGIONS)]
            cluster = doc.setdefault("cluster", {})
            cluster["imageRegistry"] = f"registry.{region}.example.com/mirror"
            cluster["nodeSelector"] = {
                "nvidia.com/gpu.present": "true",
                "cloud.google.com/gke-nodepool": POOLS[(i // 12) % len(POOLS)],
            }
            doc["gpus"] = {"perNode": PER_NODE[(i // 24) % len(PER_NODE)]}
            if "driver" in doc and doc["driver"].get("enabled", True):
                doc["driver"]["version"] = DRIVERS[1 if i % 10 == 0 else 0]
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))


def gpustack_command() -> list[str]:
    script = Path(sys.executable).with_name("gpustack")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from gpustack.cli import main; main()"]


def timed(args: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return elapsed


def files_in(folder: Path) -> int:
    return sum(1 for p in folder.rglob("*.yaml"))


def main(counts: list[int]) -> None:
    command = gpustack_command()
    print(
        f"{'clusters':>8} {'files':>6} {'first':>8} {'rerun':>8} {'--check':>8} {'per cluster':>12}"
    )
    for count in counts:
        work = Path(tempfile.mkdtemp(prefix="gpustack-bench-"))
        try:
            (work / "profiles").mkdir()
            write_profiles(work / "profiles", count)
            synth = [*command, "synth", "profiles", "--out", "dist"]
            first = timed(synth, work)
            rerun = timed(synth, work)
            check = timed([*synth, "--check"], work)
            files = files_in(work / "dist" / "clusters")
            print(
                f"{count:>8} {files:>6} {first:>7.2f}s {rerun:>7.2f}s {check:>7.2f}s "
                f"{first / count * 1000:>10.0f}ms"
            )
        finally:
            shutil.rmtree(work)


def parse_counts(argv: list[str]) -> list[int]:
    parser = argparse.ArgumentParser(
        description="Whole-process wall time of `gpustack synth` for COUNT clusters each."
    )
    parser.add_argument(
        "counts", nargs="*", type=int, metavar="COUNT", help="cluster counts (default: 1 100)"
    )
    counts: list[int] = parser.parse_args(argv).counts or [1, 100]
    if any(c < 1 for c in counts):
        parser.error("each COUNT must be at least 1")
    return counts


if __name__ == "__main__":
    main(parse_counts(sys.argv[1:]))
