"""Allocate and GetPreferredAllocation answers, as pure functions of a resource and its health.

Kept free of gRPC so the rules (ID validation, replica collapsing, device list strategies,
topology- and policy-aware preference) are easy to read next to NVIDIA's documented behaviour.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpustack.plugin.config import AllocationPolicy, DeviceIdStrategy, DeviceListStrategy
from gpustack.plugin.devices import Unit
from gpustack.plugin.health import UNHEALTHY
from gpustack.plugin.resources import Resource
from gpustack.plugin.v1beta1 import api_pb2

VISIBLE_DEVICES = "NVIDIA_VISIBLE_DEVICES"
VOLUME_MOUNT_DIR = "/var/run/nvidia-container-devices"
CDI_KIND = "k8s.device-plugin.nvidia.com/gpu"
CDI_ANNOTATION_NAME = "gpustack-device-plugin_"
#: Above this many candidate sets, preferred allocation is greedy instead of exhaustive.
MAX_EXHAUSTIVE_SETS = 20000


class AllocationError(ValueError):
    """The request names devices this resource cannot give; sent as INVALID_ARGUMENT."""


@dataclass(frozen=True)
class AllocateSettings:
    """The Allocate-relevant part of the configuration."""

    strategies: tuple[DeviceListStrategy, ...] = ("envvar",)
    id_strategy: DeviceIdStrategy = "uuid"
    cdi_annotation_prefix: str = "cdi.k8s.io/"
    pass_device_specs: bool = False
    dev_root: str = "/"
    control_paths: tuple[str, ...] = ()
    allocation_policy: AllocationPolicy = "distributed"


HealthOf = Callable[[str], str]


def resolve_units(resource: Resource, ids: Sequence[str], health_of: HealthOf) -> list[Unit]:
    """Validate requested IDs and collapse replicas to distinct units, in request order."""
    if not ids:
        raise AllocationError(f"empty device list for {resource.name}; request at least one device")
    if resource.fail_requests_greater_than_one and len(ids) > 1:
        raise AllocationError(
            f"{len(ids)} replicas of {resource.name} requested but failRequestsGreaterThanOne is "
            "set; request 1 (more replicas of a shared GPU give no more GPU time)"
        )
    if len(ids) > len(resource.by_id):
        raise AllocationError(_too_many(resource, len(ids)))
    units: dict[Unit, None] = {}  # a dict: distinct units in request order, each found at once
    for device_id in ids:
        unit = resource.by_id.get(device_id)
        if unit is None:
            raise AllocationError(
                f"unknown device ID {device_id!r} for resource {resource.name}; "
                "it is not advertised by this plugin"
            )
        if health_of(unit.uuid) == UNHEALTHY:
            raise AllocationError(
                f"device {device_id!r} of {resource.name} is Unhealthy; it cannot be allocated"
            )
        units.setdefault(unit)
    return list(units)


def _too_many(resource: Resource, count: int) -> str:
    """The kubelet sends a set of the IDs this plugin advertised (it keeps them in a set per
    resource: kubernetes pkg/kubelet/cm/devicemanager/manager.go), never more than there are:
    a longer list is no kubelet's, and is refused before any work grows with its length."""
    return (
        f"{count} device IDs for {resource.name}, which has {len(resource.by_id)}; "
        "a request names each advertised device at most once"
    )


def container_response(
    resource: Resource, settings: AllocateSettings, ids: Sequence[str], health_of: HealthOf
) -> api_pb2.ContainerAllocateResponse:
    """The response for one container, per the configured device list strategies."""
    units = resolve_units(resource, ids, health_of)
    names = [u.uuid if settings.id_strategy == "uuid" else u.index for u in units]
    resp = api_pb2.ContainerAllocateResponse()
    strategies = settings.strategies
    if "cdi-annotations" in strategies or "cdi-cri" in strategies:
        qualified = [f"{CDI_KIND}={name}" for name in names]
        if "cdi-annotations" in strategies:
            digest = hashlib.sha256("\0".join([resource.name, *names]).encode()).hexdigest()[:16]
            key = f"{settings.cdi_annotation_prefix}{CDI_ANNOTATION_NAME}{digest}"
            resp.annotations[key] = ",".join(qualified)
        if "cdi-cri" in strategies:
            resp.cdi_devices.extend(api_pb2.CDIDevice(name=q) for q in qualified)
    if "envvar" in strategies:
        resp.envs[VISIBLE_DEVICES] = ",".join(names)
    if "volume-mounts" in strategies:
        resp.envs[VISIBLE_DEVICES] = VOLUME_MOUNT_DIR
        resp.mounts.extend(
            api_pb2.Mount(
                container_path=f"{VOLUME_MOUNT_DIR}/{name}", host_path="/dev/null", read_only=True
            )
            for name in names
        )
    if settings.pass_device_specs:
        paths = list(
            dict.fromkeys([*settings.control_paths, *(p for u in units for p in u.device_paths)])
        )
        resp.devices.extend(
            api_pb2.DeviceSpec(
                container_path=path, host_path=host_path(settings.dev_root, path), permissions="rw"
            )
            for path in paths
        )
    return resp


