"""Keeps the node's one ResourceSlice equal to the simulated GPUs, as NVIDIA's controller does.

One sync (vendor/k8s.io/dynamic-resource-allocation/resourceslice/resourceslicecontroller.go,
reduced to one pool of one slice): list the driver's slices on this node; every slice but the
one to keep (the first by name whose index prefix is ``00000`` and whose generation is the
highest) is deleted with uid/resourceVersion preconditions; the kept slice is updated (PUT, same
generation: one update call needs no new generation) when its devices differ; with no slice to
keep, one is created with generation highest + 1 and an ownerReference to the Node (whose UID is
read once). The driver runs a sync at start and every ``resync`` seconds, which also restores a
slice the kubelet wiped while the plugin was away.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from typing import Any, Literal

from gpustack import dra_upstream as upstream
from gpustack.plugin.devices import Gpu
from gpustack.plugin.dra import slices
from gpustack.plugin.dra.kubeapi import KubeClient

log = logging.getLogger("gpustack.plugin.dra")

Outcome = Literal["created", "updated", "unchanged"]


def _generation(item: dict[str, Any]) -> int:
    value = ((item.get("spec") or {}).get("pool") or {}).get("generation", 0)
    return value if isinstance(value, int) else 0


def _name(item: dict[str, Any]) -> str:
    return str((item.get("metadata") or {}).get("name", ""))


class Publisher:
    def __init__(
        self,
        client: KubeClient,
        driver: str,
        node_name: str,
        gpus: Sequence[Gpu],
        node: slices.NodeDriver,
    ) -> None:
        self.client = client
        self.driver = driver
        self.node_name = node_name
        self.gpus = list(gpus)
        self.node = node
        self._node_uid = ""

    def sync(self) -> Outcome:
        """One reconcile; raises :class:`gpustack.plugin.dra.kubeapi.ApiError`."""
        existing = sorted(self.client.list_slices(self.driver, self.node_name), key=_name)
        highest = max((_generation(s) for s in existing), default=0)
        prefix = "0" * upstream.SLICE_NAME_INDEX_DIGITS + "-"
        keep = next(
            (s for s in existing if _name(s).startswith(prefix) and _generation(s) == highest),
            None,
        )
        for item in existing:
            if item is keep:
                continue
            meta = item.get("metadata") or {}
            log.info("deleting obsolete ResourceSlice %s", _name(item))
            self.client.delete_slice(
                _name(item), str(meta.get("uid", "")), str(meta.get("resourceVersion", ""))
            )
        if keep is None:
            if not self._node_uid:
                node = self.client.get_node(self.node_name)
                self._node_uid = str((node.get("metadata") or {}).get("uid", ""))
            body = slices.resource_slice(
                self.driver, self.node_name, self._node_uid, self.gpus, self.node, highest + 1
            )
            created = self.client.create_slice(body)
            log.info(
                "published ResourceSlice %s with %d devices",
                _name(created),
                len(body["spec"]["devices"]),
            )
            return "created"
        desired = slices.slice_spec(self.driver, self.node_name, self.gpus, self.node, highest)
        if (
            slices.same_devices(keep.get("spec") or {}, desired)
            and (keep.get("spec") or {}).get("pool") == desired["pool"]
        ):
            return "unchanged"
        updated = copy.deepcopy(keep)
        updated["spec"] = desired
        self.client.update_slice(updated)
        log.info("updated ResourceSlice %s", _name(keep))
        return "updated"
