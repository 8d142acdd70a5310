"""What a write changes that no GitOps sync rolls out by itself: the notes ``synth`` prints in
its summary after a driver or MIG layout change (issue #24, item 4).

* **Driver.** The driver DaemonSet updates ``OnDelete`` (replacing a loaded driver under running
  GPU jobs is never automatic, :mod:`gpustack.constructs.driver`): after the sync a node keeps
  its driver until its driver pod is deleted; the new pod's driver manager then pauses the
  node's GPU clients through their deploy labels, evicts its GPU pods (draining if that is not
  enough), unloads the old modules and installs the new driver. Found as an ``OnDelete``
  DaemonSet whose images or ``DRIVER_CONFIG_DIGEST`` changed (the hash of what decides the
  installed driver: version, module type, RDMA, its scripts;
  :mod:`gpustack.constructs.driver_manager`); a template that changed otherwise (the deploy
  labels it seeds, placement) gets no note. The digest's name comes from that module, imported
  only when such a DaemonSet changed (it loads cdk8s, which a run in workers has not).
* **MIG layouts.** The mig-parted config (a ConfigMap holding ``mig-configs``) rolls the MIG
  manager through its checksum, and a manager applies, when it starts, the config its node's
  ``nvidia.com/mig.config`` label names (mig-parted v0.15.0, ``cmd/nvidia-mig-manager/main.go``:
  the node informer's ``AddFunc`` hands the label's value to the reconfigure loop in ``start``).
  So nodes labelled with a changed config repartition as their manager restarts; their GPU jobs
  on the old instances must be gone first.

Compared with the previous output, file by file, before the write replaces it: only candidate
files whose bytes changed are parsed, so a fleet's unchanged clusters cost nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpustack.kube.labels import VERSION_LABEL
from gpustack.profile.derive import MIG_CONFIG_LABEL
from gpustack.synth.plan import CLUSTERS_DIR, SourcedCluster, read_plain


@dataclass(frozen=True)
class DriverChange:
    """An ``OnDelete`` DaemonSet whose pods must be deleted to take its new template."""

    cluster: str
    before: str
    after: str
    namespace: str
    selector: Mapping[str, str]


@dataclass(frozen=True)
class MigChange:
    """The mig-parted configs (by name) whose layout changed."""

    cluster: str
    configs: tuple[str, ...]


def _load(data: bytes | None) -> dict[str, Any]:
    try:
        doc = yaml.safe_load(data) if data else None
    except yaml.YAMLError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _mig_configs(doc: Mapping[str, Any]) -> dict[str, Any]:
    for text in (doc.get("data") or {}).values():
        parsed = _load(text.encode() if isinstance(text, str) else None)
        configs = parsed.get("mig-configs")
        if isinstance(configs, dict):
            return configs
    return {}


def changes(
    out: Path, clusters: Sequence[SourcedCluster]
) -> tuple[list[DriverChange], list[MigChange]]:
    """The driver and MIG layout changes the clusters' new files make to the ones in ``out``
    (call it before they are written); a new cluster changes nothing on any node yet."""
    drivers: list[DriverChange] = []
    migs: list[MigChange] = []
    for sc in clusters:
        folder = out / CLUSTERS_DIR / sc.output.name
        for f in sc.output.files:
            ondelete = b"kind: DaemonSet" in f.content and b"OnDelete" in f.content
            mig = b"kind: ConfigMap" in f.content and b"mig-configs:" in f.content
            if not (ondelete or mig):
                continue
            old = read_plain(folder / f.path)
            if old is None or old == f.content:
                continue
            before, after = _load(old), _load(f.content)
            if ondelete and _driver(before, after, sc.output.name, drivers):
                continue
            if mig:
                was, now = _mig_configs(before), _mig_configs(after)
                changed = sorted(n for n in now.keys() & was.keys() if now[n] != was[n])
                changed += sorted(now.keys() - was.keys())
                if changed:
                    migs.append(MigChange(sc.output.name, tuple(changed)))
    return drivers, migs


def _driver_identity(spec: Mapping[str, Any]) -> list[str]:
    """The images of the pod template and its driver config digests: what a driver change
    changes."""
    from gpustack.constructs.driver_manager import DIGEST_ENV

    pod = (spec.get("template") or {}).get("spec") or {}
    containers = [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]
    found = []
    for c in (c for c in containers if isinstance(c, dict)):
        found.append(str(c.get("image")))
        found += [str(e.get("value")) for e in c.get("env") or () if e.get("name") == DIGEST_ENV]
    return found


def _driver(
    before: Mapping[str, Any], after: Mapping[str, Any], cluster: str, found: list[DriverChange]
) -> bool:
    spec, old_spec = after.get("spec") or {}, before.get("spec") or {}
    if (spec.get("updateStrategy") or {}).get("type") != "OnDelete":
        return False
    if spec.get("template") == old_spec.get("template"):
        return True
    if _driver_identity(spec) == _driver_identity(old_spec):
        return True
    meta, old_meta = after.get("metadata") or {}, before.get("metadata") or {}
    found.append(
        DriverChange(
            cluster,
            str((old_meta.get("labels") or {}).get(VERSION_LABEL, "")),
            str((meta.get("labels") or {}).get(VERSION_LABEL, "")),
            str(meta.get("namespace", "")),
            dict((spec.get("selector") or {}).get("matchLabels") or {}),
        )
    )
    return True


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
        selector = ",".join(f"{k}={v}" for k, v in sorted(first.selector.items()))
        lines.append(
            f"rollout: {what} in {_clusters([d.cluster for d in drivers])}. Its DaemonSet "
            "updates OnDelete, so no node changes when it syncs: a node takes the new driver "
            "when its driver pod is deleted; the driver manager in the new pod then pauses the "
            "node's GPU clients (their deploy labels), evicts its GPU pods, drains it if that is "
            "not enough, and reinstalls. Roll the nodes at your pace, e.g. one at a time: "
            f"kubectl -n {first.namespace} delete pod -l {selector} "
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
