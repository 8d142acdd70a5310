"""Serialization time of a fleet's manifests: PyYAML (libyaml, whole documents) and the direct
writer (:mod:`gpustack.synth.yaml_text`) gpustack uses, on the same objects in one process.

Why: turning objects into YAML text was a third of a cold 1,000-cluster run. This renders each
cluster's objects once (cdk8s, not timed) and times laying them out into files (placement and
serialization, as ``gpustack synth`` does) with each writer, so the difference is the
serializer's. Clusters each carry their own label (``--fleet distinct``), so no two clusters
share their label-bearing objects; the layout's caches work as in a real run. CPU seconds of
this process; on a shared machine the load average is printed beside them.

Usage: ``.venv/bin/python bench/serialize_fleet.py [--count N] [--fleet F]`` (default 1000,
distinct)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# run as a script, bench/ is on sys.path
from synth_clusters import FLEETS, write_profiles

from gpustack.checker import check_paths
from gpustack.synth import layout, yaml_text
from gpustack.synth.serialize import FAST_DUMPER, dump_yaml

WRITERS: dict[str, Callable[[Any], bytes]] = {
    "PyYAML (libyaml)": lambda doc, shared=False: dump_yaml(doc, FAST_DUMPER),
    "direct": dump_yaml,
}


def fleet_objects(count: int, fleet: str) -> list[tuple[str, list[Any]]]:
    """Each cluster's name and objects, rendered once."""
    from gpustack.constructs import synthesize

    with tempfile.TemporaryDirectory(prefix="gpustack-serialize-") as tmp:
        write_profiles(Path(tmp), count, width=4, fleet=fleet)
        result = check_paths([Path(tmp)])
        if not result.ok:
            sys.exit("the generated fleet does not validate")
        return [(p.profile.metadata.name, synthesize(p.profile)) for p in result.profiles]


def timed_layout(clusters: list[tuple[str, list[Any]]], writer: Callable[[Any], bytes]) -> float:
    """CPU seconds laying out every cluster with ``writer``, its caches emptied first."""
    layout.dump_yaml = writer  # type: ignore[assignment]
    layout._SERIALIZED.clear()
    yaml_text._SUBTREES.clear()
    start = time.process_time()
    for name, objects in clusters:
        layout.layout_cluster(name, objects)
    return time.process_time() - start


def main(count: int, fleet: str) -> None:
    print(f"{count} clusters ({fleet}), load average before: {os.getloadavg()[0]:.2f}")
    clusters = fleet_objects(count, fleet)
    files = sum(len(objects) for _, objects in clusters)
    print(f"{files} manifests")
    for what, writer in WRITERS.items():
        seconds = timed_layout(clusters, writer)
        print(f"{what:<18} {seconds:6.2f} s CPU  ({seconds / count * 1000:5.2f} ms per cluster)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Serialization time of a fleet's manifests.")
    parser.add_argument("--count", type=int, default=1000, help="clusters (default 1000)")
    parser.add_argument("--fleet", choices=FLEETS, default="distinct", help="default: distinct")
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error("--count must be at least 1")
    return args


if __name__ == "__main__":
    ns = parse(sys.argv[1:])
    main(ns.count, ns.fleet)
