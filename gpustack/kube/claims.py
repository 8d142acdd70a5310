"""Dynamic Resource Allocation in manifests: what a ResourceClaim or ResourceClaimTemplate asks
for, what the linted manifests define, and what NVIDIA's driver publishes for a DeviceClass.

``resource.k8s.io/v1`` keeps a request's class and selectors under ``exactly`` (or, for a
prioritized list, under each ``firstAvailable`` subrequest); ``v1beta1`` kept them on the request
itself, and both are read. A pod names its claims in ``spec.resourceClaims`` (a
``resourceClaimName`` or a ``resourceClaimTemplateName``) and each container picks them in
``resources.claims``. The rules compare these with :class:`Defined` (every DeviceClass, claim and
template of all linted files, so a Job in one file may use a template of another) and with
NVIDIA's facts (:mod:`gpustack.dra_upstream`): the DeviceClasses its driver creates, and the
attributes, value kinds and capacities each device type publishes. ``doctor`` reads the same
shapes from the cluster's state. Judging a selector against those facts is lint's
(:mod:`gpustack.lint.misreads`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpustack import dra_upstream as upstream
from gpustack.kube import cel
from gpustack.kube.device_taints import (
    TAINT_RULE,
    SliceDevice,
    TaintRule,
    slice_devices,
    taint_rule,
)
from gpustack.kube.manifests import Manifest
from gpustack.profile.document import JsonPath

CLAIM = "ResourceClaim"
TEMPLATE = "ResourceClaimTemplate"
DEVICE_CLASS = "DeviceClass"
RESOURCE_SLICE = "ResourceSlice"
#: kind -> path of its ``devices.requests`` list.
REQUESTS_AT: dict[str, JsonPath] = {
    CLAIM: ("spec", "devices", "requests"),
    TEMPLATE: ("spec", "spec", "devices", "requests"),
}
#: Every DeviceClass NVIDIA's driver can create (what lint knows without a profile).
NVIDIA_CLASSES: tuple[str, ...] = tuple(c.name for c in upstream.DEVICE_CLASSES)
#: Domain of the standard attributes (``resource.kubernetes.io/pciBusID``).
STANDARD_DOMAIN = upstream.PCI_BUS_ID.split("/", 1)[0]


def _get(data: Any, path: JsonPath) -> Any:
    for part in path:
        if isinstance(part, int):
            data = data[part] if isinstance(data, list) and 0 <= part < len(data) else None
        else:
            data = data.get(part) if isinstance(data, dict) else None
    return data


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Choice:
    """One way a request is met: its ``exactly`` (v1), the request itself (v1beta1), or one
    ``firstAvailable`` subrequest. ``path`` is that mapping's path in the object;
    ``tolerations`` its device tolerations (beside ``deviceClassName``, KEP-5055)."""

    request: str
    device_class: str | None
    path: JsonPath
    selectors: tuple[tuple[str, JsonPath], ...]
    tolerations: tuple[Any, ...] = ()

    @property
    def class_path(self) -> JsonPath:
        return (*self.path, "deviceClassName")


def selectors(spec: Any, at: JsonPath) -> tuple[tuple[str, JsonPath], ...]:
    """The CEL expressions of ``spec.selectors`` (``[{cel: {expression}}]``) with their paths."""
    out = []
    for i, sel in enumerate(_list(_get(spec, ("selectors",)))):
        expr = _get(sel, ("cel", "expression"))
        if isinstance(expr, str):
            out.append((expr, (*at, "selectors", i, "cel", "expression")))
    return tuple(out)


def _choice(request: str, spec: Any, at: JsonPath) -> Choice:
    cls = _str(_get(spec, ("deviceClassName",)))
    tolerations = tuple(_list(_get(spec, ("tolerations",))))
    return Choice(request, cls, at, selectors(spec, at), tolerations)


def choices(data: Any, kind: str) -> list[Choice]:
    """Every way each request of a ResourceClaim or template (``data``, of ``kind``) is met."""
    at = REQUESTS_AT.get(kind)
    if at is None:
        return []
    out = []
    for i, req in enumerate(_list(_get(data, at))):
        if not isinstance(req, dict):
            continue
        name = _str(req.get("name")) or str(i)
        base: JsonPath = (*at, i)
        if isinstance(req.get("exactly"), dict):
            out.append(_choice(name, req["exactly"], (*base, "exactly")))
        elif "deviceClassName" in req:  # v1beta1
            out.append(_choice(name, req, base))
        for j, sub in enumerate(_list(req.get("firstAvailable"))):
            if isinstance(sub, dict):
                sub_name = f"{name}/{_str(sub.get('name')) or j}"
                out.append(_choice(sub_name, sub, (*base, "firstAvailable", j)))
    return out


def _namespace(data: Any) -> str | None:
    return _str(_get(data, ("metadata", "namespace")))


def _name(data: Any) -> str | None:
    return _str(_get(data, ("metadata", "name")))


@dataclass(frozen=True)
class Named:
    """A claim or template the linted manifests define."""

    name: str
    namespace: str | None
    choices: tuple[Choice, ...]


@dataclass(frozen=True)
class Defined:
    """What the linted manifests define, over every file: DeviceClasses (name -> selectors),
    ResourceClaims and ResourceClaimTemplates, and the devices of ResourceSlices and the
    DeviceTaintRules (:mod:`gpustack.kube.device_taints`)."""

    device_classes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    claims: tuple[Named, ...] = ()
    templates: tuple[Named, ...] = ()
    devices: tuple[SliceDevice, ...] = ()
    taint_rules: tuple[TaintRule, ...] = ()

    def of(self, kind: str) -> tuple[Named, ...]:
        return self.claims if kind == CLAIM else self.templates

    def find(self, kind: str, name: str, namespace: str | None) -> Named | None:
        """The claim or template ``name`` in ``namespace``: a pod uses only claims and
        templates of its own namespace, and an object without one is applied to ``default``
        (what ``kubectl apply`` does without ``-n``)."""
        for one in self.of(kind):
            if one.name == name and in_namespace(one.namespace) == in_namespace(namespace):
                return one
        return None


#: The namespace of an object whose manifest names none.
DEFAULT_NAMESPACE = "default"


def in_namespace(namespace: str | None) -> str:
    """The namespace an object lands in (``default`` when its manifest names none)."""
    return namespace or DEFAULT_NAMESPACE


#: NVIDIA's ComputeDomain controller makes, for each ComputeDomain, a ResourceClaimTemplate named
#: ``spec.channel.resourceClaimTemplate.name`` in the ComputeDomain's namespace that asks for one
#: IMEX channel (dra-driver-nvidia-gpu v0.4.1 cmd/compute-domain-controller/computedomain.go
#: ``resourceClaimTemplateManager.Create(ctx, cd.Namespace, cd.Spec.Channel.ResourceClaimTemplate
#: .Name, cd)``, resourceclaimtemplate.go: ``computeDomainDefaultChannelDeviceClass``).
COMPUTE_DOMAIN = "ComputeDomain"
_CHANNEL_TEMPLATE: JsonPath = ("spec", "channel", "resourceClaimTemplate", "name")


def _channel_template(m: Manifest) -> Named | None:
    api = _str(m.data.get("apiVersion")) or ""
    name = _str(_get(m.data, _CHANNEL_TEMPLATE))
    if m.kind != COMPUTE_DOMAIN or not api.startswith(f"{upstream.COMPUTE_DOMAIN_API_GROUP}/"):
        return None
    if name is None:
        return None
    channel = upstream.COMPUTE_DOMAIN_DEVICE_CLASSES[1]
    return Named(name, _namespace(m.data), (Choice("channel", channel, (), ()),))


def index(objects: Iterable[Manifest]) -> Defined:
    """Every DeviceClass, ResourceClaim and ResourceClaimTemplate among ``objects`` (with the
    templates NVIDIA's ComputeDomain controller makes for their ComputeDomains), and the devices
    and DeviceTaintRules of device taints."""
    classes: dict[str, tuple[str, ...]] = {}
    found: dict[str, list[Named]] = {CLAIM: [], TEMPLATE: []}
    devices: list[SliceDevice] = []
    rules: list[TaintRule] = []
    for m in objects:
        name = _name(m.data)
        if m.kind == RESOURCE_SLICE:
            devices += slice_devices(m.data)
        elif m.kind == TAINT_RULE and (rule := taint_rule(m.data)) is not None:
            rules.append(rule)
        if name is None:
            continue
        if m.kind == DEVICE_CLASS:
            classes[name] = tuple(e for e, _ in selectors(_get(m.data, ("spec",)), ()))
        elif m.kind in found:
            found[m.kind].append(Named(name, _namespace(m.data), tuple(choices(m.data, m.kind))))
        elif (made := _channel_template(m)) is not None:
            found[TEMPLATE].append(made)
    return Defined(
        classes, tuple(found[CLAIM]), tuple(found[TEMPLATE]), tuple(devices), tuple(rules)
    )


# --- the pod side -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodClaim:
    """One entry of a pod's ``spec.resourceClaims``: ``kind`` is what it references
    (``ResourceClaim`` or ``ResourceClaimTemplate``), ``target`` its name."""

    name: str | None
    kind: str | None
    target: str | None
    path: JsonPath


def pod_claims(spec: Mapping[str, Any], at: JsonPath) -> list[PodClaim]:
    """The ``resourceClaims`` of a pod spec (at ``at`` in its object)."""
    out = []
    for i, entry in enumerate(_list(spec.get("resourceClaims"))):
        if not isinstance(entry, dict):
            continue
        path: JsonPath = (*at, "resourceClaims", i)
        kind = target = None
        for key, what in (("resourceClaimTemplateName", TEMPLATE), ("resourceClaimName", CLAIM)):
            if isinstance(entry.get(key), str):
                kind, target, path = what, entry[key], (*path, key)
                break
        out.append(PodClaim(_str(entry.get("name")), kind, target, path))
    return out


# --- what NVIDIA's driver publishes -------------------------------------------------------------


@dataclass(frozen=True)
class DeviceKind:
    """The devices a DeviceClass selects: their driver and, where known, their ``type``."""

    driver: str
    type: str | None = None


def kind_of(selector_exprs: Iterable[str]) -> DeviceKind | None:
    """The driver and device type a DeviceClass's selectors demand; ``None`` when they do not
    name a driver."""
    exprs = list(selector_exprs)
    drivers = {d for e in exprs if (d := cel.driver(e)) is not None}
    if len(drivers) != 1:
        return None
    (drv,) = drivers
    types = {t for e in exprs if (t := cel.attribute_equals(e, drv, "type")) is not None}
    return DeviceKind(drv, types.pop() if len(types) == 1 else None)


def class_kind(name: str, defined: Defined) -> DeviceKind | None:
    """What the DeviceClass ``name`` selects: its definition in the linted manifests, else
    NVIDIA's chart (:data:`~gpustack.dra_upstream.DEVICE_CLASSES`)."""
    if name in defined.device_classes:
        return kind_of(defined.device_classes[name])
    for c in upstream.DEVICE_CLASSES:
        if c.name == name:
            return kind_of([c.cel])
    return None


@dataclass(frozen=True)
class Published:
    """What one kind of device carries: attributes (fully qualified name -> value kind) and
    capacity names (fully qualified), plus capacities numbered by NVIDIA (``memorySlice<i>``)."""

    what: str
    attributes: Mapping[str, str]
    capacities: frozenset[str]
    numbered: tuple[str, ...] = ()

    def has_capacity(self, qualified: str) -> bool:
        if qualified in self.capacities:
            return True
        return any(re.fullmatch(p, qualified) for p in self.numbered)


def _qualified(driver: str, names: Iterable[str]) -> Iterator[str]:
    for n in names:
        yield n if "/" in n else f"{driver}/{n}"


def _published(
    what: str,
    driver: str,
    attributes: Iterable[upstream.Attribute],
    capacities: Iterable[str] = (),
    numbered: tuple[str, ...] = (),
) -> Published:
    attrs = {q: a.kind for a in attributes for q in _qualified(driver, [a.name])}
    return Published(what, attrs, frozenset(_qualified(driver, capacities)), numbered)


_GPU = upstream.GPU_DRIVER
_MEMORY_SLICE = re.escape(f"{_GPU}/") + upstream.MIG_MEMORY_SLICE_CAPACITY.replace(
    "{index}", r"\d+"
)
#: Attributes the pinned release (v0.5.0, ``main``) may add are known too: a selector on them
#: is no finding (:data:`~gpustack.dra_upstream.ADDED_ON_MAIN`).
_GPU_DEVICES = _published(
    "GPU",
    _GPU,
    (*upstream.GPU_ATTRIBUTES, *upstream.ADDED_ON_MAIN),
    upstream.GPU_CAPACITIES,
)
_MIG_DEVICES = _published(
    "MIG device",
    _GPU,
    (*upstream.MIG_ATTRIBUTES, *upstream.ADDED_ON_MAIN),
    upstream.MIG_CAPACITIES,
    (_MEMORY_SLICE,),
)
_CD_DEVICES = _published(
    "ComputeDomain device", upstream.COMPUTE_DOMAIN_DRIVER, upstream.COMPUTE_DOMAIN_ATTRIBUTES
)


def published(kind: DeviceKind) -> Published | None:
    """What NVIDIA's driver publishes for ``kind``; ``None`` when it is not NVIDIA's or its
    table is not known here (VFIO devices)."""
    if kind.driver == upstream.COMPUTE_DOMAIN_DRIVER:
        return _CD_DEVICES
    if kind.driver != _GPU:
        return None
    if kind.type == upstream.TYPE_GPU:
        return _GPU_DEVICES
    if kind.type == upstream.TYPE_MIG:
        return _MIG_DEVICES
    if kind.type is None:  # GPUs or MIG devices: what either publishes
        return Published(
            "GPU or MIG device",
            {**_GPU_DEVICES.attributes, **_MIG_DEVICES.attributes},
            _GPU_DEVICES.capacities | _MIG_DEVICES.capacities,
            _MIG_DEVICES.numbered,
        )
    return None
