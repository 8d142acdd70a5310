"""Device taints (KEP-5055) on plain JSON: a device's own taints in a ResourceSlice, the taints a
DeviceTaintRule adds, and whether a request's tolerations let a device be allocated.

Facts, from the API types vendored in openshift/microshift
(``deps/github.com/openshift/kubernetes/staging/src/k8s.io/api/resource/<version>/types.go``):

- ``v1`` ``Device.taints`` (``v1beta1``: ``BasicDevice.taints``, under ``devices[].basic``): at
  most 16 ``DeviceTaint{key, value, effect, timeAdded}``, written by the driver.
- ``DeviceTaintEffect``: ``None`` (informational), ``NoSchedule`` (no new allocation of the device
  to a claim that does not tolerate it) and ``NoExecute`` (also evicts the pods of claims already
  allocated it); "consumers must treat unknown effects like None".
- ``DeviceTaintRule`` (``v1alpha3`` since 1.33, ``v1beta2`` since 1.36; cluster-scoped): one
  ``spec.taint`` for every device its ``spec.deviceSelector`` matches, "the same effect as if the
  taint was specified directly in the ResourceSlice". The selector's ``driver``, ``pool`` and
  ``device`` must all match; an empty selector matches every device, no selector none
  (``deviceClassName`` and ``selectors`` were tombstoned in 1.35).
- ``DeviceToleration{key, operator, value, effect, tolerationSeconds}`` sits beside
  ``deviceClassName`` (``v1`` ``ExactDeviceRequest`` and ``DeviceSubRequest``, ``v1beta1``
  ``DeviceRequest``): an empty key with ``Exists`` matches every taint, ``operator`` defaults to
  ``Equal``, an empty effect matches every effect.

Shared by ``lint`` (the rules read manifests) and ``doctor`` (it reads the cluster's state), which
must not import each other.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: The effects that keep a device from a claim that does not tolerate them.
BLOCKING = ("NoSchedule", "NoExecute")
TAINT_RULE = "DeviceTaintRule"


def _get(data: Any, *path: str) -> Any:
    for part in path:
        data = data.get(part) if isinstance(data, dict) else None
    return data


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(frozen=True)
class DeviceTaint:
    key: str
    value: str
    effect: str

    @property
    def blocking(self) -> bool:
        return self.effect in BLOCKING

    def __str__(self) -> str:
        value = f"={self.value}" if self.value else ""
        return f"{self.key}{value}:{self.effect}"


def taint_of(data: Any) -> DeviceTaint | None:
    """A ``DeviceTaint`` mapping; ``None`` without a key."""
    key = _str(_get(data, "key"))
    if not key:
        return None
    return DeviceTaint(key, _str(_get(data, "value")), _str(_get(data, "effect")))


def device_taints(device: Any) -> list[DeviceTaint]:
    """A ResourceSlice device's own taints (``v1`` on the device, ``v1beta1`` under ``basic``)."""
    listed = _list(_get(device, "taints")) or _list(_get(device, "basic", "taints"))
    return [t for t in (taint_of(x) for x in listed) if t is not None]


@dataclass(frozen=True)
class TaintRule:
    """A DeviceTaintRule: ``driver``, ``pool``, ``device`` of its selector (``None``: any), and
    ``selects``: whether it has a selector at all (without one it matches no device)."""

    name: str
    taint: DeviceTaint
    selects: bool
    driver: str | None = None
    pool: str | None = None
    device: str | None = None

    def matches(self, driver: str, pool: str, device: str) -> bool:
        wanted = ((self.driver, driver), (self.pool, pool), (self.device, device))
        return self.selects and all(w is None or w == got for w, got in wanted)

    def covers(self, driver: str) -> bool:
        """Whether it taints every device of ``driver``, whatever the pools and devices."""
        return (
            self.selects
            and self.pool is None
            and self.device is None
            and self.driver in (None, driver)
        )

    @property
    def scope(self) -> str:
        """What it taints, for messages: ``devices of driver gpu.nvidia.com, pool gpu-1``."""
        if not self.selects:
            return "no device (it has no deviceSelector)"
        parts = [
            f"{what} {value}"
            for what, value in (("driver", self.driver), ("pool", self.pool))
            if value is not None
        ]
        one = f"device {self.device}" if self.device is not None else "every device"
        return f"{one} of {', '.join(parts)}" if parts else f"{one} of every driver and pool"


def taint_rule(data: Any) -> TaintRule | None:
    """The DeviceTaintRule ``data`` (a manifest's or the state's); ``None`` without a taint."""
    taint = taint_of(_get(data, "spec", "taint"))
    if taint is None:
        return None
    selector = _get(data, "spec", "deviceSelector")

    def field(name: str) -> str | None:
        value = _get(selector, name)
        return value if isinstance(value, str) else None

    return TaintRule(
        name=_str(_get(data, "metadata", "name")) or "?",
        taint=taint,
        selects=isinstance(selector, dict),
        driver=field("driver"),
        pool=field("pool"),
        device=field("device"),
    )


def tolerates(tolerations: Iterable[Any], taint: DeviceTaint) -> bool:
    """Whether one of the request's ``DeviceToleration`` mappings matches ``taint``."""
    for tol in tolerations:
        if not isinstance(tol, dict):
            continue
        key, op = _str(tol.get("key")), _str(tol.get("operator")) or "Equal"
        if (key and key != taint.key) or (not key and op != "Exists"):
            continue
        if _str(tol.get("effect")) not in ("", taint.effect):
            continue
        if op == "Equal" and _str(tol.get("value")) != taint.value:
            continue
        return True
    return False


def untolerated(taints: Iterable[DeviceTaint], tolerations: Iterable[Any]) -> list[DeviceTaint]:
    """The blocking taints none of ``tolerations`` matches."""
    tols = list(tolerations)
    return [t for t in taints if t.blocking and not tolerates(tols, t)]


@dataclass(frozen=True)
class SliceDevice:
    """One device a ResourceSlice publishes, with the taints its driver gave it."""

    driver: str
    pool: str
    name: str
    taints: tuple[DeviceTaint, ...]


def slice_devices(data: Any) -> list[SliceDevice]:
    """The devices of the ResourceSlice ``data`` (``spec.devices``, its ``spec.driver`` and
    ``spec.pool.name``)."""
    driver, pool = _str(_get(data, "spec", "driver")), _str(_get(data, "spec", "pool", "name"))
    return [
        SliceDevice(driver, pool, _str(d.get("name")) or "?", tuple(device_taints(d)))
        for d in _list(_get(data, "spec", "devices"))
        if isinstance(d, dict)
    ]


def blocking(
    device: SliceDevice, rules: Iterable[TaintRule], tolerations: Iterable[Any]
) -> list[tuple[DeviceTaint, str]]:
    """The taints that keep ``device`` from a request with ``tolerations``, each with whose it
    is: its own (``its driver's``) and those of the ``rules`` that select it."""
    tols = list(tolerations)
    found = [(t, "its driver's") for t in untolerated(device.taints, tols)]
    for rule in rules:
        if rule.matches(device.driver, device.pool, device.name):
            found += [(t, f"DeviceTaintRule {rule.name}") for t in untolerated([rule.taint], tols)]
    return found


def said(found: Iterable[tuple[DeviceTaint, str]]) -> str:
    """:func:`blocking`'s taints for a message: ``key=value:effect (whose), ...``."""
    return ", ".join(f"{t} ({whose})" for t, whose in found)
