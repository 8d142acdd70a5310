"""How a workload's pods take a change: read from its pod template and update strategy.

A controller replaces a pod when its template changes, whatever changed in it (a label as much
as an image): so a rollout is a template that differs, and how it rolls is the strategy written
on the object, with Kubernetes' defaults where none is (a DaemonSet or StatefulSet one pod at a
time, a Deployment 25 % unavailable and 25 % surge). What the replacement does to the node comes
from the component label gpustack writes on the object:

* the driver: an ``OnDelete`` DaemonSet whose new pod's driver manager, when the driver it
  installs differs (its images or :data:`~gpustack.kube.labels.DRIVER_DIGEST_ENV`), evicts the
  node's GPU pods and reinstalls; the same driver restarts without evicting anything;
* the container toolkit: its restart runs the installer's cleanup and restarts the runtime;
* a device plugin or DRA plugin: its node offers no GPUs to new pods while its pod restarts.

A new workload is reported as it starts: no strategy applies, every pod starts at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpustack.kube.labels import (
    DEVICE_PLUGIN_COMPONENT,
    DRA_DRIVER_COMPONENT,
    DRIVER_COMPONENT,
    DRIVER_DIGEST_ENV,
    TOOLKIT_COMPONENT,
    VERSION_LABEL,
)
from gpustack.kube.pods import TEMPLATE_PATHS
from gpustack.plan.model import (
    EVICTS,
    GPU_DIP,
    PLACEMENT,
    RUNTIME_RESTART,
    WAITS_FOR_DELETE,
    Ref,
    Rollout,
)
from gpustack.plan.objects import Obj, component, labels

#: Kinds whose pods a controller keeps running (a Job's template is immutable: no rollout).
WORKLOADS = ("DaemonSet", "Deployment", "StatefulSet")
#: kind -> (the key of its strategy, Kubernetes' default maxUnavailable and maxSurge)
_STRATEGY: Mapping[str, tuple[str, str, str]] = {
    "DaemonSet": ("updateStrategy", "1", "0"),
    "StatefulSet": ("updateStrategy", "1", "0"),
    "Deployment": ("strategy", "25%", "25%"),
}
_PLUGINS = (DEVICE_PLUGIN_COMPONENT, DRA_DRIVER_COMPONENT)
#: The pod-spec keys that decide which nodes a DaemonSet runs on.
_PLACEMENT_KEYS = frozenset({"nodeSelector", "affinity", "tolerations"})


def _get(obj: Any, *path: str) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def template(obj: Obj) -> Any:
    """The pod template of a workload (``None`` for any other kind)."""
    path = TEMPLATE_PATHS.get(str(obj.get("kind")))
    return _get(obj, *map(str, path)) if path and obj.get("kind") in WORKLOADS else None


def strategy(obj: Obj) -> tuple[str, str, str]:
    """``(type, maxUnavailable, maxSurge)`` as the controller applies them."""
    key, unavailable, surge = _STRATEGY[str(obj.get("kind"))]
    written = _get(obj, "spec", key) or {}
    kind = str(written.get("type") or "RollingUpdate")
    rolling = written.get("rollingUpdate") or {}
    if kind != "RollingUpdate":
        return kind, "", ""
    return (
        kind,
        str(rolling.get("maxUnavailable", unavailable)),
        str(rolling.get("maxSurge", surge)),
    )


def nodes(obj: Obj) -> str:
    """Which nodes run it: node selector and required node affinity (the deploy labels a
    pause flips, whose values include ``false``, left out: every pool has them)."""
    spec = _get(template(obj), "spec") or {}
    parts = [f"{k}={v}" for k, v in sorted((spec.get("nodeSelector") or {}).items())]
    terms = _get(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
    shown = []
    for term in (terms or {}).get("nodeSelectorTerms") or ():
        exprs = [_expression(e) for e in term.get("matchExpressions") or ()]
        if kept := [e for e in exprs if e]:
            shown.append(", ".join(kept))
    if shown:
        parts.append(" or ".join(f"({s})" if len(shown) > 1 else s for s in shown))
    return "; ".join(parts) or "all nodes"


def _expression(expr: Mapping[str, Any]) -> str:
    key, op, values = expr.get("key"), expr.get("operator"), list(expr.get("values") or ())
    if op == "NotIn" and "false" in values:
        return ""
    if op in ("In", "NotIn"):
        return f"{key} {op.lower()} ({','.join(map(str, values))})"
    return f"!{key}" if op == "DoesNotExist" else f"{key}" if op == "Exists" else ""


def changed(old: Any, new: Any) -> tuple[str, ...]:
    """What differs between two pod templates: ``labels``/``annotations`` of the template,
    ``image``/``env``/``command`` and other container fields, or the pod spec's own keys."""
    found: set[str] = set()
    for part in ("labels", "annotations"):
        if _get(old, "metadata", part) != _get(new, "metadata", part):
            found.add(part)
    spec, old_spec = _get(new, "spec") or {}, _get(old, "spec") or {}
    for key in sorted(spec.keys() | old_spec.keys()):
        if spec.get(key) == old_spec.get(key):
            continue
        if key in ("containers", "initContainers"):
            found.update(_container_fields(old_spec.get(key), spec.get(key)))
        else:
            found.add(key)
    return tuple(sorted(found))


