"""ConfigMaps and Secrets whose content changes, and the workloads that read them.

A pod reads a mounted ConfigMap when it starts (an environment variable) or through the kubelet's
periodic sync (a volume, which a process may or may not read again): whether it takes the new
content at once is whether its workload rolls, which gpustack arranges with a checksum
annotation on the template. So each changed config is listed with the workloads that mount it
and whether their template changes in the same plan; one that does not roll keeps its running
processes on the old content. A mig-parted config (the data key holding ``mig-configs``) also
names the MIG layouts that change: nodes labelled with one are repartitioned.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import yaml

from gpustack.plan.model import ConfigChange, Ref
from gpustack.plan.objects import Obj
from gpustack.plan.workloads import template

CONFIG_KINDS = ("ConfigMap", "Secret")
_DATA = ("data", "binaryData", "stringData")


def content(obj: Obj) -> dict[str, Any]:
    """Every key of the object's data sections."""
    found: dict[str, Any] = {}
    for section in _DATA:
        found.update(obj.get(section) or {})
    return found


def changed_keys(old: Obj, new: Obj) -> tuple[str, ...]:
    was, now = content(old), content(new)
    return tuple(sorted(k for k in was.keys() | now.keys() if was.get(k) != now.get(k)))


def mounted(workload: Obj) -> Iterator[tuple[str, str]]:
    """``(kind, name)`` of each ConfigMap and Secret its pods read: volumes (projected ones
    too), ``envFrom`` and ``valueFrom`` references."""
    spec = (template(workload) or {}).get("spec") or {}
    for volume in spec.get("volumes") or ():
        yield from _volume(volume)
        for source in (volume.get("projected") or {}).get("sources") or ():
            yield from _volume(source)
    for c in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]:
        for ref in c.get("envFrom") or ():
            if "configMapRef" in ref:
                yield "ConfigMap", str(ref["configMapRef"].get("name"))
            if "secretRef" in ref:
                yield "Secret", str(ref["secretRef"].get("name"))
        for env in c.get("env") or ():
            source = env.get("valueFrom") or {}
            if "configMapKeyRef" in source:
                yield "ConfigMap", str(source["configMapKeyRef"].get("name"))
            if "secretKeyRef" in source:
                yield "Secret", str(source["secretKeyRef"].get("name"))


def _volume(volume: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    if isinstance(volume.get("configMap"), dict):
        yield "ConfigMap", str(volume["configMap"].get("name"))
    if isinstance(volume.get("secret"), dict):
        secret = volume["secret"]
        yield "Secret", str(secret.get("secretName", secret.get("name")))


def config_change(
    ref: Ref, old: Obj, new: Obj, head: Mapping[Ref, Obj], rolled: set[Ref]
) -> ConfigChange | None:
    """The change of one ConfigMap or Secret (``None`` when its content is the same), with the
    workloads of its namespace in ``head`` that mount it and whether each is in ``rolled``."""
    keys = changed_keys(old, new)
    if ref.kind not in CONFIG_KINDS or not keys:
        return None
    users = sorted(
        r
        for r, obj in head.items()
        if r.namespace == ref.namespace and (ref.kind, ref.name) in set(mounted(obj))
    )
    return ConfigChange(ref, keys, tuple((r, r in rolled) for r in users))


def _mig_layouts(obj: Obj) -> dict[str, Any]:
    for text in content(obj).values():
        try:
            parsed = yaml.safe_load(text) if isinstance(text, str) else None
        except yaml.YAMLError:
            continue
        configs = parsed.get("mig-configs") if isinstance(parsed, dict) else None
        if isinstance(configs, dict):
            return configs
    return {}


def mig_changes(old: Obj, new: Obj) -> tuple[str, ...]:
    """The mig-parted configs (by name) whose layout changed or that are new; none when the
    object holds no ``mig-configs``."""
    if old.get("kind") != "ConfigMap":
        return ()
    was, now = _mig_layouts(old), _mig_layouts(new)
    changed = sorted(n for n in now.keys() & was.keys() if now[n] != was[n])
    return tuple(changed + sorted(now.keys() - was.keys()))
