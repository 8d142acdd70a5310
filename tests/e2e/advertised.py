"""What a device plugin advertises on a GPU node, read from the config the folder gives it.

Why not from gpustack's model (:mod:`gpustack.profile.derive`): the tier checks that the Jobs a
folder ships bind on nodes whose capacity is what the plugin would really publish. Taking that
capacity from the same derivation that sized the Jobs made the check circular: a mistake there
moved the Jobs and the nodes together. Here the capacity comes from the ConfigMap the plugin's
DaemonSet mounts, read the way the plugin that DaemonSet runs reads it, applied to the GPUs the
node has (``gpus.perNode`` GPUs, each split by the MIG layout the MIG manager applies):

- NVIDIA's plugin (``nvcr.io/nvidia/k8s-device-plugin``, v0.20.0), read from its code:
  ``internal/rm/rm.go`` ``AddDefaultResourcesToConfig`` names every whole GPU ``gpu`` and, with
  ``migStrategy: single``, every MIG device ``gpu`` too, with ``mixed`` every MIG device
  ``mig-<profile>``; ``internal/rm/device_map.go`` leaves out a MIG-enabled GPU itself unless the
  strategy is ``none``, then ``updateDeviceMapWithReplicas`` replaces each device of a
  ``sharing.timeSlicing`` / ``sharing.mps`` resource (all of them, the first ``devices`` count,
  or those listed) by ``replicas`` copies under ``rename`` (``api/config/v1/replicas.go``:
  ``renameByDefault`` makes it ``<name>.shared``), the others keeping the name.
- gpustack's plugin: its own config reader (:func:`gpustack.plugin.config.load_config`), its
  backend (the simulated one discovers the GPUs its config lists) and
  :func:`gpustack.plugin.resources.build_resources`, the code the plugin runs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import yaml

from gpustack.plugin.backends.simulated import SimulatedBackend
from gpustack.plugin.config import load_config
from gpustack.plugin.devices import Gpu, MigDevice
from gpustack.plugin.resources import build_resources

#: The image of NVIDIA's device plugin; any other plugin image is gpustack's.
NVIDIA_PLUGIN_IMAGE: Final = "k8s-device-plugin"
#: NVIDIA's resource name prefix (``rm.go``: resources are named under ``nvidia.com/``).
PREFIX: Final = "nvidia.com/"


def node_gpus(count: int, mig: Mapping[str, int]) -> list[Gpu]:
    """The GPUs of one node: ``count`` of them, each split into ``mig`` (profile -> instances
    per GPU) when a layout is applied."""
    gpus = []
    for i in range(count):
        uuid = f"GPU-e2e-{i:04d}"
        migs: list[MigDevice] = []
        for profile, instances in mig.items():
            for _ in range(instances):
                pos = len(migs)
                migs.append(
                    MigDevice(
                        uuid=f"MIG-{uuid}-{pos}",
                        profile=profile,
                        parent_uuid=uuid,
                        parent_index=i,
                        position=pos,
                        gpu_instance=pos + 1,
                        compute_instance=0,
                        device_paths=(f"/dev/nvidia{i}",),
                    )
                )
        gpus.append(
            Gpu(
                index=i,
                uuid=uuid,
                minor=i,
                product="NVIDIA e2e",
                memory_mib=81920,
                compute_capability="9.0",
                numa_node=0,
                nvlink_peers=frozenset(),
                mig_enabled=bool(mig),
                mig_devices=tuple(migs),
            )
        )
    return gpus


def nvidia_plugin(config: Mapping[str, Any], gpus: list[Gpu]) -> dict[str, int]:
    """Resource name -> devices NVIDIA's plugin advertises for ``gpus`` under ``config``."""
    strategy = (config.get("flags") or {}).get("migStrategy") or "none"
    devices: dict[str, list[str]] = {}
    for gpu in gpus:
        if gpu.mig_enabled and strategy != "none":
            for mig in gpu.mig_devices:
                name = "gpu" if strategy == "single" else f"mig-{mig.profile}"
                devices.setdefault(PREFIX + name, []).append(mig.uuid)
        else:
            devices.setdefault(PREFIX + "gpu", []).append(gpu.uuid)
    sharing = config.get("sharing") or {}
    replicated = sharing.get("timeSlicing") or sharing.get("mps") or {}
    out = {name: len(ids) for name, ids in devices.items()}
    for resource in replicated.get("resources") or []:
        name = resource["name"]
        ids = devices.get(name, [])
        chosen = _chosen(ids, resource.get("devices", "all"))
        if not chosen:
            continue
        rename = resource.get("rename") or (
            f"{name}.shared" if replicated.get("renameByDefault") else name
        )
        left = len(ids) - len(chosen)
        if left:
            out[name] = left
        else:
            out.pop(name, None)
        out[rename] = out.get(rename, 0) + len(chosen) * int(resource["replicas"])
    return {name: count for name, count in out.items() if count}


def _chosen(ids: list[str], devices: Any) -> list[str]:
    """The devices of a replicated resource: ``all``, the first N, or those listed (GPU
    indexes or UUIDs)."""
    if devices in (None, "all"):
        return ids
    if isinstance(devices, int):
        return ids[:devices]
    return [i for n, i in enumerate(ids) if str(n) in map(str, devices) or i in devices]


def gpustack_plugin(text: str, gpus: list[Gpu]) -> dict[str, int]:
    """Resource name -> devices gpustack's plugin advertises, running its own code: its config
    reader, its backend (simulated GPUs come from the config) and its resource builder."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.yaml"
        path.write_text(text, encoding="utf-8")
        config = load_config(path)
    if config.extensions.backend == "simulated":
        gpus = SimulatedBackend(config).discover()
    return {r.name: len(r.device_ids) for r in build_resources(config, gpus)}


def advertised(
    daemonset: Mapping[str, Any], config_maps: Mapping[str, Mapping[str, Any]], gpus: list[Gpu]
) -> dict[str, str]:
    """What the plugin ``daemonset`` runs advertises on a node with ``gpus``, from the ConfigMap
    (by name, among ``config_maps``) its pod mounts."""
    pod = daemonset["spec"]["template"]["spec"]
    image = pod["containers"][0]["image"]
    (text,) = [
        text
        for volume in pod.get("volumes") or []
        if "configMap" in volume
        for text in config_maps[volume["configMap"]["name"]].get("data", {}).values()
    ]
    if NVIDIA_PLUGIN_IMAGE in image:
        counts = nvidia_plugin(yaml.safe_load(text), gpus)
    else:
        counts = gpustack_plugin(text, gpus)
    return {name: str(count) for name, count in counts.items()}
