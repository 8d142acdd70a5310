"""What ``gpustack validate`` accepts, synthesis can build: the device plugin config included.

The plugin parses its ConfigMap with its own, stricter checks (gpustack/plugin/config/).
Every schema bound (enum value, example, default, minimum, maximum, and values far outside) is put
into one field of a few valid profiles at a time; whenever the profile still validates, the
plugin config built from it must parse too. A bound the schema forgets shows up here, not as a
synth error after `validate` said the profile was fine.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from gpustack.constructs.plugin_config import build_config
from gpustack.profile.document import JsonPath
from gpustack.profile.explain import schema_findings
from gpustack.profile.model import Profile
from gpustack.profile.rules import rule_findings
from gpustack.profile.schema import schema

HEAD = {"apiVersion": "gpustack.dev/v1alpha1", "kind": "Profile", "metadata": {"name": "f"}}
SHARED = {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}}
BASES: dict[str, dict[str, Any]] = {
    "gpustack-simulated-time-slicing": {
        **HEAD,
        "gpus": {"product": "L4"},
        "devicePlugin": {"backend": "simulated", "sharing": SHARED},
        "workloads": {"examples": [{"name": "e"}]},
    },
    "nvidia-mig-mixed": {
        **HEAD,
        "gpus": {"product": "A100-SXM4-80GB", "mig": {"1g.10gb": 2}},
        "devicePlugin": {"implementation": "nvidia", "migStrategy": "mixed"},
        "workloads": {"examples": [{"name": "e", "resourceName": "nvidia.com/mig-1g.10gb"}]},
    },
}


def _resolve(sub: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = sub.get("$ref")
    return schema()["$defs"][ref.rsplit("/", 1)[-1]] if ref else sub


def _values(sub: Mapping[str, Any]) -> list[Any]:
    sub = _resolve(sub)
    out = [*sub.get("enum", []), *sub.get("examples", [])]
    if "default" in sub:
        out.append(sub["default"])
    if sub.get("type") == "integer":
        out += [sub[k] for k in ("minimum", "maximum") if k in sub] + [10**6, 2**31]
    if sub.get("type") == "string" and "enum" not in sub:
        out += ["x", "a" * 300, "nvidia.com/" + "a" * 52]
    if sub.get("type") == "array" and isinstance(sub.get("items"), Mapping):
        out += [[v] for v in _values(sub["items"])] + [[]]
    return out


def _fields(sub: Mapping[str, Any], path: JsonPath = ()) -> Iterator[tuple[JsonPath, Any]]:
    sub = _resolve(sub)
    if path:
        yield path, sub
    for name, child in sub.get("properties", {}).items():
        yield from _fields(child, (*path, name))
    items = sub.get("items")
    if isinstance(items, Mapping) and "properties" in _resolve(items):
        yield from _fields(items, (*path, 0))


def _with(base: dict[str, Any], path: JsonPath, value: Any) -> dict[str, Any] | None:
    data = copy.deepcopy(base)
    cur: Any = data
    for part in path[:-1]:
        if isinstance(part, int):
            if not isinstance(cur, list) or len(cur) <= part:
                return None
            cur = cur[part]
        else:
            cur = cur.setdefault(part, {})
    cur[path[-1]] = value
    return data


@pytest.mark.parametrize("base", list(BASES), ids=str)
def test_every_valid_variant_builds_a_plugin_config(base: str) -> None:
    built = 0
    refused: list[str] = []
    for path, sub in _fields(schema()):
        for value in _values(sub):
            data = _with(BASES[base], path, value)
            if data is None or schema_findings(data):
                continue
            profile = Profile.from_dict(data)
            if rule_findings(profile):
                continue
            try:
                build_config(profile)
            except ValueError as exc:
                refused.append(f"{path} = {value!r:.40}: {exc}")
            built += 1
    assert built > 150  # the walk really varied the profile
    assert refused == []
