"""Device tolerations match device taints as the API documents ``DeviceToleration`` (k8s.io/api
``resource/v1/types.go``, vendored in openshift/microshift): an empty key with ``Exists`` matches
every taint, ``operator`` defaults to ``Equal`` (value compared), an empty effect matches every
effect; only ``NoSchedule`` and ``NoExecute`` keep a device from a claim."""

from __future__ import annotations

from typing import Any

import pytest

from gpustack.kube.device_taints import DeviceTaint, taint_rule, tolerates, untolerated

XID = DeviceTaint("gpu.nvidia.com/xid", "79", "NoExecute")


@pytest.mark.parametrize(
    ("toleration", "matches"),
    [
        ({"operator": "Exists"}, True),
        ({"key": "", "operator": "Exists", "effect": "NoExecute"}, True),
        ({}, False),  # an empty key needs Exists
        ({"key": "gpu.nvidia.com/xid", "operator": "Exists"}, True),
        ({"key": "gpu.nvidia.com/xid", "value": "79"}, True),  # Equal by default
        ({"key": "gpu.nvidia.com/xid", "value": "48"}, False),
        ({"key": "gpu.nvidia.com/xid"}, False),  # Equal to an empty value
        ({"key": "gpu.nvidia.com/xid", "operator": "Exists", "effect": "NoSchedule"}, False),
        ({"key": "gpu.nvidia.com", "operator": "Exists"}, False),  # keys match exactly
        ("Exists", False),  # the wrong type is no toleration
    ],
)
def test_a_toleration_matches_as_the_api_says(toleration: Any, matches: bool) -> None:
    assert tolerates([toleration], XID) is matches


@pytest.mark.parametrize(
    ("effect", "blocks"),
    [("NoSchedule", True), ("NoExecute", True), ("None", False), ("PreferNoSchedule", False)],
)
def test_only_the_blocking_effects_count(effect: str, blocks: bool) -> None:
    taint = DeviceTaint("k", "", effect)
    assert untolerated([taint], []) == ([taint] if blocks else [])


@pytest.mark.parametrize(
    ("selector", "device", "matches"),
    [
        (None, ("gpu.nvidia.com", "gpu-1", "gpu-0"), False),  # no selector: no device
        ({}, ("gpu.nvidia.com", "gpu-1", "gpu-0"), True),  # empty selector: every device
        ({"driver": "gpu.nvidia.com"}, ("gpu.nvidia.com", "gpu-1", "gpu-0"), True),
        ({"driver": "gpu.nvidia.com", "pool": "gpu-2"}, ("gpu.nvidia.com", "gpu-1", "x"), False),
        ({"pool": "gpu-1", "device": "gpu-0"}, ("other.example.com", "gpu-1", "gpu-0"), True),
    ],
)
def test_a_rule_selects_by_driver_pool_and_device(
    selector: dict[str, str] | None, device: tuple[str, str, str], matches: bool
) -> None:
    spec: dict[str, Any] = {"taint": {"key": "k", "effect": "NoSchedule"}}
    if selector is not None:
        spec["deviceSelector"] = selector
    rule = taint_rule({"metadata": {"name": "r"}, "spec": spec})
    assert rule is not None and rule.matches(*device) is matches


def test_a_rule_without_a_taint_key_is_none() -> None:
    assert taint_rule({"spec": {"taint": {"effect": "NoSchedule"}, "deviceSelector": {}}}) is None
