"""The simulated backend: GPUs from the config file, health events from a text file.

Event file format (``gpustack.simulated.eventsFile``), one event per line, appended by tests,
demos or operators; the plugin follows the file from its start (so a restarted plugin replays
it), polling every 100 ms, and starts over if the file is truncated:

    # comments and blank lines are ignored
    xid <device> <xid>     an XID error on a GPU or MIG device (ignored XIDs stay ignored)
    recover <device>       mark the device Healthy again (NVML has no such event)

``<device>`` is a ``GPU-…``/``MIG-…`` UUID or a GPU index, ``<xid>`` up to ten ASCII digits.
Anyone who can write the file can feed it anything, so a bad line never stops the monitor (a
stopped monitor marks every GPU unhealthy): malformed lines and unknown devices are logged,
shortened, and skipped; a line longer than ``MAX_EVENT_LINE`` bytes is skipped as it streams
past, and the file is read ``READ_CHUNK`` bytes at a time, so memory stays bounded whatever is
appended.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import uuid as uuidlib

from gpustack.plugin.config import PluginConfig, SimulatedGpu
from gpustack.plugin.devices import CONTROL_DEVICE_PATHS, Gpu, MigDevice
from gpustack.plugin.health import HealthState, XidPolicy

log = logging.getLogger("gpustack.plugin")

POLL_SECONDS = 0.1
#: Longest event line the monitor reads; a longer one is skipped with one log line.
MAX_EVENT_LINE = 4096
#: Bytes read at a time: bounds memory however much is appended at once.
READ_CHUNK = 64 * 1024
#: How much of a skipped line a log message echoes.
ECHO_CHARS = 120
_XID = re.compile(r"[0-9]{1,10}")


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
        lines = LineReader(path)
        last_error = ""
        while not stop.wait(POLL_SECONDS):
            try:
                size = os.stat(path).st_size
                if size < lines.offset:
                    log.info("events file %s was truncated; reading it from the start", path)
                    lines = LineReader(path)
                if size == lines.offset:
                    continue
                with open(path, "rb") as fh:
                    fh.seek(lines.offset)
                    while lines.offset < size and not stop.is_set():
                        chunk = fh.read(min(READ_CHUNK, size - lines.offset))
                        if not chunk:
                            break
                        for raw in lines.feed(chunk):
                            _apply_line(
                                raw.decode("utf-8", "replace"), state, policy, by_index, known
                            )
            except FileNotFoundError:
                continue
            except OSError as exc:
                message = f"cannot read events file {path}: {exc.strerror or exc}"
                if message != last_error:  # once per distinct problem, not every 100 ms
                    log.warning("%s; retrying", message)
                    last_error = message
                continue
            last_error = ""

    def close(self) -> None:
        """Nothing to release: the simulated backend holds no handles between calls."""


class LineReader:
    """Splits the bytes appended to a file into lines of at most ``MAX_EVENT_LINE`` bytes.

    A longer line is reported once, as soon as it passes the limit (it may never end), and its
    bytes are dropped up to the next newline; a final line without newline waits for more.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        #: Bytes of the file consumed so far.
        self.offset = 0
        self._pending = bytearray()
        self._line_start = 0
        self._skipping = False

    def feed(self, chunk: bytes) -> list[bytes]:
        """The complete, short-enough lines that ``chunk`` ends."""
        done: list[bytes] = []
        start = 0
        while start <= len(chunk):
            newline = chunk.find(b"\n", start)
            end = len(chunk) if newline < 0 else newline
            if not self._skipping:
                self._pending += chunk[start:end]
                if len(self._pending) > MAX_EVENT_LINE:
                    log.warning(
                        "events file %s: the line at byte %d is longer than %d bytes; skipped",
                        self.path,
                        self._line_start,
                        MAX_EVENT_LINE,
                    )
                    self._skipping = True
                    self._pending.clear()
            if newline < 0:
                break
            if not self._skipping:
                done.append(bytes(self._pending))
            self._pending.clear()
            self._skipping = False
            self._line_start = self.offset + newline + 1
            start = newline + 1
        self.offset += len(chunk)
        return done


def _echo(line: str) -> str:
    """``line`` for a log message: quoted, and shortened past ``ECHO_CHARS``."""
    if len(line) <= ECHO_CHARS:
        return repr(line)
    return f"{line[:ECHO_CHARS]!r}… ({len(line)} characters)"


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
    if verb == "xid" and len(args) == 2 and _XID.fullmatch(args[1]):
        if device not in known:
            log.warning("simulated event for unknown device %s ignored", _echo(args[0]))
            return
        state.apply_xid(policy, device, int(args[1]))
    elif verb == "recover" and len(args) == 1:
        if device not in known:
            log.warning("simulated event for unknown device %s ignored", _echo(args[0]))
            return
        for unit in state.units:
            if device in (unit.uuid, unit.gpu_uuid):
                state.set_healthy(unit.uuid)
    else:
        log.warning(
            "malformed simulated event %s ignored; use 'xid <device> <xid>' or 'recover <device>'",
            _echo(line),
        )
