"""The NVML backend: real GPUs through pynvml (nvidia-ml-py).

Discovery reads UUID, minor number, name, memory, compute capability, NUMA node (from sysfs,
as NVML has no portable call for it), NVLink peers and MIG devices. Health follows NVIDIA's
event loop: register XID/ECC events per GPU, wait on the event set, act on critical XIDs only.
"""

from __future__ import annotations

import ctypes
import logging
import math
import os
import threading
from pathlib import Path
from typing import Any

import pynvml

from gpustack.plugin.backends.base import InitError
from gpustack.plugin.config import PluginConfig
from gpustack.plugin.devices import CONTROL_DEVICE_PATHS, Gpu, MigDevice
from gpustack.plugin.health import HealthState, XidPolicy

log = logging.getLogger("gpustack.plugin")

WAIT_MS = 1000
LIB_DIRS = (
    "usr/lib64",
    "usr/lib/x86_64-linux-gnu",
    "usr/lib/aarch64-linux-gnu",
    "usr/lib",
    "lib64",
)
NOT_FOUND_HINT = (
    "NVML library libnvidia-ml.so.1 not found: run the plugin with the NVIDIA container runtime "
    "(RuntimeClass nvidia / nvidia-ctk runtime configure) or mount the host driver root at "
    "the container driver root ({root}); on a machine without GPUs use --backend simulated"
)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _preload_from_driver_root(root: str) -> None:
    """Load libnvidia-ml from the mounted driver root so pynvml's dlopen finds it by soname."""
    for lib_dir in LIB_DIRS:
        candidate = Path(root) / lib_dir / "libnvidia-ml.so.1"
        if candidate.exists():
            try:
                ctypes.CDLL(str(candidate), mode=ctypes.RTLD_GLOBAL)
                log.info("loaded NVML from %s", candidate)
                return
            except OSError as exc:
                log.warning("cannot load %s: %s", candidate, exc)


def init_nvml(container_driver_root: str) -> None:
    """``nvmlInit`` with a one-line, actionable error."""
    _preload_from_driver_root(container_driver_root)
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        raise InitError(NOT_FOUND_HINT.format(root=container_driver_root)) from None
    except pynvml.NVMLError_DriverNotLoaded:
        raise InitError(
            "NVIDIA kernel driver is not loaded: install the driver (or wait for the driver "
            "DaemonSet) before starting the device plugin"
        ) from None
    except pynvml.NVMLError as exc:
        raise InitError(
            f"NVML initialisation failed: {exc}; check the driver installation"
        ) from None


def numa_node(bus_id: str) -> int | None:
    """NUMA node of a PCI device, or ``None`` when the platform reports none."""
    domain, _, rest = bus_id.lower().partition(":")
    path = Path("/sys/bus/pci/devices") / f"{domain[-4:]}:{rest}" / "numa_node"
    try:
        node = int(path.read_text().strip())
    except (OSError, ValueError):
        return None
    return node if node >= 0 else None


