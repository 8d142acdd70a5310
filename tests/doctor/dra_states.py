"""Cluster states with Dynamic Resource Allocation for the doctor's ``claim-unallocated`` check.

Each scenario is ``healthy.json`` (two nodes of 2 x L4) plus what NVIDIA's DRA driver and a
workload put in the API: the DeviceClasses of NVIDIA's chart (:mod:`gpustack.dra_upstream`), one
ResourceSlice per GPU node in the shape NVIDIA's kubelet plugin publishes (built by gpustack's
simulated driver, :mod:`gpustack.plugin.dra.slices`), ResourceClaimTemplates and claims as NVIDIA
documents them, the pod, and the scheduler's and the resourceclaim controller's events (their
words: k8s.io/kubernetes ``pkg/scheduler/framework/plugins/dynamicresources``,
``pkg/controller/resourceclaim``), with one thing broken per scenario. The fixtures
``tests/doctor/fixtures/dra/claim-*.json`` are these states (the recorded ``healthy.json`` with the
DRA objects of each scenario), written by::

    .venv/bin/python -m tests.doctor.dra_states

and a test keeps them equal to what this module builds.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpustack import dra_upstream as upstream
from gpustack.plugin.backends.simulated import SimulatedBackend
from gpustack.plugin.config import PluginConfig
from gpustack.plugin.dra import slices

FIXTURES = Path(__file__).parent / "fixtures"
#: Where the states built here go (apart from the recorded and hand-written ones).
DRA_FIXTURES = FIXTURES / "dra"
NAMESPACE = "ml"
POD = "infer"
H100 = "NVIDIA H100 80GB HBM3"
L4 = {"product": "NVIDIA L4", "computeCapability": "8.9", "memoryMiB": 23034}
WHEN = "2026-01-01T00:05:00Z"
JSON = dict[str, Any]


def gpus() -> list[Any]:
    doc = {"gpustack": {"backend": "simulated", "simulated": {"gpus": [
        {"index": i, **L4} for i in range(2)
    ]}}}  # fmt: skip
    return SimulatedBackend(PluginConfig.from_dict(doc)).discover()


def resource_slice(node: str) -> JSON:
    body = slices.resource_slice(
        upstream.GPU_DRIVER, node, f"uid-{node}", gpus(), slices.NodeDriver()
    )
    body["metadata"]["name"] = body["metadata"].pop("generateName") + "x1y2z"
    return body


def device_classes(names: tuple[str, ...] | None = None) -> list[JSON]:
    return [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": c.name},
            "spec": {"selectors": [{"cel": {"expression": c.cel}}]},
        }
        for c in upstream.DEVICE_CLASSES
        if names is None or c.name in names
    ]


def request(device_class: str, *exprs: str, count: int = 1) -> JSON:
    exactly: JSON = {
        "deviceClassName": device_class,
        "allocationMode": "ExactCount",
        "count": count,
    }
    if exprs:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in exprs]
    return {"name": "gpu", "exactly": exactly}


def template(tpl: str, req: JSON) -> JSON:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": tpl, "namespace": NAMESPACE},
        "spec": {"spec": {"devices": {"requests": [req]}}},
    }


def claim(claim_name: str, req: JSON, allocated: list[tuple[str, str]] | None = None) -> JSON:
    """A claim made from a template for ``POD``; ``allocated``: (pool, device) it was given."""
    obj: JSON = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": claim_name, "namespace": NAMESPACE},
        "spec": {"devices": {"requests": [req]}},
        "status": {},
    }
    if allocated:
        obj["status"]["allocation"] = {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": upstream.GPU_DRIVER, "pool": p, "device": d}
                    for p, d in allocated
                ]
            }
        }
    return obj


def pod(pod_name: str, tpl: str, claim_name: str | None, *, running_on: str | None = None) -> JSON:
    obj: JSON = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": pod_name, "namespace": NAMESPACE},
        "spec": {
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": tpl}],
            "containers": [
                {
                    "name": "server",
                    "image": "nvcr.io/nvidia/tritonserver:25.01-py3",
                    "resources": {"claims": [{"name": "gpu"}]},
                }
            ],
        },
        "status": {"phase": "Running" if running_on else "Pending"},
    }
    if running_on:
        obj["spec"]["nodeName"] = running_on
    if claim_name is not None:
        obj["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": claim_name}]
    return obj


def event(involved: str, reason: str, message: str) -> JSON:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{involved}.{reason.lower()}", "namespace": NAMESPACE},
        "involvedObject": {"kind": "Pod", "name": involved, "namespace": NAMESPACE},
        "reason": reason,
        "message": message,
        "type": "Warning",
        "count": 4,
        "lastTimestamp": WHEN,
    }


def unschedulable(why: str) -> JSON:
    return event(
        POD,
        "FailedScheduling",
        f"0/3 nodes are available: {why}. preemption: 0/3 nodes are available: 3 Preemption is "
        "not helpful for scheduling.",
    )


CANNOT = (
    "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
    "2 cannot allocate all claims"
)


def _driver_up() -> list[JSON]:
    return [*device_classes(), resource_slice("gpu-1"), resource_slice("gpu-2")]


def _one_gpu(*exprs: str) -> list[JSON]:
    req = request(upstream.GPU_DEVICE_CLASS, *exprs)
    return [
        template("single-gpu", req),
        claim(f"{POD}-gpu-x7k2q", req),
        pod(POD, "single-gpu", f"{POD}-gpu-x7k2q"),
    ]


def healthy() -> list[JSON]:
    """A pod that got its GPU: no finding."""
    req = request(
        upstream.GPU_DEVICE_CLASS,
        f"device.attributes['gpu.nvidia.com'].productName == '{L4['product']}'",
    )
    name = f"{POD}-gpu-x7k2q"
    return [
        *_driver_up(),
        template("single-gpu", req),
        claim(name, req, [("gpu-1", "gpu-0")]),
        pod(POD, "single-gpu", name, running_on="gpu-1"),
    ]


def template_missing() -> list[JSON]:
    return [
        *_driver_up(),
        template("single-gpu", request(upstream.GPU_DEVICE_CLASS)),
        pod(POD, "singel-gpu", None),
        event(
            POD,
            "FailedResourceClaimCreation",
            'PodResourceClaim gpu: resource claim template "singel-gpu": '
            'resourceclaimtemplate.resource.k8s.io "singel-gpu" not found',
        ),
        unschedulable(f'pod "{NAMESPACE}/{POD}": ResourceClaim not created yet'),
    ]


def class_missing() -> list[JSON]:
    """The DRA driver is deployed without GPU allocation: only the ComputeDomain classes."""
    return [
        *device_classes(upstream.COMPUTE_DOMAIN_DEVICE_CLASSES),
        *_one_gpu(),
        unschedulable("request gpu: device class gpu.nvidia.com does not exist"),
    ]


def no_slices() -> list[JSON]:
    """The classes exist but no kubelet plugin publishes."""
    return [*device_classes(), *_one_gpu(), unschedulable(CANNOT)]


def no_match() -> list[JSON]:
    return [
        *_driver_up(),
        *_one_gpu(f"device.attributes['gpu.nvidia.com'].productName == '{H100}'"),
        unschedulable(CANNOT),
    ]


def all_taken() -> list[JSON]:
    """Every GPU is allocated to another pod's claim."""
    req = request(upstream.GPU_DEVICE_CLASS, count=2)
    others = [
        claim(f"batch-{node}-gpu", req, [(node, "gpu-0"), (node, "gpu-1")])
        for node in ("gpu-1", "gpu-2")
    ]
    return [*_driver_up(), *others, *_one_gpu(), unschedulable(CANNOT)]


