"""Per Pending pod with a ResourceClaim that is not allocated: why no device can be given to it.

Dynamic Resource Allocation fails in a few ways the scheduler words tersely ("0/3 nodes are
available: 3 cannot allocate all claims"): the claim was never made (its template does not exist),
its DeviceClass does not exist, no node publishes a ResourceSlice of the class's driver (the DRA
kubelet plugin is not running or not publishing), or no published device satisfies the class's
and the request's selectors, or every one that does carries a device taint the request does not
tolerate (KEP-5055, :mod:`gpustack.kube.device_taints`) or is taken. Each is read from the state
(``resourceclaims``, ``resourceslices``, ``deviceclasses``); the selectors are evaluated only in
their simplest form (``&&`` of ``==``/``!=`` comparisons, :func:`gpustack.kube.cel.evaluate`),
and a selector that is more is named as what may be the reason, never judged. The scheduler's
and the resourceclaim controller's own messages are quoted (their words:
k8s.io/kubernetes ``pkg/scheduler/framework/plugins/dynamicresources`` "cannot allocate all
claims", "request ...: device class ... does not exist"; ``k8s.io/dynamic-resource-allocation/
resourceclaim`` "ResourceClaim not created yet"; ``pkg/controller/resourceclaim`` event
``FailedResourceClaimCreation``). A state recorded without the DRA kinds is judged only by those
messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gpustack import dra_upstream as upstream
from gpustack.doctor.finding import Diagnosis
from gpustack.kube import cel
from gpustack.kube.claims import (
    CLAIM,
    NVIDIA_CLASSES,
    Choice,
    Defined,
    choices,
    class_kind,
    selectors,
)
from gpustack.kube.device_taints import SliceDevice, blocking, device_taints, said, taint_rule
from gpustack.kube.kubectl import ARGS
from gpustack.kube.state import JSON, ClusterState, events_for, get, items, mapping, name
from gpustack.kube.suggest import did_you_mean

CHECK = "claim-unallocated"
#: Reason of the resourceclaim controller's event when it cannot make a pod's claim.
CREATION_FAILED = "FailedResourceClaimCreation"
#: Words of the scheduler's FailedScheduling message that concern claims.
_CLAIM_WORDS = ("claim", "device class")


@dataclass(frozen=True)
class _Cause:
    message: str
    hint: str


def _namespace(obj: Any) -> str:
    found = get(obj, "metadata", "namespace")
    return found if isinstance(found, str) else "default"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _claim_of(pod: JSON, entry: dict[str, Any]) -> str | None:
    """The ResourceClaim a pod's ``resourceClaims`` entry uses: named, or made from a template
    (``status.resourceClaimStatuses``)."""
    direct = _str(entry.get("resourceClaimName"))
    if direct is not None:
        return direct
    for status in items(pod, "status", "resourceClaimStatuses"):
        if isinstance(status, dict) and status.get("name") == entry.get("name"):
            return _str(status.get("resourceClaimName"))
    return None


def _find(objs: list[JSON], namespace: str, obj_name: str) -> JSON | None:
    for obj in objs:
        if name(obj) == obj_name and _namespace(obj) == namespace:
            return obj
    return None


def _allocated(state: ClusterState) -> set[tuple[str, str, str]]:
    """(driver, pool, device) of every device allocated to a claim."""
    taken = set()
    for claim in state.resourceclaims:
        for result in items(claim, "status", "allocation", "devices", "results"):
            if isinstance(result, dict):
                taken.add(
                    (str(result.get("driver")), str(result.get("pool")), str(result.get("device")))
                )
    return taken


def _count(claim: JSON, choice: Choice) -> int:
    """How many devices the request wants (``count``, 1 by default)."""
    spec: Any = claim
    for part in choice.path:
        if isinstance(part, int):
            spec = spec[part] if isinstance(spec, list) and 0 <= part < len(spec) else None
        else:
            spec = spec.get(part) if isinstance(spec, dict) else None
    count = spec.get("count") if isinstance(spec, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 1


def _values(expr: str, devices: list[tuple[str, JSON]]) -> str:
    """What the devices carry of the attributes ``expr`` reads (``productName: NVIDIA L4``)."""
    shown = []
    for ref in cel.refs(expr):
        if ref.field != "attributes":
            continue
        seen: dict[str, None] = {}
        for drv, device in devices:
            table = mapping(device, "attributes")
            entry = table.get(ref.name) if ref.domain == drv else None
            entry = entry if entry is not None else table.get(ref.qualified)
            value = next(iter(entry.values()), None) if isinstance(entry, dict) and entry else None
            seen[repr(value) if value is not None else "none"] = None
        shown.append(f"{ref.name}: {', '.join(list(seen)[:5])}")
    return f" (the devices have {'; '.join(shown)})" if shown else ""


_Device = tuple[str, JSON, str]
"""(driver, device, pool) of one published device."""


def _missing_class(cls: str, defined: Defined, where: str) -> _Cause:
    """The request names a DeviceClass that does not exist: who would create it."""
    if cls in upstream.COMPUTE_DOMAIN_DEVICE_CLASSES:
        deploy = "NVIDIA's DRA driver creates it with dra.computeDomains in the profile"
    elif cls in NVIDIA_CLASSES:
        deploy = "NVIDIA's DRA driver creates it with dra.gpus in the profile (dra.enabled)"
    else:
        deploy = did_you_mean(cls, list(defined.device_classes)) or "create the DeviceClass"
    return _Cause(f"{where}: DeviceClass {cls} does not exist", deploy)


def _no_slices(driver: str, cls: str, where: str) -> _Cause:
    return _Cause(
        f"{where}: no node publishes a ResourceSlice of driver {driver} (DeviceClass "
        f"{cls}): the DRA kubelet plugin is not running or not publishing",
        "check the DRA driver's kubelet plugin pods on the GPU nodes and their logs; "
        f"`kubectl get resourceslices --field-selector spec.driver={driver}` lists "
        "what it publishes",
    )


def _published(slices: list[JSON], driver: str) -> list[_Device]:
    """Every device the driver's ResourceSlices publish, with its pool."""
    return [
        (driver, d, str(get(s, "spec", "pool", "name")))
        for s in slices
        for d in items(s, "spec", "devices")
        if isinstance(d, dict)
    ]


