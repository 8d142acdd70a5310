"""What a write changes that no GitOps sync rolls out by itself: the notes ``synth`` prints in
its summary after a driver or MIG layout change (issue #24, item 4).

The change is read by :mod:`gpustack.plan`, the comparison ``gpustack plan`` makes, so the note
and the plan cannot disagree; here only its two disruptions that wait for the user are kept:

* **Driver.** The driver DaemonSet updates ``OnDelete``: after the sync a node keeps its driver
  until its driver pod is deleted; the new pod's driver manager then evicts the node's GPU pods
  and installs the new driver. A template that changed without changing the driver (the deploy
  labels it seeds) gets no note.
* **MIG layouts.** A changed mig-parted config rolls the MIG manager, which applies, when it
  starts, the config its node's ``nvidia.com/mig.config`` label names: those nodes repartition.

Compared with the previous output, file by file, before the write replaces it: only files whose
bytes changed are parsed, so a fleet's unchanged clusters cost nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gpustack.plan.compare import compare_objects
from gpustack.plan.model import EVICTS
from gpustack.plan.objects import read_objects
from gpustack.profile.derive import MIG_CONFIG_LABEL
from gpustack.synth.plan import CLUSTERS_DIR, SourcedCluster, read_plain


@dataclass(frozen=True)
class DriverChange:
    """An ``OnDelete`` DaemonSet whose pods must be deleted to take its new driver."""

    cluster: str
    before: str
    after: str
    namespace: str
    selector: str


@dataclass(frozen=True)
class MigChange:
    """The mig-parted configs (by name) whose layout changed."""

    cluster: str
    configs: tuple[str, ...]


def changes(
    out: Path, clusters: Sequence[SourcedCluster]
) -> tuple[list[DriverChange], list[MigChange]]:
    """The driver and MIG layout changes the clusters' new files make to the ones in ``out``
    (call it before they are written); a new cluster changes nothing on any node yet."""
    drivers: list[DriverChange] = []
    migs: list[MigChange] = []
    for sc in clusters:
        name = sc.output.name
        folder = out / CLUSTERS_DIR / name
        before: dict[str, bytes] = {}
        after: dict[str, bytes] = {}
        for f in sc.output.files:
            old = read_plain(folder / f.path)
            if old is not None and old != f.content:
                before[f.path], after[f.path] = old, f.content
        if not before:
            continue
        plan = compare_objects(name, read_objects(before), read_objects(after))
        drivers += [
            DriverChange(name, *r.version, r.ref.namespace, r.selector)
            for r in plan.rollouts
            if EVICTS in r.effects
        ]
        if plan.mig_configs:
            migs.append(MigChange(name, plan.mig_configs))
    return drivers, migs


def _clusters(names: Sequence[str]) -> str:
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"{len(names)} cluster{'s' if len(names) != 1 else ''} ({shown})"


def notes(drivers: Sequence[DriverChange], migs: Sequence[MigChange]) -> list[str]:
    """One note per kind of change, naming the clusters (a fleet's bump is one line)."""
    lines: list[str] = []
    if drivers:
        first = drivers[0]
        versions = sorted({f"{d.before} → {d.after}" for d in drivers if d.before != d.after})
        what = f"the driver changed ({', '.join(versions)})" if versions else "the driver changed"
        lines.append(
            f"rollout: {what} in {_clusters([d.cluster for d in drivers])}. Its DaemonSet "
            "updates OnDelete, so no node changes when it syncs: a node takes the new driver "
            "when its driver pod is deleted; the driver manager in the new pod then pauses the "
            "node's GPU clients (their deploy labels), evicts its GPU pods, drains it if that is "
            "not enough, and reinstalls. Roll the nodes at your pace, e.g. one at a time: "
            f"kubectl -n {first.namespace} delete pod -l {first.selector} "
            "--field-selector spec.nodeName=<node>"
        )
    if migs:
        configs = sorted({c for m in migs for c in m.configs})
        labels = ", ".join(f"{MIG_CONFIG_LABEL}={c}" for c in configs)
        lines.append(
            f"rollout: the MIG layouts changed in {_clusters([m.cluster for m in migs])}. The "
            "MIG manager restarts with the new config when it syncs, and repartitions each node "
            f"labelled {labels} as it starts (pausing the node's GPU clients): move GPU jobs off "
            "those nodes' old MIG devices first (drain or cordon them)"
        )
    return lines
