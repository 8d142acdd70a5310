"""The device plugin's answers to requests no kubelet sends (issue #33, Deliver 3).

``GetPreferredAllocation`` checked list membership in lists: one 4 MB request (100,000 IDs,
the one ``must_include`` names placed last in ``available``) cost 100 s of plugin CPU, and a
request naming one device twice with a size of two crashed the handler. The kubelet sends a set
of the IDs the plugin advertised, so a list longer than that is refused before any work, and
what remains is linear in the request.
"""

from __future__ import annotations

import os
import time
from typing import Any

import grpc
import pytest

from gpustack.plugin import server
from gpustack.plugin.allocate import AllocationError, preferred_allocation, resolve_units
from gpustack.plugin.backends.simulated import SimulatedBackend
from gpustack.plugin.config import PluginConfig
from gpustack.plugin.resources import Resource, build_resources
from gpustack.plugin.testkubelet import KubeletSimulator
from gpustack.plugin.v1beta1 import api_pb2, api_pb2_grpc

from .conftest import H100X8, StartPlugin

GPU = "nvidia.com/gpu"

#: Bytes in the request the issue measured.
REQUEST_BYTES = 4_000_000


def _resource(gpus: int, replicas: int = 1) -> Resource:
    doc: dict[str, Any] = {
        "gpustack": {
            "backend": "simulated",
            "simulated": {"gpus": [{"index": i} for i in range(gpus)]},
        }
    }
    if replicas > 1:
        doc["sharing"] = {
            "timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": replicas}]}
        }
    config = PluginConfig.from_dict(doc)
    (res,) = build_resources(config, SimulatedBackend(config).discover())
    return res


def _cpu(call: Any) -> float:
    started = time.process_time()
    call()
    return time.process_time() - started


def _hostile(res: Resource) -> tuple[list[str], list[str]]:
    """A 4 MB request of advertised IDs: every ``must_include`` entry is the last of
    ``available``, so each membership test in a list scans all of it."""
    first, last = res.device_ids[0], res.device_ids[-1]
    count = REQUEST_BYTES // (2 * (len(first) + 2))
    return [first] * count + [last], [last] * count


def test_a_4mb_preferred_allocation_request_costs_under_a_second() -> None:
    res = _resource(8)
    available, must = _hostile(res)

    def call() -> None:
        with pytest.raises(AllocationError, match="at most once"):
            preferred_allocation(res, available, must, 4)

    assert _cpu(call) < 1.0


def test_a_4mb_allocate_request_costs_under_a_second() -> None:
    res = _resource(8)
    available, _ = _hostile(res)

    def call() -> None:
        with pytest.raises(AllocationError, match="at most once"):
            resolve_units(res, available, lambda _: "Healthy")

    assert _cpu(call) < 1.0


def test_the_largest_kubelet_request_is_answered_at_once() -> None:
    """Every advertised ID available, half of them required: the largest request a kubelet
    sends (800 IDs of 8 GPUs x 100 replicas) is answered, linear in its length."""
    res = _resource(8, replicas=100)
    ids = res.device_ids
    assert len(ids) == 800
    chosen: list[str] = []
    assert _cpu(lambda: chosen.extend(preferred_allocation(res, ids, ids[::2], 600))) < 1.0
    assert len(chosen) == len(set(chosen)) == 600
    assert set(ids[::2]) <= set(chosen)


def test_a_device_named_twice_does_not_count_twice() -> None:
    """``available`` naming one device twice offers one device: a size of two is refused (it
    made the policy pick from no candidate, an exception the handler did not expect)."""
    res = _resource(2, replicas=2)
    one = res.device_ids[0]
    with pytest.raises(AllocationError, match="allocation_size 2"):
        preferred_allocation(res, [one, one], [], 2)


def test_a_request_larger_than_any_kubelets_is_refused_before_it_is_decoded(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    """Over the socket: a 4 MB request is refused by gRPC itself (RESOURCE_EXHAUSTED, before
    Python decodes it), the largest request a kubelet sends is answered, and so is Allocate."""
    start_plugin(H100X8)
    kubelet.wait_for_registration(GPU)
    ids = [d.ID for d in kubelet.list_and_watch(GPU)]
    count = REQUEST_BYTES // (2 * (len(ids[0]) + 2))
    hostile = api_pb2.PreferredAllocationRequest(
        container_requests=[
            api_pb2.ContainerPreferredAllocationRequest(
                available_deviceIDs=[ids[0]] * count + [ids[-1]],
                must_include_deviceIDs=[ids[-1]] * count,
                allocation_size=2,
            )
        ]
    )
    path = os.path.join(kubelet.socket_dir, "nvidia-gpu.sock")
    options = (*server.CHANNEL_OPTIONS, ("grpc.max_send_message_length", 8 << 20))
    with grpc.insecure_channel(f"unix:{path}", options=options) as channel:
        stub: Any = api_pb2_grpc.DevicePluginStub(channel)  # type: ignore[no-untyped-call]
        with pytest.raises(grpc.RpcError) as refused:
            stub.GetPreferredAllocation(hostile, timeout=10)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert len(kubelet.preferred(GPU, ids, ids[::2], size=len(ids), timeout=5)) == len(ids)
    assert kubelet.allocate(GPU, ids, timeout=5).container_responses[0].envs