def _passing(devices: list[_Device], exprs: list[str]) -> list[_Device]:
    """The devices no expression rules out (one gpustack cannot evaluate rules none out)."""
    return [
        (drv, d, pool)
        for drv, d, pool in devices
        if all(cel.evaluate(e, d, drv) is not False for e in exprs)
    ]


def _selectors_cause(
    in_class: list[_Device], choice: Choice, cls: str, where: str
) -> tuple[_Cause | None, list[str]]:
    """A selector no device of the class matches (the cause), else the selectors gpustack could
    not judge on some device (the unsure ones)."""
    unsure: list[str] = []
    for expr, _ in choice.selectors:
        verdicts = [cel.evaluate(expr, d, drv) for drv, d, _ in in_class]
        if all(v is False for v in verdicts):
            shown = [(drv, d) for drv, d, _ in in_class]
            cause = _Cause(
                f"{where}: no device of DeviceClass {cls} matches the selector `{expr}`"
                f"{_values(expr, shown)}",
                "fix the selector to what the devices publish (kubectl get resourceslices -o "
                "yaml), or add nodes with such devices",
            )
            return cause, unsure
        if any(v is None for v in verdicts):
            unsure.append(expr)
    return None, unsure


def _tainted(
    state: ClusterState, matching: list[_Device], choice: Choice, where: str
) -> _Cause | None:
    """Every matching device carries a taint the request does not tolerate (KEP-5055: its
    driver's in the ResourceSlice, or a DeviceTaintRule's); ``None`` when one does not."""
    rules = [r for r in map(taint_rule, state.devicetaintrules) if r is not None]
    shown = []
    for drv, device, pool in matching:
        one = SliceDevice(drv, pool, str(device.get("name")), tuple(device_taints(device)))
        why = blocking(one, rules, choice.tolerations)
        if not why:
            return None
        shown.append(f"{pool}/{one.name}: {said(why)}")
    more = f"; {len(shown) - 3} more" if len(shown) > 3 else ""
    return _Cause(
        f"{where}: every one of the {len(matching)} matching devices carries a taint the "
        f"request does not tolerate ({'; '.join(shown[:3])}{more})",
        "if it may use such devices, add tolerations for those taints to the request; else "
        "bring the devices back (kubectl get resourceslices -o yaml; kubectl get "
        "devicetaintrules)",
    )


