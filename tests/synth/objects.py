"""SynthObject-shaped fixtures: what the constructs hand to the writer, built by hand."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpustack.synth.index import INDEX_DIR
from gpustack.synth.layout import layout_cluster
from gpustack.synth.statcache import CACHE_NAME
from gpustack.synth.writer import SourcedCluster


@dataclass(frozen=True)
class Obj:
    """Same shape as ``gpustack.constructs.SynthObject``: a component and one manifest."""

    component: str
    manifest: Mapping[str, Any] = field(default_factory=dict)


def kube(
    component: str,
    kind: str,
    name: str,
    *,
    api_version: str = "v1",
    namespace: str | None = "gpustack-system",
    **body: Any,
) -> Obj:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return Obj(component, {"apiVersion": api_version, "kind": kind, "metadata": metadata, **body})


def stack(*, examples: bool = True, plugin_config: str = "version: v1\n") -> list[Obj]:
    """A small but complete-looking GPU stack, deliberately in a scrambled order."""
    objs = [
        kube(
            "device-plugin",
            "DaemonSet",
            "gpustack-device-plugin",
            api_version="apps/v1",
            spec={"selector": {"matchLabels": {"app.kubernetes.io/name": "device-plugin"}}},
        ),
        kube("common", "Namespace", "gpustack-system", namespace=None),
        kube(
            "device-plugin",
            "ConfigMap",
            "gpustack-device-plugin",
            data={"config.yaml": plugin_config},
        ),
        kube(
            "container-toolkit",
            "RuntimeClass",
            "nvidia",
            api_version="node.k8s.io/v1",
            namespace=None,
            handler="nvidia",
        ),
        kube("driver", "DaemonSet", "nvidia-driver", api_version="apps/v1", spec={}),
        kube(
            "container-toolkit",
            "DaemonSet",
            "nvidia-container-toolkit",
            api_version="apps/v1",
            spec={},
        ),
        kube("device-plugin", "ServiceAccount", "gpustack-device-plugin"),
        kube(
            "device-plugin",
            "ClusterRole",
            "gpustack-device-plugin",
            api_version="rbac.authorization.k8s.io/v1",
            namespace=None,
            rules=[],
        ),
    ]
    if examples:
        objs.append(
            kube("examples", "Job", "pytorch-smoke", api_version="batch/v1", namespace="default")
        )
    return objs


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` (folders map to ``None``), to compare before and after; not
    the local stat cache (:mod:`gpustack.synth.statcache`), whose keys hold inodes and ctimes
    that differ with every write by design, and which is no output."""
    found: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if os.path.basename(dirpath) == INDEX_DIR:
            dirnames[:] = [d for d in dirnames if d != CACHE_NAME]
        for d in dirnames:
            found[os.path.relpath(os.path.join(dirpath, d), root)] = None
        for f in filenames:
            p = os.path.join(dirpath, f)
            found[os.path.relpath(p, root)] = Path(p).read_bytes()
    return found


def cluster(name: str, profile: str | None = None, **kw: bool) -> SourcedCluster:
    return SourcedCluster(layout_cluster(name, stack(**kw)), profile or f"../profiles/{name}.yaml")
