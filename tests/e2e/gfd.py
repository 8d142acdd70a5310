"""The labels GPU feature discovery writes on a GPU node, as its code at the pinned tag writes them.

Why not gpustack's catalog: the tier must show where gpustack's model of a node and the real
labeller disagree, so the labels follow GFD's own rules (NVIDIA k8s-device-plugin v0.20.0,
``internal/lm/``), fed with what the hardware reports through NVML (:data:`HARDWARE`, the
device name and compute capability of each board the examples use):

- ``resource.go``: ``nvidia.com/gpu.product`` is the device name with characters outside
  ``[A-Za-z0-9-_. ]`` dropped and blanks joined by ``-`` (``sanitise``), plus ``-SHARED`` where
  the config replicates the resource without renaming it; ``.count``, ``.replicas`` (1 without
  sharing, the entry's replicas with it; 0 on MIG-enabled GPUs, labelled without sharing) and
  ``.sharing-strategy`` (``none``, ``time-slicing`` or ``mps``); ``.family`` from the compute
  capability (``getArchFamily``: 7.5 turing, 8.0-8.8 ampere, 8.9 ada-lovelace, 9 hopper, 10 and
  12 blackwell) with ``.compute.major``/``.minor``.
- ``mig-strategy.go``: under ``single`` the MIG devices are the GPU resource, its product
  ``<name>-MIG-<profile>`` and its count the MIG devices; under ``mixed`` each profile gets
  ``nvidia.com/mig-<profile>.count``.
- ``nvml.go``: ``nvidia.com/cuda.driver-version.*`` from the loaded driver's version (the
  profile's ``driver.version``), ``nvidia.com/mig.capable`` from whether the board can run MIG.

``nvidia.com/gpu.memory`` is left out: nothing the tier places reads it, and its NVML figure is
board-specific.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import yaml


@dataclass(frozen=True)
class Board:
    """What NVML reports for a board: its device name, compute capability, MIG support."""

    name: str
    compute: tuple[int, int]
    mig_capable: bool


#: Boards by the product a profile names (``gpus.product``).
HARDWARE: Final = {
    "T4": Board("Tesla T4", (7, 5), False),
    "A10": Board("NVIDIA A10", (8, 6), False),
    "L4": Board("NVIDIA L4", (8, 9), False),
    "L40S": Board("NVIDIA L40S", (8, 9), False),
    "A100-SXM4-80GB": Board("NVIDIA A100-SXM4-80GB", (8, 0), True),
    "H100-SXM5-80GB": Board("NVIDIA H100 80GB HBM3", (9, 0), True),
    "GB200-186GB": Board("NVIDIA GB200", (10, 0), True),
}
#: The board of a profile that names no product.
DEFAULT_BOARD: Final = HARDWARE["H100-SXM5-80GB"]
GPU: Final = "nvidia.com/gpu"


def sanitise(name: str) -> str:
    kept = "".join(c for c in name if c.isascii() and (c.isalnum() or c in "-_. "))
    return "-".join(kept.split())


def family(major: int, minor: int) -> str:
    if major == 7:
        return "volta" if minor < 5 else "turing"
    if major == 8:
        return "ampere" if minor < 9 else "ada-lovelace"
    return {6: "pascal", 9: "hopper", 10: "blackwell", 12: "blackwell"}.get(major, "undefined")


def _replicated(config: Mapping[str, Any], resource: str) -> tuple[int, str, bool]:
    """(replicas, sharing strategy, renamed) of ``resource`` under the plugin config."""
    sharing = config.get("sharing") or {}
    for strategy, key in (("time-slicing", "timeSlicing"), ("mps", "mps")):
        block = sharing.get(key) or {}
        for entry in block.get("resources") or []:
            if entry.get("name") == resource and int(entry.get("replicas", 1)) > 1:
                renamed = bool(entry.get("rename") or block.get("renameByDefault"))
                return int(entry["replicas"]), strategy, renamed
    return 1, "none", False


def config_of(daemonset: Mapping[str, Any], config_maps: Mapping[str, Mapping[str, Any]]) -> Any:
    """The config GFD's DaemonSet gives it: the file of a mounted ConfigMap, with the
    ``MIG_STRATEGY`` environment variable over its ``flags.migStrategy`` (GFD's flags read the
    environment, ``cmd/gpu-feature-discovery/main.go``)."""
    pod = daemonset["spec"]["template"]["spec"]
    config: dict[str, Any] = {}
    for volume in pod.get("volumes") or []:
        if "configMap" in volume:
            for text in config_maps[volume["configMap"]["name"]].get("data", {}).values():
                config = yaml.safe_load(text) or {}
    for env in pod["containers"][0].get("env") or []:
        if env["name"] == "MIG_STRATEGY":
            config.setdefault("flags", {})["migStrategy"] = env.get("value", "none")
    return config


def labels(
    product: str | None,
    per_node: int,
    mig: Mapping[str, int],
    driver_version: str,
    config: Mapping[str, Any],
) -> dict[str, str]:
    """What GFD writes on a node of ``per_node`` boards of ``product``, split by ``mig``,
    running ``driver_version``, under the plugin ``config``."""
    board = HARDWARE.get(product or "", DEFAULT_BOARD)
    name = sanitise(board.name)
    major, minor = board.compute
    strategy = (config.get("flags") or {}).get("migStrategy") or "none"
    mig_enabled = bool(mig) and board.mig_capable
    replicas, sharing, renamed = _replicated(config, GPU)
    if mig_enabled:  # labelled without sharing
        replicas, sharing, renamed = 0, "none", False
    out = {
        f"{GPU}.product": name + ("-SHARED" if replicas > 1 and not renamed else ""),
        f"{GPU}.count": str(per_node),
        f"{GPU}.replicas": str(replicas),
        f"{GPU}.sharing-strategy": sharing,
        f"{GPU}.family": family(major, minor),
        f"{GPU}.compute.major": str(major),
        f"{GPU}.compute.minor": str(minor),
        "nvidia.com/mig.capable": "true" if board.mig_capable else "false",
        # from the node's DMI product name (``/sys/class/dmi/id/product_name``)
        f"{GPU}.machine": "e2e-machine",
    }
    parts = driver_version.split(".")
    out |= {
        "nvidia.com/cuda.driver-version.full": driver_version,
        "nvidia.com/cuda.driver-version.major": parts[0],
        "nvidia.com/cuda.driver-version.minor": parts[1] if len(parts) > 1 else "",
        "nvidia.com/cuda.driver.major": parts[0],
    }
    if mig_enabled and strategy != "none":
        out["nvidia.com/mig.strategy"] = strategy
        if strategy == "single" and len(mig) == 1:
            ((profile, count),) = mig.items()
            replicas, sharing, renamed = _replicated(config, GPU)
            out[f"{GPU}.product"] = f"{name}-MIG-{profile}" + (
                "-SHARED" if replicas > 1 and not renamed else ""
            )
            out[f"{GPU}.count"] = str(per_node * count)
            out[f"{GPU}.replicas"] = str(replicas)
        elif strategy == "mixed":
            for profile, count in mig.items():
                key = f"nvidia.com/mig-{profile}"
                r, _, renamed = _replicated(config, key)
                out[f"{key}.count"] = str(per_node * count)
                out[f"{key}.replicas"] = str(r)
                out[f"{key}.product"] = f"{name}-MIG-{profile}" + (
                    "-SHARED" if r > 1 and not renamed else ""
                )
    return out
