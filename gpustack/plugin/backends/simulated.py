"""The simulated backend: GPUs from the config file, health events from a text file.

Event file format (``gpustack.simulated.eventsFile``), one event per line, appended by tests,
demos or operators; the plugin follows the file from its start (so a restarted plugin replays
it), polling every 100 ms, and starts over if the file is truncated:

    # comments and blank lines are ignored
    xid <device> <xid>     an XID error on a GPU or MIG device (ignored XIDs stay ignored)
    recover <device>       mark the device Healthy again (NVML has no such event)

``<device>`` is a ``GPU-…``/``MIG-…`` UUID or a GPU index. Malformed lines and unknown devices
are logged and skipped.
"""

from __future__ import annotations

import logging
import os
import threading
import uuid as uuidlib

from gpustack.plugin.config import PluginConfig, SimulatedGpu
from gpustack.plugin.devices import CONTROL_DEVICE_PATHS, Gpu, MigDevice
from gpustack.plugin.health import HealthState, XidPolicy

log = logging.getLogger("gpustack.plugin")

POLL_SECONDS = 0.1


def mig_uuid(parent_uuid: str, profile: str, position: int) -> str:
    return "MIG-" + str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, f"{parent_uuid}/{profile}/{position}"))


def _gpu(sim: SimulatedGpu, by_index: dict[int, str]) -> Gpu:
    minor = sim.index
    migs: list[MigDevice] = []
    if sim.mig.enabled:
        for profile, count in sim.mig.devices:
            for _ in range(count):
                pos = len(migs)
                gi = pos + 1
                # Capability minors modelled on the driver's numbering: a block per GPU.
                caps = (
                    f"/dev/nvidia-caps/nvidia-cap{minor * 128 + gi * 2 + 1}",
                    f"/dev/nvidia-caps/nvidia-cap{minor * 128 + gi * 2 + 2}",
                )
                migs.append(
                    MigDevice(
                        uuid=mig_uuid(sim.uuid, profile, pos),
                        profile=profile,
                        parent_uuid=sim.uuid,
                        parent_index=sim.index,
                        position=pos,
                        gpu_instance=gi,
                        compute_instance=0,
                        device_paths=(f"/dev/nvidia{minor}", *caps),
                    )
                )
    return Gpu(
        index=sim.index,
        uuid=sim.uuid,
        minor=minor,
        product=sim.product,
        memory_mib=sim.memory_mib,
        compute_capability=sim.compute_capability,
        numa_node=sim.numa_node,
        nvlink_peers=frozenset(by_index[p] for p in sim.nvlink_peers if p in by_index),
        mig_enabled=sim.mig.enabled,
        mig_devices=tuple(migs),
    )


class SimulatedBackend:
    """GPUs described in ``gpustack.simulated``."""

    def __init__(self, config: PluginConfig) -> None:
        self._sim = config.extensions.simulated

    def discover(self) -> list[Gpu]:
        by_index = {g.index: g.uuid for g in self._sim.gpus}
        return sorted((_gpu(g, by_index) for g in self._sim.gpus), key=lambda g: g.index)

    def control_paths(self) -> tuple[str, ...]:
        return CONTROL_DEVICE_PATHS

    def watch_health(self, state: HealthState, policy: XidPolicy, stop: threading.Event) -> None:
        path = self._sim.events_file
        if path is None:
            return
        by_index = {str(g.index): g.uuid for g in self._sim.gpus}
        known = {u.uuid for u in state.units} | {u.gpu_uuid for u in state.units}
        offset = 0
        pending = b""
        while not stop.wait(POLL_SECONDS):
            try:
                size = os.stat(path).st_size
            except FileNotFoundError:
                continue
            except OSError as exc:
                log.warning("cannot read events file %s: %s", path, exc)
                continue
            if size < offset:
                log.info("events file %s was truncated; reading it from the start", path)
                offset, pending = 0, b""
            if size == offset:
                continue
            with open(path, "rb") as fh:
                fh.seek(offset)
                chunk = fh.read(size - offset)
            offset += len(chunk)
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            for raw in lines:
                _apply_line(raw.decode("utf-8", "replace"), state, policy, by_index, known)

    def close(self) -> None:
        """Nothing to release: the simulated backend holds no handles between calls."""


def _apply_line(
    line: str,
    state: HealthState,
    policy: XidPolicy,
    by_index: dict[str, str],
    known: set[str],
) -> None:
    words = line.split("#", 1)[0].split()
    if not words:
        return
    verb, args = words[0], words[1:]
    device = by_index.get(args[0], args[0]) if args else ""
    if verb == "xid" and len(args) == 2 and args[1].isdigit():
        if device not in known:
            log.warning("simulated event for unknown device %r ignored: %s", args[0], line)
            return
        state.apply_xid(policy, device, int(args[1]))
    elif verb == "recover" and len(args) == 1:
        if device not in known:
            log.warning("simulated event for unknown device %r ignored: %s", args[0], line)
            return
        for unit in state.units:
            if device in (unit.uuid, unit.gpu_uuid):
                state.set_healthy(unit.uuid)
    else:
        log.warning(
            "malformed simulated event %r ignored; use 'xid <device> <xid>' or 'recover <device>'",
            line,
        )
