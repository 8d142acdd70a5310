"""``gpustack doctor`` on device taints (``devices-tainted``, ``device-taint-rule``).

The states are :mod:`tests.doctor.taint_states` (the healthy DRA cluster with taints added on a
ResourceSlice's devices or by a DeviceTaintRule); each finding must name the node or rule, the
taints with their effect, and what the effect does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpustack.doctor.report import diagnose
from gpustack.kube import state
from gpustack.report import doctor_summary
from tests.doctor import dra_states, taint_states
from tests.doctor.dra_states import DRA_FIXTURES
from tests.doctor.test_doctor import L4, MIG, profile

CHECKS = ("devices-tainted", "device-taint-rule", "claim-unallocated")
#: scenario -> (subject, check, what the message says) of each finding.
FOUND: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "taint-gpu-lost": [
        (
            "node/gpu-1",
            "devices-tainted",
            (
                "GPU lost/XID on node gpu-1",
                "gpu-0: gpu.nvidia.com/gpu-lost:None; gpu-1: gpu.nvidia.com/gpu-lost:None",
                "the scheduler still gives these devices to claims",
            ),
        )
    ],
    "taint-xid-evicts": [
        (
            "node/gpu-2",
            "devices-tainted",
            (
                "GPU lost/XID on node gpu-2",
                "gpu.nvidia.com/xid=79:NoExecute",
                "get none of them, and the pods using a NoExecute-tainted device are evicted",
            ),
        )
    ],
    "taint-one-xid": [],  # gpu-1 of gpu-2 is untainted
    "taint-drain-rule": [
        (
            "devicetaintrule/drain-gpu-2",
            "device-taint-rule",
            (
                "taints every device of driver gpu.nvidia.com, pool gpu-2 with "
                "example.com/maintenance=drain:NoSchedule",
                "2 published device(s): gpu-2/gpu-0; gpu-2/gpu-1",
            ),
        )
    ],
    "taint-informational-rule": [],  # effect None
    "taint-claim-kept-out": [
        (
            "devicetaintrule/drain-all-gpus",
            "device-taint-rule",
            ("taints every device of driver gpu.nvidia.com with example.com/maintenance",),
        ),
        (
            "pod/ml/infer",
            "claim-unallocated",
            (
                "claim infer-gpu-x7k2q request gpu: every one of the 4 matching devices carries a "
                "taint the request does not tolerate (gpu-1/gpu-0: example.com/maintenance=drain:"
                "NoSchedule (DeviceTaintRule drain-all-gpus);",
                "; 1 more)",
            ),
        ),
    ],
}


def test_every_scenario_is_checked_and_its_fixture_is_current() -> None:
    assert sorted(FOUND) == sorted(taint_states.SCENARIOS)
    assert dra_states.stale(taint_states.SCENARIOS) == [], "run python -m tests.doctor.taint_states"


@pytest.mark.parametrize("scenario", sorted(FOUND))
@pytest.mark.parametrize("path", [L4, MIG], ids=["l4", "mig"])
def test_each_taint_is_named(scenario: str, path: Path) -> None:
    cluster = state.load((DRA_FIXTURES / f"{scenario}.json").read_text(), scenario)
    found = [d for d in diagnose(cluster, profile(path)) if d.check in CHECKS]
    assert [(d.subject, d.check) for d in found] == [(s, c) for s, c, _ in FOUND[scenario]]
    for diagnosis, (_, _, says) in zip(found, FOUND[scenario], strict=True):
        for words in says:
            assert words in diagnosis.message, diagnosis.message
        assert diagnosis.hint


def test_a_rule_is_counted_apart_from_nodes_pods_and_controllers() -> None:
    cluster = state.load(taint_states.text("taint-drain-rule"))
    assert doctor_summary(diagnose(cluster, profile(L4)), cluster) == (
        "1 finding: 0 nodes, 0 Pending GPU pods, 1 DeviceTaintRule"
    )


@pytest.mark.parametrize(
    ("selector", "says"),
    [
        (None, "taints no device (it has no deviceSelector)"),
        ({}, "every device of every driver and pool"),
        ({"device": "gpu-1"}, "2 published device(s): gpu-1/gpu-1; gpu-2/gpu-1"),
        ({"driver": "gpu.nvidia.com", "pool": "gpu-3"}, "(none)"),
        ({"driver": "compute-domain.nvidia.com"}, "(none)"),
    ],
)
def test_a_rule_names_what_its_selector_matches(selector: dict[str, str] | None, says: str) -> None:
    doc = taint_states.build("taint-drain-rule")
    rule = next(i for i in doc["items"] if i["kind"] == "DeviceTaintRule")
    rule["spec"].pop("deviceSelector")
    if selector is not None:
        rule["spec"]["deviceSelector"] = selector
    (found,) = diagnose(state.load(json.dumps(doc)), profile(L4))
    assert says in found.message, found.message


def test_a_slice_of_the_older_api_is_read_too() -> None:
    """``v1beta1`` kept a device's taints under ``basic``."""
    doc = taint_states.build("taint-xid-evicts")
    for item in doc["items"]:
        if item["kind"] == "ResourceSlice" and item["spec"]["nodeName"] == "gpu-2":
            item["apiVersion"] = "resource.k8s.io/v1beta1"
            for device in item["spec"]["devices"]:
                device["basic"] = {"taints": device.pop("taints")}
    assert [d.subject for d in diagnose(state.load(json.dumps(doc)), profile(L4))] == ["node/gpu-2"]


@pytest.mark.parametrize(
    ("toleration", "kept_out"),
    [
        (None, True),
        ({"key": "example.com/maintenance", "operator": "Exists"}, False),
        ({"key": "example.com/maintenance", "value": "drain", "effect": "NoExecute"}, True),
    ],
)
def test_a_tolerating_request_is_not_kept_out(
    toleration: dict[str, str] | None, kept_out: bool
) -> None:
    doc = taint_states.build("taint-claim-kept-out")
    for item in doc["items"]:
        if item["kind"] == "ResourceClaim" and toleration is not None:
            item["spec"]["devices"]["requests"][0]["exactly"]["tolerations"] = [toleration]
    found = [d.message for d in diagnose(state.load(json.dumps(doc)), profile(L4))]
    assert any("carries a taint the request does not tolerate" in m for m in found) is kept_out