def host_path(dev_root: str, path: str) -> str:
    """``/dev/nvidia0`` under the device root as the host sees it."""
    return path if dev_root in ("", "/") else dev_root.rstrip("/") + path


def preferred_allocation(
    resource: Resource,
    available: Sequence[str],
    must_include: Sequence[str],
    size: int,
    policy: AllocationPolicy = "distributed",
) -> list[str]:
    """The IDs the plugin would like the kubelet to pick (advisory).

    Linear in the request (issue #33: list membership made a 4 MB request cost 100 s of CPU),
    and a request longer than the resource's advertised IDs is refused first (see
    :func:`_too_many`)."""
    for ids in (available, must_include):
        if len(ids) > len(resource.by_id):
            raise AllocationError(_too_many(resource, len(ids)))
    unknown = [i for i in [*available, *must_include] if i not in resource.by_id]
    if unknown:
        raise AllocationError(f"unknown device ID {unknown[0]!r} for resource {resource.name}")
    offered = dict.fromkeys(available)
    must = list(dict.fromkeys(must_include))
    if any(i not in offered for i in must):
        raise AllocationError("must_include_deviceIDs must be a subset of available_deviceIDs")
    if size < len(must) or size > len(offered) or size < 1:
        raise AllocationError(
            f"allocation_size {size} must be between {max(1, len(must))} and "
            f"{len(offered)} (the available devices)"
        )
    chosen = set(must)
    rest = [i for i in offered if i not in chosen]
    if resource.replicas == 1 and resource.whole_gpus:
        return _by_topology(resource, must, rest, size)
    return _by_policy(resource, available, must, rest, size, policy)


def _pair_score(a: Unit, b: Unit) -> tuple[int, int]:
    nvlink = int(b.uuid in a.nvlink_peers or a.uuid in b.nvlink_peers)
    numa = int(a.numa_node is not None and a.numa_node == b.numa_node)
    return nvlink, numa


def _set_score(units: Sequence[Unit]) -> tuple[int, int]:
    nvlink = numa = 0
    for a, b in itertools.combinations(units, 2):
        n, m = _pair_score(a, b)
        nvlink += n
        numa += m
    return nvlink, numa


def _by_topology(resource: Resource, must: list[str], rest: list[str], size: int) -> list[str]:
    """Best-connected set: most NVLink pairs, then most same-NUMA pairs, then lowest order."""
    need = size - len(must)
    unit = resource.by_id
    if math.comb(len(rest), need) <= MAX_EXHAUSTIVE_SETS:
        best: tuple[str, ...] = ()
        best_score = (-1, -1)
        for combo in itertools.combinations(rest, need):
            score = _set_score([unit[i] for i in (*must, *combo)])
            if score > best_score:
                best, best_score = combo, score
        return [*must, *best]
    chosen = list(must)
    pool = list(rest)
    while len(chosen) < size:

        def gain(i: str) -> tuple[int, int]:
            scores = [_pair_score(unit[i], unit[c]) for c in chosen]
            return sum(s[0] for s in scores), sum(s[1] for s in scores)

        pick = max(pool, key=gain)  # max keeps the first of equals: lowest order wins ties
        chosen.append(pick)
        pool.remove(pick)
    return chosen


def _by_policy(
    resource: Resource,
    available: Sequence[str],
    must: list[str],
    rest: list[str],
    size: int,
    policy: str,
) -> list[str]:
    """Replicas and MIG devices: spread (distributed) or fill (packed).

    Load is counted per unit (a whole GPU or one MIG device: what a replica ID names) and per
    physical GPU. ``distributed`` takes the least loaded unit, then the least loaded GPU, so
    replicas of MIG devices land on distinct MIG devices and MIG devices spread over GPUs;
    ties go to the unit least picked in this request. ``packed`` fills the most loaded GPU
    first and, on it, the most loaded unit.
    """
    order: dict[str, int] = {}
    gpu_of: dict[str, str] = {}
    load: dict[str, int] = {}  # replicas in use or picked, per unit and per physical GPU
    for unit in resource.by_id.values():
        order.setdefault(unit.uuid, len(order))
        gpu_of[unit.uuid] = unit.gpu_uuid
        for key in (unit.uuid, unit.gpu_uuid):
            load[key] = load.get(key, 0) + 1
    for device_id in set(available):
        unit = resource.by_id[device_id]
        load[unit.uuid] -= 1
        load[unit.gpu_uuid] -= 1
    picked = dict.fromkeys(order, 0)
    candidates: dict[str, list[str]] = {}
    for device_id in rest:
        candidates.setdefault(resource.by_id[device_id].uuid, []).append(device_id)
    chosen = list(must)

    def take(device_id: str) -> None:
        unit = resource.by_id[device_id]
        load[unit.uuid] += 1
        load[unit.gpu_uuid] += 1
        picked[unit.uuid] += 1

    for device_id in must:
        take(device_id)
    while len(chosen) < size:
        units = [u for u, ids in candidates.items() if ids]
        if policy == "packed":
            pick = min(units, key=lambda u: (-load[gpu_of[u]], -load[u], order[u]))
        else:
            pick = min(units, key=lambda u: (load[u], load[gpu_of[u]], picked[u], order[u]))
        device_id = candidates[pick].pop(0)
        chosen.append(device_id)
        take(device_id)
    return chosen