def _request(
    state: ClusterState,
    defined: Defined,
    claim: JSON,
    choice: Choice,
    taken: set[tuple[str, str, str]],
) -> _Cause | None:
    """Why one request of an unallocated claim finds no device; ``None`` when it may."""
    cls = choice.device_class
    where = f"claim {name(claim)} request {choice.request}"
    if cls is None:
        return None
    if cls not in defined.device_classes:
        return _missing_class(cls, defined, where)
    kind = class_kind(cls, defined)
    if kind is None:
        return None
    slices = [s for s in state.resourceslices if get(s, "spec", "driver") == kind.driver]
    if not slices:
        return _no_slices(kind.driver, cls, where)
    devices = _published(slices, kind.driver)
    in_class = _passing(devices, list(defined.device_classes[cls]))
    if not in_class:
        return _Cause(
            f"{where}: the ResourceSlices of {kind.driver} publish {len(devices)} devices, none "
            f"of DeviceClass {cls}",
            "ask for a class whose devices the nodes have, or give the nodes such devices",
        )
    cause, unsure = _selectors_cause(in_class, choice, cls, where)
    if cause is not None:
        return cause
    matching = _passing(in_class, [e for e, _ in choice.selectors])
    tainted = _tainted(state, matching, choice, where)
    if matching and tainted is not None and not unsure:
        return tainted
    free = [m for m in matching if (m[0], m[2], str(m[1].get("name"))) not in taken]
    need = _count(claim, choice)
    if len(free) < need and not unsure:
        return _Cause(
            f"{where}: it needs {need} device(s) of DeviceClass {cls}; {len(matching)} match and "
            f"{len(matching) - len(free)} of them are allocated to other claims",
            "wait for the other claims' pods to finish, or add nodes",
        )
    if unsure:
        return _Cause(
            f"{where}: the selector `{unsure[0]}` is more than gpustack evaluates; it may be "
            "the reason no device matches",
            "compare it with what the devices publish (kubectl get resourceslices -o yaml)",
        )
    return None


def _scheduler(state: ClusterState, pod: JSON) -> str | None:
    failed = [
        e for e in events_for(state, "Pod", name(pod)) if e.get("reason") == "FailedScheduling"
    ]
    return str(failed[-1].get("message", "")).strip() if failed else None


def _no_claim_made(state: ClusterState, pod: JSON, entry: dict[str, Any], template: str) -> _Cause:
    """A pod's claim from ``template`` was never made: the controller's refusal, quoted."""
    refused = [
        str(e.get("message", "")).strip()
        for e in events_for(state, "Pod", name(pod))
        if e.get("reason") == CREATION_FAILED
    ]
    quoted = f" (resourceclaim controller: {refused[-1]})" if refused else ""
    return _Cause(
        f"no ResourceClaim was made from template {template} for claim {entry.get('name')}{quoted}",
        f"kubectl -n {_namespace(pod)} get resourceclaimtemplate {template} (it must exist "
        "in the pod's namespace)",
    )


def _entry_causes(
    state: ClusterState,
    defined: Defined,
    taken: set[tuple[str, str, str]],
    pod: JSON,
    entry: dict[str, Any],
) -> list[_Cause]:
    """Why one ``resourceClaims`` entry of a pod holds it back (none when it does not)."""
    namespace = _namespace(pod)
    template = _str(entry.get("resourceClaimTemplateName"))
    claim_name = _claim_of(pod, entry)
    if claim_name is None:
        return [] if template is None else [_no_claim_made(state, pod, entry, template)]
    claim = _find(state.resourceclaims, namespace, claim_name)
    if claim is None:
        if not state.has_dra:
            return []
        return [
            _Cause(
                f"ResourceClaim {claim_name} does not exist in namespace {namespace}",
                "create it, or fix resourceClaimName in the pod",
            )
        ]
    if get(claim, "status", "allocation") or not state.has_dra:
        return []
    found = (_request(state, defined, claim, c, taken) for c in choices(claim, CLAIM))
    return [cause for cause in found if cause is not None]


def diagnose_pod(state: ClusterState, pod: JSON) -> Diagnosis | None:
    namespace = _namespace(pod)
    defined = Defined(
        device_classes={
            name(c): tuple(e for e, _ in selectors(mapping(c, "spec"), ()))
            for c in state.deviceclasses
        }
    )
    taken = _allocated(state)
    causes = [
        cause
        for entry in items(pod, "spec", "resourceClaims")
        if isinstance(entry, dict)
        for cause in _entry_causes(state, defined, taken, pod, entry)
    ]
    said = _scheduler(state, pod)
    about_claims = said is not None and any(w in said.lower() for w in _CLAIM_WORDS)
    if not causes and not about_claims:
        return None
    parts = [c.message for c in causes]
    if said is not None:
        parts.append(f"scheduler: {said}")
    if causes:
        hint = causes[0].hint
    elif not state.has_dra:
        hint = f"record the state with `kubectl {' '.join(ARGS)}` to see claims, slices and classes"
    else:
        hint = f"kubectl -n {namespace} describe resourceclaims"
    subject = f"pod/{namespace}/{name(pod)}"
    return Diagnosis(subject, CHECK, "; ".join(parts), hint)


def diagnose_claims(state: ClusterState) -> Iterator[Diagnosis]:
    for pod in state.pods:
        if get(pod, "status", "phase") != "Pending" or get(pod, "spec", "nodeName"):
            continue
        if not items(pod, "spec", "resourceClaims"):
            continue
        found = diagnose_pod(state, pod)
        if found is not None:
            yield found
