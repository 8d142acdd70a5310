"""What the API server checks on the objects gpustack writes, written here independently of
gpustack's own patterns (Kubernetes' apimachinery validation rules, re-stated), so the property
tests compare two implementations rather than one with itself."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")
#: A docker reference: repository, optional tag, optional digest (no whitespace anywhere).
_IMAGE = re.compile(
    r"[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*"
    r"(:[\w][\w.-]{0,127})?(@sha256:[a-f0-9]{64})?"
)


def qualified_name(key: str) -> bool:
    """apimachinery ``IsQualifiedName``: ``[prefix/]name``."""
    prefix, slash, name = key.rpartition("/")
    if slash and not (0 < len(prefix) <= 253 and _SUBDOMAIN.fullmatch(prefix)):
        return False
    return 0 < len(name) <= 63 and _NAME.fullmatch(name) is not None


def label_value(value: str) -> bool:
    return len(value) <= 63 and _LABEL_VALUE.fullmatch(value) is not None


def subdomain(name: str) -> bool:
    return len(name) <= 253 and _SUBDOMAIN.fullmatch(name) is not None


def _labels(where: str, labels: Any) -> Iterator[str]:
    for key, value in (labels or {}).items():
        if not isinstance(key, str) or not qualified_name(key):
            yield f"{where}: label key {key!r}"
        if not isinstance(value, str) or not label_value(value):
            yield f"{where}: label value {value!r}"


def _pod(where: str, pod: Mapping[str, Any]) -> Iterator[str]:
    yield from _labels(f"{where} nodeSelector", pod.get("nodeSelector"))
    priority = pod.get("priorityClassName")
    if priority is not None and not subdomain(priority):
        yield f"{where}: priorityClassName {priority!r}"
    for t in pod.get("tolerations") or []:
        key, op, value = t.get("key", ""), t.get("operator", "Equal"), t.get("value", "")
        if key and not qualified_name(key):
            yield f"{where}: toleration key {key!r}"
        if not key and op != "Exists":
            yield f"{where}: toleration without key needs Exists"
        if op == "Exists" and value:
            yield f"{where}: toleration Exists with value {value!r}"
        if op == "Equal" and not label_value(value):
            yield f"{where}: toleration value {value!r}"
        if "tolerationSeconds" in t and t.get("effect") != "NoExecute":
            yield f"{where}: tolerationSeconds without NoExecute"
    for c in [*pod.get("initContainers", []), *pod.get("containers", [])]:
        if not _IMAGE.fullmatch(c.get("image", "")):
            yield f"{where}: image {c.get('image')!r}"
        names = [e["name"] for e in c.get("env") or []]
        if len(names) != len(set(names)):
            yield f"{where}: duplicate env in {c.get('name')}"


def problems(manifest: Mapping[str, Any]) -> list[str]:
    """What the API server would refuse in ``manifest`` (beyond the OpenAPI schema)."""
    meta = manifest.get("metadata", {})
    where = f"{manifest.get('kind')}/{meta.get('name')}"
    out = [] if subdomain(str(meta.get("name", ""))) else [f"{where}: metadata.name"]
    out += _labels(where, meta.get("labels"))
    template = manifest.get("spec", {}).get("template")
    if isinstance(template, Mapping):
        out += _labels(f"{where} template", template.get("metadata", {}).get("labels"))
        out += _pod(where, template.get("spec", {}))
    return out


def keys(value: Any) -> Iterator[Any]:
    """Every map key of a document, at any depth (all must be strings)."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield k
            yield from keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from keys(v)
