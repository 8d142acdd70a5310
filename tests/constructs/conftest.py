"""Shared helpers for the construct tests.

cdk8s starts a Node.js process on first import, so synthesis results are cached for the session:
tests describe a profile as a dict, and ``synth`` returns the (cached) objects for it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from gpustack.checker import check_paths
from gpustack.constructs import SynthObject, synthesize
from gpustack.profile.model import Profile

Synth = Callable[[Mapping[str, Any]], list[SynthObject]]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def examples() -> list[Profile]:
    """Every example profile in profiles/, validated."""
    result = check_paths(sorted((REPO / "profiles").glob("*.yaml")))
    assert result.ok
    return [p.profile for p in result.profiles]


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Deep merge of profile dicts (mappings merge, anything else replaces)."""
    out = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def profile(**sections: Any) -> dict[str, Any]:
    """A minimal profile dict named ``test`` with ``sections`` merged in."""
    return merge({"metadata": {"name": "test"}}, sections)


@pytest.fixture(scope="session")
def synth() -> Synth:
    cache: dict[str, list[SynthObject]] = {}

    def run(data: Mapping[str, Any]) -> list[SynthObject]:
        key = json.dumps(data, sort_keys=True)
        if key not in cache:
            cache[key] = synthesize(Profile.from_dict(data))
        return cache[key]

    return run


def find(objects: list[SynthObject], kind: str, name: str) -> dict[str, Any]:
    matches = [o.manifest for o in objects if o.kind == kind and o.name == name]
    assert len(matches) == 1, f"expected one {kind}/{name}, got {[o.name for o in objects]}"
    return matches[0]


def kinds(objects: list[SynthObject], component: str) -> list[tuple[str, str]]:
    return [(o.kind, o.name) for o in objects if o.component == component]


def pod_spec(workload: Mapping[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = workload["spec"]["template"]["spec"]
    return spec


def container(workload: Mapping[str, Any], name: str, *, init: bool = False) -> dict[str, Any]:
    key = "initContainers" if init else "containers"
    found: list[dict[str, Any]] = [c for c in pod_spec(workload).get(key, []) if c["name"] == name]
    assert len(found) == 1, f"no {key} {name!r}"
    return found[0]


def env(c: Mapping[str, Any]) -> dict[str, Any]:
    """Container env as name -> value (or the valueFrom mapping)."""
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in c.get("env", [])}


def mounts(c: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["mountPath"]: m for m in c.get("volumeMounts", [])}


def volumes(workload: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in pod_spec(workload).get("volumes", [])}


def host_paths(workload: Mapping[str, Any]) -> dict[str, str]:
    """Volume name -> host path, for hostPath volumes."""
    return {n: v["hostPath"]["path"] for n, v in volumes(workload).items() if "hostPath" in v}
