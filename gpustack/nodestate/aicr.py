"""An AICR snapshot as node state: NVIDIA AI Cluster Runtime's ``aicr snapshot`` output.

Pinned to the format of AICR v0.11.1 (``apiVersion: aicr.nvidia.com/v1alpha1``, ``kind:
Snapshot``; pkg/snapshotter, pkg/measurement, pkg/collector at that tag). A snapshot is taken
by an agent on one node and holds ``measurements``, each a ``type`` with ``subtypes`` of flat
``data`` maps:

- ``K8s``/``node``: that node's ``status.nodeInfo`` (``kubelet-version``, ``kernel-version``,
  ``os-image``, ``container-runtime-id`` as ``containerd://2.0.5``) and ``provider-id``
  (pkg/collector/k8s/node.go); ``K8s``/``server``: the API server's ``version``; ``K8s``/
  ``image``: every pod's image as last path component -> tag (image.go);
- ``GPU``/``smi``: ``driver``, ``gpu-count`` and the first GPU's ``gpu.model`` as nvidia-smi
  names it (pkg/collector/gpu/gpu.go);
- ``OS``/``release``: the node's os-release (``ID``, ``VERSION_ID``); ``OS``/``kmod``: loaded
  kernel modules (pkg/collector/os/);
- ``SystemD``/``<unit>``: each unit the agent was told to collect, with the unit's D-Bus
  properties, ``ActiveState`` and ``UnitFileState`` among them (pkg/collector/systemd; by
  default containerd, docker and kubelet: pkg/collector/factory.go ``NewDefaultFactory``);
- ``NodeTopology``/``label`` and ``taint``: every node's labels and taints, as ``key`` (or
  ``key.value`` where a key has several values) -> ``value|node,node`` and ``key`` (or
  ``key.effect``) -> ``effect|value|nodes`` (``value|nodes``) (pkg/collector/topology).

What it adds to ``kubectl get``: the API server's own version, the driver nvidia-smi sees and
the loaded modules, before GPU feature discovery runs. What it lacks: the other nodes' kubelet
facts, and pods. So it becomes one node, the one the agent ran on, taken as selected (the
agent is placed on a GPU node by its own selector), with the labels NFD and GFD would write
derived from the measurements where the topology does not already name them.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from gpustack import limits
from gpustack.kube.labels import ASSUMED_SELECTED
from gpustack.kube.state import JSON, ClusterState
from gpustack.nodestate import facts
from gpustack.profile.catalog import gfd_product_name

API_VERSION = "aicr.nvidia.com/v1alpha1"
KIND = "Snapshot"
#: The AICR release whose snapshot format this module reads.
AICR_VERSION = (0, 11)
#: A snapshot holds a few hundred values (one per label, module and image); a node with
#: thousands of images stays well under this.
MAX_VALUES = 200_000
_VERSION = re.compile(r"^v?(\d+)\.(\d+)")


class SnapshotError(Exception):
    """Not an AICR v0.11 snapshot; the message says why in one line."""


def is_snapshot(data: Any) -> bool:
    return isinstance(data, dict) and data.get("kind") == KIND and "measurements" in data


def parse(text: str, source: str) -> ClusterState | None:
    """The snapshot in ``text`` as a one-node state, or ``None`` when ``text`` is no snapshot."""
    try:
        data = limits.load_yaml_one(text, max_values=MAX_VALUES, what="AICR snapshot")
    except yaml.YAMLError:
        return None
    except limits.Refused as exc:
        where = f"{source}:{exc.line}:{exc.col}" if exc.line > 1 or exc.col > 1 else source
        raise SnapshotError(f"{where}: {exc}") from None
    if not is_snapshot(data):
        return None
    return to_state(data, source)


def _data(snapshot: dict[str, Any], kind: str, subtype: str) -> dict[str, Any]:
    for m in snapshot.get("measurements") or ():
        if isinstance(m, dict) and m.get("type") == kind:
            for s in m.get("subtypes") or ():
                if isinstance(s, dict) and s.get("subtype") == subtype:
                    found = s.get("data")
                    return found if isinstance(found, dict) else {}
    return {}


def _topology(data: dict[str, Any], node: str, *, taints: bool) -> list[tuple[str, str, str]]:
    """``(key, value, effect)`` of the labels (effect ``""``) or taints naming ``node``."""
    out = []
    for map_key, raw in data.items():
        parts = str(raw).split("|")
        key = str(map_key)
        if not taints:
            value, nodes, effect = parts[0], "|".join(parts[1:]), ""
            if value and key.endswith(f".{value}"):
                key = key[: -len(value) - 1]
        elif len(parts) == 3:  # key -> effect|value|nodes
            effect, value, nodes = parts
        else:  # key.effect -> value|nodes, where a key has several effects
            key, _, effect = key.rpartition(".")
            value, nodes = parts[0], "|".join(parts[1:])
        listed = [n.strip() for n in nodes.split(" (+")[0].split(",")]
        if node in listed:
            out.append((key, value, effect))
    return out


def to_state(snapshot: dict[str, Any], source: str) -> ClusterState:
    if snapshot.get("apiVersion") != API_VERSION:
        raise SnapshotError(
            f"{source}: an AICR snapshot of apiVersion {snapshot.get('apiVersion')!r}; gpustack"
            f" reads {API_VERSION} (AICR v{AICR_VERSION[0]}.{AICR_VERSION[1]})"
        )
    meta = snapshot.get("metadata") if isinstance(snapshot.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    made_by = _VERSION.match(str(meta.get("version") or ""))
    if made_by and (int(made_by.group(1)), int(made_by.group(2))) != AICR_VERSION:
        raise SnapshotError(
            f"{source}: a snapshot of AICR {meta['version']}; gpustack reads the format of AICR"
            f" v{AICR_VERSION[0]}.{AICR_VERSION[1]} (record it with that release, or use"
            " `kubectl get nodes,pods,daemonsets,events -A -o json`)"
        )
    node_data = _data(snapshot, "K8s", "node")
    name = str(node_data.get("source-node") or meta.get("source-node") or "")
    if not name:
        raise SnapshotError(f"{source}: the snapshot names no node (metadata.source-node)")
    return ClusterState(nodes=[_node(snapshot, name, node_data)])


def _units(snapshot: dict[str, Any]) -> dict[str, str]:
    """The ``SystemD`` measurement's units as :func:`gpustack.nodestate.facts.systemd_unit`
    reads them (units without an ``ActiveState`` are left out)."""
    out = {}
    for m in snapshot.get("measurements") or ():
        if not isinstance(m, dict) or m.get("type") != "SystemD":
            continue
        for s in m.get("subtypes") or ():
            data = s.get("data") if isinstance(s, dict) else None
            if isinstance(data, dict) and data.get("ActiveState"):
                state = f"{data['ActiveState']}/{data.get('UnitFileState') or ''}"
                out[facts.SYSTEMD_UNIT + str(s.get("subtype"))] = state
    return out


def _node(snapshot: dict[str, Any], name: str, node_data: dict[str, Any]) -> JSON:
    labels = {
        k: v for k, v, _ in _topology(_data(snapshot, "NodeTopology", "label"), name, taints=False)
    }
    release = _data(snapshot, "OS", "release")
    if release.get("ID"):
        labels.setdefault(f"{facts.NFD}system-os_release.ID", str(release["ID"]))
        version_id = str(release.get("VERSION_ID", ""))
        labels.setdefault(f"{facts.NFD}system-os_release.VERSION_ID", version_id)
    smi = _data(snapshot, "GPU", "smi")
    if smi.get("driver"):  # else nvidia-smi did not run (no driver yet): GPUs not counted
        labels.setdefault("nvidia.com/cuda.driver-version.full", str(smi["driver"]))
        labels.setdefault("nvidia.com/gpu.count", str(smi.get("gpu-count", 0)))
        if smi.get("gpu.model"):
            labels.setdefault("nvidia.com/gpu.product", gfd_product_name(str(smi["gpu.model"])))
        if smi.get("gpu.product-architecture"):  # nvidia-smi's "Ada Lovelace": GFD's family
            family = "-".join(str(smi["gpu.product-architecture"]).lower().split())
            labels.setdefault("nvidia.com/gpu.family", family)
    annotations = {ASSUMED_SELECTED: "aicr-snapshot"}
    server = _data(snapshot, "K8s", "server").get("version")
    if server:
        annotations[facts.SERVER_VERSION] = str(server)
    if "driver" in _data(snapshot, "K8s", "image"):
        annotations[facts.CONTAINER_DRIVER] = "true"
    annotations.update(_units(snapshot))
    taints = [
        {"key": k, "value": v, "effect": e} if v else {"key": k, "effect": e}
        for k, v, e in _topology(_data(snapshot, "NodeTopology", "taint"), name, taints=True)
    ]
    info = {
        "kubeletVersion": node_data.get("kubelet-version"),
        "kernelVersion": node_data.get("kernel-version"),
        "osImage": node_data.get("os-image"),
        "operatingSystem": node_data.get("operating-system"),
        "containerRuntimeVersion": node_data.get("container-runtime-id"),
    }
    spec: JSON = {"taints": taints}
    if node_data.get("provider-id"):
        spec["providerID"] = str(node_data["provider-id"])
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": annotations},
        "spec": spec,
        "status": {"nodeInfo": {k: str(v) for k, v in info.items() if v}},
    }
