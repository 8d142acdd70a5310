"""Device health: which XIDs count, and the shared state ListAndWatch streams follow.

Backends report raw XID events; ``XidPolicy`` decides whether one is a hardware fault (NVIDIA's
default ignore list covers application faults), and ``HealthState`` records the result and wakes
every ListAndWatch stream so the kubelet sees the change at once.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gpustack.plugin.config import HealthConfig
from gpustack.plugin.devices import WHOLE_GPU_INSTANCE, Unit

log = logging.getLogger("gpustack.plugin")

HEALTHY = "Healthy"
UNHEALTHY = "Unhealthy"


class EnvError(ValueError):
    """A health-check environment variable has an invalid value."""


@dataclass(frozen=True)
class XidPolicy:
    """Which XIDs make a device unhealthy."""

    #: Ignore every XID (health checks off) unless it is in ``forced``.
    disabled: bool
    ignored: frozenset[int]
    #: XIDs that always count (DP_ENABLE_HEALTHCHECKS), even when ``disabled``.
    forced: frozenset[int] = frozenset()

    @property
    def active(self) -> bool:
        """Whether watching for events can change anything."""
        return not self.disabled or bool(self.forced)

    def is_critical(self, xid: int) -> bool:
        if xid in self.forced:
            return True
        return not self.disabled and xid not in self.ignored

    @classmethod
    def from_config(cls, health: HealthConfig, env: Mapping[str, str] | None = None) -> XidPolicy:
        """Config first, then NVIDIA's DP_DISABLE_HEALTHCHECKS / DP_ENABLE_HEALTHCHECKS."""
        env = os.environ if env is None else env
        disabled = not health.enabled
        ignored = set(health.ignored_xids)
        raw = env.get("DP_DISABLE_HEALTHCHECKS", "").strip().lower()
        if raw in ("all", "xids"):
            disabled = True
        elif raw:
            ignored |= _xid_list("DP_DISABLE_HEALTHCHECKS", raw)
        forced = _xid_list("DP_ENABLE_HEALTHCHECKS", env.get("DP_ENABLE_HEALTHCHECKS", ""))
        return cls(disabled=disabled, ignored=frozenset(ignored - forced), forced=frozenset(forced))


def _xid_list(name: str, raw: str) -> set[int]:
    xids: set[int] = set()
    for part in raw.split(","):
        part = part.strip()
        if not part:
            continue
        if not part.isdigit():
            raise EnvError(
                f"{name}={raw!r}: {part!r} is not an XID; use 'all', 'xids' or numbers like 48,79"
            )
        xids.add(int(part))
    return xids


class HealthState:
    """Unhealthy units, a change counter, and a condition to wait for changes on."""

    def __init__(self, units: Iterable[Unit]) -> None:
        self._units = {u.uuid: u for u in units}
        self._unhealthy: dict[str, str] = {}
        self._generation = 0
        self._closed = False
        self._wakes = 0
        self._cond = threading.Condition()

    @property
    def units(self) -> list[Unit]:
        return list(self._units.values())

    def health(self, unit_uuid: str) -> str:
        with self._cond:
            return UNHEALTHY if unit_uuid in self._unhealthy else HEALTHY

    def snapshot(self) -> tuple[int, frozenset[str]]:
        """(generation, unhealthy unit UUIDs) read atomically."""
        with self._cond:
            return self._generation, frozenset(self._unhealthy)

    def set_unhealthy(self, unit_uuid: str, reason: str) -> None:
        with self._cond:
            if unit_uuid in self._unhealthy or unit_uuid not in self._units:
                return
            self._unhealthy[unit_uuid] = reason
            self._bump()
        log.warning("device %s marked Unhealthy: %s", unit_uuid, reason)

    def set_healthy(self, unit_uuid: str) -> None:
        with self._cond:
            if self._unhealthy.pop(unit_uuid, None) is None:
                return
            self._bump()
        log.info("device %s marked Healthy again", unit_uuid)

    def set_all_unhealthy(self, reason: str) -> None:
        for uuid in list(self._units):
            self.set_unhealthy(uuid, reason)

    def apply_xid(
        self,
        policy: XidPolicy,
        uuid: str,
        xid: int,
        gpu_instance: int = WHOLE_GPU_INSTANCE,
        compute_instance: int = WHOLE_GPU_INSTANCE,
    ) -> list[str]:
        """Apply an XID event on ``uuid`` (GPU or MIG UUID); returns the units it made unhealthy."""
        if not policy.is_critical(xid):
            log.info("ignoring XID %d on %s (not a hardware fault per policy)", xid, uuid)
            return []
        hit = [
            u.uuid
            for u in self._units.values()
            if u.matches_event(uuid, gpu_instance, compute_instance)
        ]
        for unit_uuid in hit:
            self.set_unhealthy(unit_uuid, f"XID {xid}")
        return hit

    def wait_for_change(self, seen: int, timeout: float) -> int:
        """Block until the generation differs from ``seen`` (or timeout/close); return it."""
        with self._cond:
            wakes = self._wakes
            self._cond.wait_for(
                lambda: self._generation != seen or self._closed or self._wakes != wakes, timeout
            )
            return self._generation

    def wake(self) -> None:
        """Wake waiters so they re-check their own stop conditions."""
        with self._cond:
            self._wakes += 1
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed

    def _bump(self) -> None:
        self._generation += 1
        self._cond.notify_all()