def mig_memory_gb(mig_mib: int, gpu_total_bytes: int) -> int:
    """The ``<mem>gb`` of a MIG profile name, computed the way NVIDIA names profiles.

    A MIG device has a little less than its share of the GPU (3g.40gb on an A100 80GB has
    39.25 GiB), so plain rounding gives names no user asks for (``3g.39gb``). NVIDIA rounds
    the device's fraction of the GPU up to eighths and scales the GPU's size in whole GiB.
    """
    gib = 1024**3
    fraction = math.ceil(mig_mib * 1024 * 1024 / gpu_total_bytes * 8) / 8
    return round(fraction * ((gpu_total_bytes + gib - 1) // gib))


def mig_profile_name(attrs: Any, gpu_total_bytes: int) -> str:
    """``<g>g.<mem>gb`` (``<c>c.`` prefix when compute slices differ) from MIG attributes."""
    gb = mig_memory_gb(attrs.memorySizeMB, gpu_total_bytes)
    name = f"{attrs.gpuInstanceSliceCount}g.{gb}gb"
    if attrs.computeInstanceSliceCount != attrs.gpuInstanceSliceCount:
        name = f"{attrs.computeInstanceSliceCount}c.{name}"
    return name


def mig_cap_paths(minor: int, gi: int, ci: int, proc_root: str = "/") -> tuple[str, ...]:
    """``/dev/nvidia-caps`` nodes granting access to one GPU/compute instance.

    Read from ``/proc/driver/nvidia/capabilities`` (the kernel's, visible in any container;
    ``proc_root`` exists for tests), where each ``access`` file says ``DeviceFileMinor: <N>``.
    """
    base = Path(proc_root) / f"proc/driver/nvidia/capabilities/gpu{minor}/mig/gi{gi}"
    paths = []
    for access in (base / "access", base / f"ci{ci}" / "access"):
        try:
            for line in access.read_text().splitlines():
                key, _, value = line.partition(":")
                if key.strip() == "DeviceFileMinor":
                    paths.append(f"/dev/nvidia-caps/nvidia-cap{int(value)}")
        except (OSError, ValueError):
            log.warning("cannot read %s; MIG device specs will lack it", access)
    return tuple(paths)


class NvmlBackend:
    """GPUs as the NVIDIA driver reports them."""

    def __init__(self, config: PluginConfig) -> None:
        self._driver_root = config.flags.plugin.container_driver_root
        self._initialised = False

    def _init(self) -> None:
        if not self._initialised:
            init_nvml(self._driver_root)
            self._initialised = True

    def discover(self) -> list[Gpu]:
        self._init()
        try:
            count = pynvml.nvmlDeviceGetCount()
            handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
            uuids = [_text(pynvml.nvmlDeviceGetUUID(h)) for h in handles]
            bus_ids = [_text(pynvml.nvmlDeviceGetPciInfo(h).busId) for h in handles]
            return [self._gpu(i, h, uuids, bus_ids, handles) for i, h in enumerate(handles)]
        except pynvml.NVMLError as exc:
            raise InitError(f"NVML device discovery failed: {exc}") from None

    def _gpu(
        self, index: int, handle: Any, uuids: list[str], bus_ids: list[str], handles: list[Any]
    ) -> Gpu:
        uuid = uuids[index]
        minor = pynvml.nvmlDeviceGetMinorNumber(handle)
        major, minor_cc = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
        try:
            current, _pending = pynvml.nvmlDeviceGetMigMode(handle)
            mig_enabled = current == pynvml.NVML_DEVICE_MIG_ENABLE
        except pynvml.NVMLError:
            mig_enabled = False
        return Gpu(
            index=index,
            uuid=uuid,
            minor=minor,
            product=_text(pynvml.nvmlDeviceGetName(handle)),
            memory_mib=int(pynvml.nvmlDeviceGetMemoryInfo(handle).total // (1024 * 1024)),
            compute_capability=f"{major}.{minor_cc}",
            numa_node=numa_node(bus_ids[index]),
            nvlink_peers=self._peers(index, handle, uuids, bus_ids, handles),
            mig_enabled=mig_enabled,
            mig_devices=self._migs(index, uuid, minor, handle) if mig_enabled else (),
        )

    def _peers(
        self, index: int, handle: Any, uuids: list[str], bus_ids: list[str], handles: list[Any]
    ) -> frozenset[str]:
        """GPUs with NVLink P2P to this one; falls back to NVLink remote PCI addresses."""
        peers: set[str] = set()
        for j, other in enumerate(handles):
            if j == index:
                continue
            try:
                status = pynvml.nvmlDeviceGetP2PStatus(
                    handle, other, pynvml.NVML_P2P_CAPS_INDEX_NVLINK
                )
            except pynvml.NVMLError:
                break
            if status == pynvml.NVML_P2P_STATUS_OK:
                peers.add(uuids[j])
        else:
            return frozenset(peers)
        by_bus = {b.lower(): u for b, u in zip(bus_ids, uuids, strict=True)}
        for link in range(pynvml.NVML_NVLINK_MAX_LINKS):
            try:
                if pynvml.nvmlDeviceGetNvLinkState(handle, link) != pynvml.NVML_FEATURE_ENABLED:
                    continue
                remote = _text(pynvml.nvmlDeviceGetNvLinkRemotePciInfo(handle, link).busId).lower()
            except pynvml.NVMLError:
                break
            if remote in by_bus and by_bus[remote] != uuids[index]:
                peers.add(by_bus[remote])
        return frozenset(peers)

    def _migs(self, index: int, parent_uuid: str, minor: int, handle: Any) -> tuple[MigDevice, ...]:
        migs: list[MigDevice] = []
        total = int(pynvml.nvmlDeviceGetMemoryInfo(handle).total)
        for slot in range(pynvml.nvmlDeviceGetMaxMigDeviceCount(handle)):
            try:
                mig = pynvml.nvmlDeviceGetMigDeviceHandleByIndex(handle, slot)
            except pynvml.NVMLError_NotFound:
                continue
            gi = pynvml.nvmlDeviceGetGpuInstanceId(mig)
            ci = pynvml.nvmlDeviceGetComputeInstanceId(mig)
            migs.append(
                MigDevice(
                    uuid=_text(pynvml.nvmlDeviceGetUUID(mig)),
                    profile=mig_profile_name(pynvml.nvmlDeviceGetAttributes(mig), total),
                    parent_uuid=parent_uuid,
                    parent_index=index,
                    position=slot,
                    gpu_instance=gi,
                    compute_instance=ci,
                    device_paths=(f"/dev/nvidia{minor}", *mig_cap_paths(minor, gi, ci)),
                )
            )
        return tuple(migs)

    def control_paths(self) -> tuple[str, ...]:
        roots = ("/", self._driver_root)
        return tuple(
            p
            for p in CONTROL_DEVICE_PATHS
            if any(os.path.exists(os.path.join(r, p[1:])) for r in roots)
        )

    def watch_health(self, state: HealthState, policy: XidPolicy, stop: threading.Event) -> None:
        self._init()
        wanted = (
            pynvml.nvmlEventTypeXidCriticalError
            | pynvml.nvmlEventTypeDoubleBitEccError
            | pynvml.nvmlEventTypeSingleBitEccError
        )
        event_set = pynvml.nvmlEventSetCreate()
        try:
            for gpu_uuid in sorted({u.gpu_uuid for u in state.units}):
                try:
                    handle = pynvml.nvmlDeviceGetHandleByUUID(gpu_uuid)
                    supported = pynvml.nvmlDeviceGetSupportedEventTypes(handle)
                    pynvml.nvmlDeviceRegisterEvents(handle, wanted & supported, event_set)
                except pynvml.NVMLError_NotSupported:
                    log.warning(
                        "%s does not support health events (too old); not watched", gpu_uuid
                    )
                except pynvml.NVMLError as exc:
                    for unit in state.units:
                        if unit.gpu_uuid == gpu_uuid:
                            state.set_unhealthy(unit.uuid, f"cannot watch events: {exc}")
            while not stop.is_set():
                try:
                    event = pynvml.nvmlEventSetWait_v2(event_set, WAIT_MS)
                except pynvml.NVMLError_Timeout:
                    continue
                except pynvml.NVMLError as exc:
                    state.set_all_unhealthy(f"NVML event wait failed: {exc}")
                    stop.wait(WAIT_MS / 1000)
                    continue
                if event.eventType != pynvml.nvmlEventTypeXidCriticalError:
                    log.info("ignoring non-XID health event 0x%x", event.eventType)
                    continue
                try:
                    uuid = _text(pynvml.nvmlDeviceGetUUID(event.device))
                except pynvml.NVMLError:
                    state.set_all_unhealthy(f"XID {event.eventData} on an unknown device")
                    continue
                xid = int(event.eventData)
                known = any(uuid in (u.uuid, u.gpu_uuid) for u in state.units)
                if not known and policy.is_critical(xid):
                    # NVIDIA's rule: a critical XID we cannot attribute taints every device.
                    state.set_all_unhealthy(f"XID {xid} on unknown device {uuid}")
                    continue
                state.apply_xid(
                    policy, uuid, xid, int(event.gpuInstanceId), int(event.computeInstanceId)
                )
        finally:
            pynvml.nvmlEventSetFree(event_set)

    def close(self) -> None:
        if self._initialised:
            try:
                pynvml.nvmlShutdown()
            except pynvml.NVMLError as exc:
                log.warning("nvmlShutdown failed: %s", exc)
            self._initialised = False