def unsure() -> list[JSON]:
    """A selector more than ``==``: named as the possible reason."""
    return [
        *_driver_up(),
        *_one_gpu("device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H')"),
        unschedulable(CANNOT),
    ]


def not_recorded() -> list[JSON]:
    """A state recorded without the DRA kinds (before doctor read them): only the pod and the
    scheduler's word."""
    return [pod(POD, "single-gpu", f"{POD}-gpu-x7k2q"), unschedulable(CANNOT)]


SCENARIOS: dict[str, Callable[[], list[JSON]]] = {
    "claim-healthy": healthy,
    "claim-template-missing": template_missing,
    "claim-class-missing": class_missing,
    "claim-no-slices": no_slices,
    "claim-no-match": no_match,
    "claim-all-taken": all_taken,
    "claim-unsure": unsure,
    "claim-not-recorded": not_recorded,
}


Scenarios = dict[str, Callable[[], list[JSON]]]


def build(scenario: str, scenarios: Scenarios = SCENARIOS) -> JSON:
    doc = copy.deepcopy(json.loads((FIXTURES / "healthy.json").read_text()))
    doc["items"] += scenarios[scenario]()
    return doc


def text(scenario: str, scenarios: Scenarios = SCENARIOS) -> str:
    return json.dumps(build(scenario, scenarios), indent=1) + "\n"


def stale(scenarios: Scenarios = SCENARIOS) -> list[str]:
    """The scenarios whose fixture is not what is built here (to be written again)."""
    return [s for s in scenarios if (DRA_FIXTURES / f"{s}.json").read_text() != text(s, scenarios)]


def write(scenarios: Scenarios = SCENARIOS) -> None:
    for scenario in scenarios:
        (DRA_FIXTURES / f"{scenario}.json").write_text(text(scenario, scenarios))


def main() -> None:
    write()


if __name__ == "__main__":
    main()
