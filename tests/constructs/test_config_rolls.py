"""Every workload rolls when, and only when, the content of a ConfigMap it reads changes.

Kubernetes does not restart a pod when a mounted ConfigMap changes (the kubelet refreshes the
files in place, or never, for ``subPath`` mounts and environment variables), and a workload
controller rolls only when its pod template changes. So each DaemonSet or Deployment that reads a
ConfigMap of its folder carries, on its pod template, the sha256 of that ConfigMap's ``data``
(``gpustack.constructs.kube.data_checksum``: the JSON of the data with sorted keys): then editing
a script or a config rolls the pods that read it (*when*), and as the template holds nothing else
derived from the ConfigMaps, it rolls for no other reason (*only when*). Read from ``dist/``, the
committed output of every example cluster.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
CLUSTERS = sorted((REPO / "dist" / "clusters").iterdir())
WORKLOADS = ("DaemonSet", "Deployment")


def _objects(folder: Path) -> list[dict[str, Any]]:
    found = []
    for path in sorted(folder.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and "metadata" in doc and "kind" in doc:
                found.append(doc)
    return found


def _config_maps_read(pod: dict[str, Any]) -> Iterator[str]:
    """The names of the ConfigMaps a pod spec mounts or takes environment from."""
    for volume in pod.get("volumes") or ():
        if "configMap" in volume:
            yield volume["configMap"]["name"]
        for source in (volume.get("projected") or {}).get("sources") or ():
            if "configMap" in source:
                yield source["configMap"]["name"]
    for container in [*(pod.get("initContainers") or ()), *pod["containers"]]:
        for var in container.get("env") or ():
            ref = (var.get("valueFrom") or {}).get("configMapKeyRef")
            if ref:
                yield ref["name"]
        for source in container.get("envFrom") or ():
            if "configMapRef" in source:
                yield source["configMapRef"]["name"]


def _checksum(data: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


@pytest.mark.parametrize("folder", CLUSTERS, ids=lambda p: p.name)
def test_workloads_roll_when_and_only_when_their_config_maps_change(folder: Path) -> None:
    objects = _objects(folder)
    shipped = {
        (o["metadata"].get("namespace"), o["metadata"]["name"]): o.get("data") or {}
        for o in objects
        if o["kind"] == "ConfigMap"
    }
    checked = 0
    for o in objects:
        if o["kind"] not in WORKLOADS:
            continue
        namespace = o["metadata"].get("namespace")
        template = o["spec"]["template"]
        read = {n for n in _config_maps_read(template["spec"]) if (namespace, n) in shipped}
        want = {_checksum(shipped[(namespace, n)]) for n in read}
        annotations = template["metadata"].get("annotations") or {}
        have = {v for k, v in annotations.items() if k.endswith("-checksum")}
        where = f"{folder.name}: {o['kind']}/{o['metadata']['name']}"
        assert have == want, f"{where}: reads {sorted(read)}, template checksums {annotations}"
        checked += len(read)
    assert checked > 0, f"{folder.name}: no workload reads a ConfigMap of the folder"