def _container_fields(old: Any, new: Any) -> set[str]:
    olds = {c.get("name"): c for c in old or () if isinstance(c, dict)}
    news = {c.get("name"): c for c in new or () if isinstance(c, dict)}
    if olds.keys() != news.keys():
        return {"containers"}
    return {
        key
        for name, c in news.items()
        for key in c.keys() | olds[name].keys()
        if c.get(key) != olds[name].get(key)
    }


def driver_identity(obj: Obj) -> list[str]:
    """The images of the pod template and its driver config digests: what decides the driver
    a node runs, so what makes the driver manager reinstall."""
    spec = _get(template(obj), "spec") or {}
    found = []
    for c in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]:
        found.append(str(c.get("image")))
        found += [
            str(e.get("value")) for e in c.get("env") or () if e.get("name") == DRIVER_DIGEST_ENV
        ]
    return found


def selector(obj: Obj) -> str:
    """The workload's ``matchLabels`` as a ``-l`` argument."""
    match = _get(obj, "spec", "selector", "matchLabels") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(match.items()))


def rollout(ref: Ref, old: Obj, new: Obj) -> Rollout | None:
    """The rollout a changed workload makes, ``None`` when its pod template is the same."""
    if ref.kind not in WORKLOADS or template(old) == template(new):
        return None
    kind, unavailable, surge = strategy(new)
    comp = component(new)
    effects = [WAITS_FOR_DELETE] if kind == "OnDelete" else []
    if comp == DRIVER_COMPONENT and driver_identity(old) != driver_identity(new):
        effects.append(EVICTS)
    if comp == TOOLKIT_COMPONENT:
        effects.append(RUNTIME_RESTART)
    if comp in _PLUGINS:
        effects.append(GPU_DIP)
    what = changed(template(old), template(new))
    if ref.kind == "DaemonSet" and set(what) & _PLACEMENT_KEYS:
        effects.append(PLACEMENT)
    return Rollout(
        ref,
        comp,
        kind,
        unavailable,
        surge,
        nodes(new),
        what,
        tuple(effects),
        selector(new),
        (str(labels(old).get(VERSION_LABEL, "")), str(labels(new).get(VERSION_LABEL, ""))),
    )


#: The strategy of a workload that is new: no update strategy applies to a first rollout, a
#: DaemonSet's pods start on every node it selects at once.
CREATED = "Create"


def started(ref: Ref, new: Obj) -> Rollout | None:
    """A new workload's pods starting (``None`` for any other kind): a new toolkit restarts the
    runtime of every node it selects, at once."""
    if ref.kind not in WORKLOADS:
        return None
    comp = component(new)
    effects = (RUNTIME_RESTART,) if comp == TOOLKIT_COMPONENT else ()
    version = ("", str(labels(new).get(VERSION_LABEL, "")))
    return Rollout(
        ref, comp, CREATED, "", "", nodes(new), ("new",), effects, selector(new), version
    )
