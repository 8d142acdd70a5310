"""The plugin against the simulated kubelet, over real gRPC on unix sockets (in-process)."""

from __future__ import annotations

import logging
import os
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest

from gpustack.plugin.allocate import AllocateSettings
from gpustack.plugin.backends.simulated import SimulatedBackend
from gpustack.plugin.config import PluginConfig
from gpustack.plugin.health import HealthState
from gpustack.plugin.resources import build_resources
from gpustack.plugin.server import PluginServer
from gpustack.plugin.testkubelet import KubeletSimulator
from gpustack.plugin.v1beta1 import api_pb2

from .conftest import H100X8, InProcessPlugin, StartPlugin, sim_config

GPU = "nvidia.com/gpu"


def uuids(config: dict[str, Any] = H100X8) -> list[str]:
    return [g.uuid for g in PluginConfig.from_dict(config).gpustack.simulated.gpus]


U = uuids()


def healthy(devices: list[api_pb2.Device]) -> dict[str, str]:
    return {d.ID: d.health for d in devices}


def rejected(call: Any) -> grpc.RpcError:
    """Run ``call``; it must fail with INVALID_ARGUMENT. Returns the error."""
    with pytest.raises(grpc.RpcError) as caught:
        call()
    err = caught.value
    assert isinstance(err, grpc.Call)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err.details()
    return err


def events_config(path: Path, **sections: Any) -> dict[str, Any]:
    doc = sim_config(**sections)
    doc["gpustack"]["simulated"]["eventsFile"] = str(path)
    return doc


def append(path: Path, line: str) -> None:
    with path.open("a") as fh:
        fh.write(line + "\n")


# --- registration and ListAndWatch -----------------------------------------------------------


def test_registers_after_serving(kubelet: KubeletSimulator, start_plugin: StartPlugin) -> None:
    start_plugin(H100X8)
    reg = kubelet.wait_for_registration(GPU)
    assert (reg.version, reg.endpoint, reg.resource) == ("v1beta1", "nvidia-gpu.sock", GPU)
    assert reg.options.get_preferred_allocation_available
    assert not reg.options.pre_start_required
    options = kubelet.options(GPU)
    assert options.get_preferred_allocation_available and not options.pre_start_required


def test_list_and_watch_sends_all_devices_with_numa(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    start_plugin(H100X8)
    kubelet.wait_for_registration(GPU)
    devices = kubelet.list_and_watch(GPU)
    assert [d.ID for d in devices] == U
    assert {d.health for d in devices} == {"Healthy"}
    assert [[n.ID for n in d.topology.nodes] for d in devices] == [[i // 4] for i in range(8)]


def test_pre_start_container_is_a_no_op(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    start_plugin(H100X8)
    kubelet.wait_for_registration(GPU)
    stub = kubelet.plugin(GPU).stub
    assert stub.PreStartContainer(api_pb2.PreStartContainerRequest(devices_ids=[U[0]]), timeout=5)


# --- health ----------------------------------------------------------------------------------


def test_xid_marks_device_unhealthy_then_allocate_rejects_it(
    kubelet: KubeletSimulator, start_plugin: StartPlugin, sockdir: Path
) -> None:
    events = sockdir / "events"
    start_plugin(events_config(events))
    kubelet.wait_for_registration(GPU)
    plugin = kubelet.plugin(GPU)
    plugin.wait_for(lambda d: len(d) == 8)
    append(events, f"xid {U[3]} 79")
    devices = plugin.wait_for(lambda d: healthy(d)[U[3]] == "Unhealthy")
    assert [d.ID for d in devices if d.health == "Unhealthy"] == [U[3]]
    err = rejected(lambda: kubelet.allocate(GPU, [U[3]]))
    assert "Unhealthy" in (err.details() or "")
    assert kubelet.allocate(GPU, [U[2]]).container_responses[0].envs


def test_ignored_xid_does_not_change_health(
    kubelet: KubeletSimulator, start_plugin: StartPlugin, sockdir: Path
) -> None:
    events = sockdir / "events"
    start_plugin(events_config(events))
    kubelet.wait_for_registration(GPU)
    plugin = kubelet.plugin(GPU)
    plugin.wait_for(lambda d: len(d) == 8)
    # Events apply in file order: once GPU 5's XID is visible, GPU 1's XIDs were handled.
    append(events, f"xid {U[1]} 13")
    append(events, f"xid {U[1]} 43")
    append(events, "xid 5 48")
    devices = plugin.wait_for(lambda d: healthy(d)[U[5]] == "Unhealthy")
    assert healthy(devices)[U[1]] == "Healthy"


def test_env_adds_ignored_xids(
    kubelet: KubeletSimulator, start_plugin: StartPlugin, sockdir: Path
) -> None:
    events = sockdir / "events"
    start_plugin(events_config(events), env={"DP_DISABLE_HEALTHCHECKS": "79"})
    kubelet.wait_for_registration(GPU)
    plugin = kubelet.plugin(GPU)
    plugin.wait_for(lambda d: len(d) == 8)
    append(events, f"xid {U[0]} 79")
    append(events, f"xid {U[2]} 48")
    devices = plugin.wait_for(lambda d: healthy(d)[U[2]] == "Unhealthy")
    assert healthy(devices)[U[0]] == "Healthy"


def test_recover_event_makes_device_healthy_again(
    kubelet: KubeletSimulator, start_plugin: StartPlugin, sockdir: Path
) -> None:
    events = sockdir / "events"
    start_plugin(events_config(events))
    kubelet.wait_for_registration(GPU)
    plugin = kubelet.plugin(GPU)
    append(events, f"xid {U[6]} 79")
    plugin.wait_for(lambda d: bool(d) and healthy(d)[U[6]] == "Unhealthy")
    append(events, "this line is malformed")
    append(events, f"recover {U[6]}")
    plugin.wait_for(lambda d: healthy(d)[U[6]] == "Healthy")
    assert kubelet.allocate(GPU, [U[6]]).container_responses[0].envs


# --- Allocate --------------------------------------------------------------------------------

PREFIX = "cdi.k8s.io/gpustack-device-plugin_"
CDI = "k8s.device-plugin.nvidia.com/gpu"
STRATEGY_CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "envvar",
        {"deviceListStrategy": "envvar"},
        {"envs": {"NVIDIA_VISIBLE_DEVICES": f"{U[0]},{U[1]}"}},
    ),
    (
        "index",
        {"deviceIDStrategy": "index"},
        {"envs": {"NVIDIA_VISIBLE_DEVICES": "0,1"}},
    ),
    (
        "volume-mounts",
        {"deviceListStrategy": ["volume-mounts"]},
        {
            "envs": {"NVIDIA_VISIBLE_DEVICES": "/var/run/nvidia-container-devices"},
            "mounts": [
                (f"/var/run/nvidia-container-devices/{U[0]}", "/dev/null", True),
                (f"/var/run/nvidia-container-devices/{U[1]}", "/dev/null", True),
            ],
        },
    ),
    (
        "cdi-annotations",
        {"deviceListStrategy": ["cdi-annotations"]},
        {"annotations": {PREFIX: f"{CDI}={U[0]},{CDI}={U[1]}"}},
    ),
    (
        "cdi-cri",
        {"deviceListStrategy": ["cdi-cri"]},
        {
            "cdi_devices": [
                f"k8s.device-plugin.nvidia.com/gpu={U[0]}",
                f"k8s.device-plugin.nvidia.com/gpu={U[1]}",
            ]
        },
    ),
    (
        "cdi-cri-and-envvar-by-index",
        {"deviceListStrategy": ["cdi-cri", "envvar"], "deviceIDStrategy": "index"},
        {
            "envs": {"NVIDIA_VISIBLE_DEVICES": "0,1"},
            "cdi_devices": [
                "k8s.device-plugin.nvidia.com/gpu=0",
                "k8s.device-plugin.nvidia.com/gpu=1",
            ],
        },
    ),
]


def summarize(resp: api_pb2.ContainerAllocateResponse) -> dict[str, Any]:
    """The response as plain data; annotation keys lose their per-request hash suffix."""
    out: dict[str, Any] = {}
    if resp.envs:
        out["envs"] = dict(resp.envs)
    if resp.mounts:
        out["mounts"] = [(m.container_path, m.host_path, m.read_only) for m in resp.mounts]
    if resp.annotations:
        out["annotations"] = {k.rsplit("_", 1)[0] + "_": v for k, v in resp.annotations.items()}
    if resp.cdi_devices:
        out["cdi_devices"] = [c.name for c in resp.cdi_devices]
    if resp.devices:
        out["devices"] = [(d.container_path, d.host_path, d.permissions) for d in resp.devices]
    return out


@pytest.mark.parametrize(
    ("plugin_flags", "expected"),
    [c[1:] for c in STRATEGY_CASES],
    ids=[c[0] for c in STRATEGY_CASES],
)
def test_allocate_per_strategy(
    kubelet: KubeletSimulator,
    start_plugin: StartPlugin,
    plugin_flags: dict[str, Any],
    expected: dict[str, Any],
) -> None:
    start_plugin(sim_config(flags={"plugin": plugin_flags}))
    kubelet.wait_for_registration(GPU)
    response = kubelet.allocate(GPU, [U[0], U[1]], [U[2]])
    assert len(response.container_responses) == 2
    assert summarize(response.container_responses[0]) == expected
    second = str(summarize(response.container_responses[1]))
    assert second != "{}" and U[0] not in second and U[1] not in second


def test_cdi_annotation_key_is_deterministic_and_per_device_set(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    start_plugin(sim_config(flags={"plugin": {"deviceListStrategy": "cdi-annotations"}}))
    kubelet.wait_for_registration(GPU)
    first = kubelet.allocate(GPU, [U[0]]).container_responses[0].annotations
    again = kubelet.allocate(GPU, [U[0]]).container_responses[0].annotations
    other = kubelet.allocate(GPU, [U[1]]).container_responses[0].annotations
    assert list(first) == list(again) != list(other)
    (key,) = first
    assert key.startswith(PREFIX) and len(key.split("/", 1)[1]) <= 63


def test_pass_device_specs(kubelet: KubeletSimulator, start_plugin: StartPlugin) -> None:
    start_plugin(
        sim_config(
            flags={"nvidiaDriverRoot": "/run/nvidia/driver", "plugin": {"passDeviceSpecs": True}}
        )
    )
    kubelet.wait_for_registration(GPU)
    resp = kubelet.allocate(GPU, [U[3], U[5]]).container_responses[0]
    root = "/run/nvidia/driver"
    paths = [
        "/dev/nvidiactl",
        "/dev/nvidia-uvm",
        "/dev/nvidia-uvm-tools",
        "/dev/nvidia-modeset",
        "/dev/nvidia3",
        "/dev/nvidia5",
    ]
    assert summarize(resp)["devices"] == [(p, root + p, "rw") for p in paths]


def test_device_specs_absent_by_default(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    start_plugin(H100X8)
    kubelet.wait_for_registration(GPU)
    assert not kubelet.allocate(GPU, [U[0]]).container_responses[0].devices


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        (["GPU-00000000-0000-0000-0000-000000000000"], "unknown device ID"),
        ([U[0] + "::0"], "unknown device ID"),
        ([], "empty device list"),
    ],
    ids=["unknown-uuid", "replica-id-without-sharing", "empty"],
)
def test_bad_ids_are_invalid_argument(
    kubelet: KubeletSimulator, start_plugin: StartPlugin, ids: list[str], message: str
) -> None:
    start_plugin(H100X8)
    kubelet.wait_for_registration(GPU)
    err = rejected(lambda: kubelet.allocate(GPU, ids))
    assert message in (err.details() or "")


def test_100_concurrent_allocates(kubelet: KubeletSimulator, start_plugin: StartPlugin) -> None:
    start_plugin(H100X8)
    kubelet.wait_for_registration(GPU)

    def one(n: int) -> tuple[list[str], str]:
        ids = [U[n % 8], U[(n * 3 + 1) % 8]]
        resp = kubelet.allocate(GPU, ids, timeout=20).container_responses[0]
        return ids, resp.envs["NVIDIA_VISIBLE_DEVICES"]

    with ThreadPoolExecutor(max_workers=100) as pool:
        results = list(pool.map(one, range(100)))
    assert len(results) == 100
    for ids, visible in results:
        assert visible == ",".join(dict.fromkeys(ids))


# --- time-slicing ----------------------------------------------------------------------------


def sharing(replicas: int = 4, **extra: Any) -> dict[str, Any]:
    return {"timeSlicing": {"resources": [{"name": GPU, "replicas": replicas}], **extra}}


def test_time_slicing_advertises_replicas(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    start_plugin(sim_config(sharing=sharing(4)))
    kubelet.wait_for_registration(GPU)
    devices = kubelet.list_and_watch(GPU)
    assert [d.ID for d in devices] == [f"{u}::{n}" for u in U for n in range(4)]


def test_time_slicing_replicas_collapse_to_gpus(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    start_plugin(sim_config(sharing=sharing(4)))
    kubelet.wait_for_registration(GPU)
    resp = kubelet.allocate(GPU, [f"{U[0]}::1", f"{U[0]}::3", f"{U[4]}::0"])
    assert resp.container_responses[0].envs["NVIDIA_VISIBLE_DEVICES"] == f"{U[0]},{U[4]}"


def test_time_slicing_rename(kubelet: KubeletSimulator, start_plugin: StartPlugin) -> None:
    start_plugin(sim_config(sharing=sharing(2, renameByDefault=True)))
    reg = kubelet.wait_for_registration("nvidia.com/gpu.shared")
    assert reg.endpoint == "nvidia-gpu.shared.sock"
    assert len(kubelet.list_and_watch("nvidia.com/gpu.shared")) == 16
    assert kubelet.resources() == ["nvidia.com/gpu.shared"]


def test_time_slicing_custom_rename_registers_and_allocates(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    small = "nvidia.com/gpu-small"
    ts = sharing(2, renameByDefault=True)  # rename wins over <name>.shared
    ts["timeSlicing"]["resources"][0]["rename"] = small
    start_plugin(sim_config(sharing=ts))
    reg = kubelet.wait_for_registration(small)
    assert (reg.resource, reg.endpoint) == (small, "nvidia-gpu-small.sock")
    assert kubelet.resources() == [small]
    devices = kubelet.list_and_watch(small)
    assert [d.ID for d in devices] == [f"{u}::{n}" for u in U for n in range(2)]
    resp = kubelet.allocate(small, [f"{U[2]}::1", f"{U[5]}::0"])
    assert resp.container_responses[0].envs["NVIDIA_VISIBLE_DEVICES"] == f"{U[2]},{U[5]}"


def test_time_slicing_fail_requests_greater_than_one(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    start_plugin(sim_config(sharing=sharing(4, failRequestsGreaterThanOne=True)))
    kubelet.wait_for_registration(GPU)
    err = rejected(lambda: kubelet.allocate(GPU, [f"{U[0]}::0", f"{U[1]}::0"]))
    assert "failRequestsGreaterThanOne" in (err.details() or "")
    one = kubelet.allocate(GPU, [f"{U[1]}::2"]).container_responses[0]
    assert one.envs["NVIDIA_VISIBLE_DEVICES"] == U[1]


# --- MIG -------------------------------------------------------------------------------------


def mig_gpus(layouts: list[dict[str, int] | None]) -> dict[str, Any]:
    gpus = []
    for i, layout in enumerate(layouts):
        gpu: dict[str, Any] = {"index": i, "product": "NVIDIA A100-SXM4-80GB"}
        if layout is not None:
            gpu["mig"] = {"enabled": True, "devices": layout}
        gpus.append(gpu)
    return {"backend": "simulated", "simulated": {"gpus": gpus}}


def test_mig_mixed_one_resource_per_profile(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    config = sim_config(
        flags={"migStrategy": "mixed", "plugin": {"passDeviceSpecs": True}},
        gpustack=mig_gpus([{"1g.10gb": 7}, {"3g.40gb": 1, "2g.20gb": 2}, None]),
    )
    start_plugin(config)
    expected = {
        "nvidia.com/mig-1g.10gb": 7,
        "nvidia.com/mig-3g.40gb": 1,
        "nvidia.com/mig-2g.20gb": 2,
        GPU: 1,
    }
    for resource, count in expected.items():
        reg = kubelet.wait_for_registration(resource)
        assert reg.endpoint == resource.replace("nvidia.com/", "nvidia-") + ".sock"
        devices = kubelet.list_and_watch(resource)
        assert len(devices) == count
        assert all(d.ID.startswith("MIG-" if "mig" in resource else "GPU-") for d in devices)
    mig = kubelet.list_and_watch("nvidia.com/mig-1g.10gb")[2].ID
    resp = kubelet.allocate("nvidia.com/mig-1g.10gb", [mig]).container_responses[0]
    assert resp.envs["NVIDIA_VISIBLE_DEVICES"] == mig
    paths = [d.container_path for d in resp.devices]
    assert "/dev/nvidia0" in paths
    assert len([p for p in paths if p.startswith("/dev/nvidia-caps/nvidia-cap")]) == 2


def test_mig_mixed_index_ids(kubelet: KubeletSimulator, start_plugin: StartPlugin) -> None:
    start_plugin(
        sim_config(
            flags={"migStrategy": "mixed", "plugin": {"deviceIDStrategy": "index"}},
            gpustack=mig_gpus([None, {"1g.10gb": 2}]),
        )
    )
    resource = "nvidia.com/mig-1g.10gb"
    kubelet.wait_for_registration(resource)
    ids = [d.ID for d in kubelet.list_and_watch(resource)]
    resp = kubelet.allocate(resource, ids).container_responses[0]
    assert resp.envs["NVIDIA_VISIBLE_DEVICES"] == "1:0,1:1"


def test_mig_single_advertises_mig_devices_as_gpus(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    start_plugin(
        sim_config(
            flags={"migStrategy": "single"},
            gpustack=mig_gpus([{"2g.20gb": 3}, {"2g.20gb": 3}]),
        )
    )
    kubelet.wait_for_registration(GPU)
    devices = kubelet.list_and_watch(GPU)
    assert len(devices) == 6 and all(d.ID.startswith("MIG-") for d in devices)
    assert kubelet.resources() == [GPU]


@pytest.mark.parametrize(
    "layouts",
    [
        [{"2g.20gb": 3}, None],
        # Same layout on every GPU, but two profiles would share one resource name.
        [{"3g.40gb": 1, "2g.20gb": 2}, {"3g.40gb": 1, "2g.20gb": 2}],
        [{"2g.20gb": 3}, {"1g.10gb": 7}],
    ],
    ids=["mig-and-whole", "two-profiles-per-gpu", "one-profile-per-gpu"],
)
def test_mig_single_rejects_mixed_layouts(
    kubelet: KubeletSimulator, start_plugin: StartPlugin, layouts: list[dict[str, int] | None]
) -> None:
    plugin = start_plugin(sim_config(flags={"migStrategy": "single"}, gpustack=mig_gpus(layouts)))
    plugin.thread.join(timeout=10)
    assert plugin.exit_code == 1
    assert kubelet.registrations == []


def test_mig_xid_on_one_instance_only_affects_it(
    kubelet: KubeletSimulator, start_plugin: StartPlugin, sockdir: Path
) -> None:
    events = sockdir / "events"
    config = sim_config(flags={"migStrategy": "mixed"}, gpustack=mig_gpus([{"1g.10gb": 3}]))
    config["gpustack"]["simulated"]["eventsFile"] = str(events)
    start_plugin(config)
    resource = "nvidia.com/mig-1g.10gb"
    kubelet.wait_for_registration(resource)
    plugin = kubelet.plugin(resource)
    ids = [d.ID for d in plugin.wait_for(lambda d: len(d) == 3)]
    append(events, f"xid {ids[1]} 79")
    devices = plugin.wait_for(lambda d: healthy(d)[ids[1]] == "Unhealthy")
    assert [d.health for d in devices] == ["Healthy", "Unhealthy", "Healthy"]


# --- GetPreferredAllocation ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("available", "must", "size", "expected"),
    [
        (U, [], 2, [U[0], U[1]]),
        (U, [U[2]], 2, [U[2], U[3]]),
        (U, [U[5]], 2, [U[5], U[4]]),
        ([U[0], U[2], U[3], U[4]], [], 2, [U[2], U[3]]),
        # No NVLink pair left: prefer two GPUs on the same NUMA node.
        ([U[0], U[3], U[4], U[7]], [], 2, [U[0], U[3]]),
        (U, [U[6]], 4, [U[6], U[4], U[5], U[7]]),
    ],
    ids=["first-pair", "pair-of-must", "must-second-of-pair", "skip-broken-pair", "numa", "four"],
)
def test_preferred_whole_gpus_follow_topology(
    kubelet: KubeletSimulator,
    start_plugin: StartPlugin,
    available: list[str],
    must: list[str],
    size: int,
    expected: list[str],
) -> None:
    start_plugin(H100X8)
    kubelet.wait_for_registration(GPU)
    assert kubelet.preferred(GPU, available, must, size) == expected


def test_preferred_replicas_distributed(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    start_plugin(sim_config(sharing=sharing(4)))
    kubelet.wait_for_registration(GPU)
    ids = [d.ID for d in kubelet.list_and_watch(GPU)]
    # GPU 0 already runs two replicas: one replica on each other GPU first, then the least
    # loaded GPU again (GPU 1 with one, not GPU 0 with two).
    available = [i for i in ids if i not in (f"{U[0]}::0", f"{U[0]}::1")]
    chosen = kubelet.preferred(GPU, available, [], 8)
    assert [c.split("::")[0] for c in chosen] == [*U[1:], U[1]]
    assert len(set(chosen)) == 8


def test_preferred_replicas_packed(kubelet: KubeletSimulator, start_plugin: StartPlugin) -> None:
    config = sim_config(
        sharing=sharing(4), flags={"plugin": {"sharedDevicesAllocationPolicy": "packed"}}
    )
    start_plugin(config)
    kubelet.wait_for_registration(GPU)
    ids = [d.ID for d in kubelet.list_and_watch(GPU)]
    available = [i for i in ids if i != f"{U[3]}::0"]  # GPU 3 is already in use
    chosen = kubelet.preferred(GPU, available, [], 3)
    assert [c.split("::")[0] for c in chosen] == [U[3]] * 3


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # One replica of each MIG device before any second one, alternating GPUs.
        ("distributed", [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]),
        # Fill one MIG device, then the next one on the same GPU.
        ("packed", [(0, 0), (0, 0), (0, 1), (0, 1), (0, 2)]),
    ],
)
def test_preferred_mig_replicas_by_policy(
    kubelet: KubeletSimulator,
    start_plugin: StartPlugin,
    policy: str,
    expected: list[tuple[int, int]],
) -> None:
    config = sim_config(
        flags={"migStrategy": "mixed", "plugin": {"sharedDevicesAllocationPolicy": policy}},
        sharing={"timeSlicing": {"resources": [{"name": "nvidia.com/mig-1g.10gb", "replicas": 2}]}},
    )
    for gpu in config["gpustack"]["simulated"]["gpus"][:2]:
        gpu["mig"] = {"enabled": True, "devices": {"1g.10gb": 3}}
    config["gpustack"]["simulated"]["gpus"] = config["gpustack"]["simulated"]["gpus"][:2]
    start_plugin(config)
    mig = "nvidia.com/mig-1g.10gb"
    kubelet.wait_for_registration(mig)
    ids = [d.ID for d in kubelet.list_and_watch(mig)]
    # IDs come GPU by GPU, MIG device by MIG device, replica by replica.
    where = {i: (n // 6, n % 6 // 2) for n, i in enumerate(ids)}
    assert [where[i] for i in kubelet.preferred(mig, ids, [], 5)] == expected


def test_preferred_rejects_must_include_outside_available(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    start_plugin(H100X8)
    kubelet.wait_for_registration(GPU)
    rejected(lambda: kubelet.preferred(GPU, [U[0], U[1]], [U[2]], 2))
    rejected(lambda: kubelet.preferred(GPU, [U[0]], [], 2))


# --- kubelet restarts ------------------------------------------------------------------------


def test_register_with_a_silent_kubelet_socket_is_a_timeout(sockdir: Path) -> None:
    # Accepts connections but never speaks gRPC (a hung kubelet): the manager retries a
    # TimeoutError on its next poll, so a DEADLINE_EXCEEDED must not leak out as an RpcError.
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(sockdir / "kubelet.sock"))
    listener.listen()
    config = PluginConfig.from_dict(H100X8)
    resource = build_resources(config, SimulatedBackend(config).discover())[0]
    server = PluginServer(resource, HealthState(resource.units), AllocateSettings(), str(sockdir))
    try:
        with pytest.raises(TimeoutError, match="is not answering"):
            server.register(str(sockdir / "kubelet.sock"))
    finally:
        listener.close()


def test_kubelet_restart_re_registers_within_a_second(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    start_plugin(H100X8)
    kubelet.wait_for_registration(GPU)
    kubelet.list_and_watch(GPU)
    for _ in range(3):
        restarted = kubelet.restart()
        reg = kubelet.wait_for_registration(GPU, timeout=5, after=restarted)
        assert reg.at - restarted < 1.0
        assert [d.ID for d in kubelet.list_and_watch(GPU)] == U
        assert kubelet.allocate(GPU, [U[0]]).container_responses[0].envs


def test_new_kubelet_socket_alone_triggers_re_registration(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    """NVIDIA's signal for a kubelet restart: kubelet.sock re-created, our socket untouched."""
    start_plugin(H100X8)
    first = kubelet.wait_for_registration(GPU)
    kubelet.stop()
    restarted = time.monotonic()
    kubelet.start()
    reg = kubelet.wait_for_registration(GPU, timeout=5, after=restarted)
    assert reg.at - restarted < 1.0 and reg is not first
    assert [d.ID for d in kubelet.list_and_watch(GPU)] == U


def test_own_socket_deletion_re_serves_and_re_registers(
    kubelet: KubeletSimulator, start_plugin: StartPlugin
) -> None:
    start_plugin(H100X8)
    kubelet.wait_for_registration(GPU)
    socket = Path(kubelet.socket_dir) / "nvidia-gpu.sock"
    assert socket.is_socket()
    deleted = time.monotonic()
    os.unlink(socket)
    reg = kubelet.wait_for_registration(GPU, timeout=5, after=deleted)
    assert reg.at - deleted < 1.0
    assert socket.is_socket()
    assert [d.ID for d in kubelet.list_and_watch(GPU)] == U


def test_waits_for_kubelet_socket(sockdir: Path, start_plugin: StartPlugin) -> None:
    """A plugin started before the kubelet registers as soon as kubelet.sock appears."""
    # start_plugin's kubelet is already serving; a second directory has none yet.
    late_dir = sockdir / "late"
    late_dir.mkdir()
    config_file = sockdir / "late.yaml"
    config_file.write_text("gpustack: {backend: simulated, simulated: {gpus: [{index: 0}]}}\n")
    plugin = InProcessPlugin(str(late_dir), config_file, {})
    try:
        deadline = time.monotonic() + 5
        while not (late_dir / "nvidia-gpu.sock").exists():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        with KubeletSimulator(str(late_dir)) as late:
            reg = late.wait_for_registration(GPU, timeout=5)
            assert reg.endpoint == "nvidia-gpu.sock"
    finally:
        assert plugin.stop() == 0


def test_no_devices_serves_nothing(
    kubelet: KubeletSimulator, start_plugin: StartPlugin, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="gpustack.plugin")
    plugin = start_plugin({"gpustack": {"backend": "simulated"}})
    deadline = time.monotonic() + 5
    while "No devices found" not in caplog.text:
        assert time.monotonic() < deadline, caplog.text
        time.sleep(0.02)
    assert plugin.exit_code is None and plugin.thread.is_alive()
    assert sorted(p.name for p in Path(kubelet.socket_dir).iterdir()) == ["kubelet.sock"]
    assert kubelet.registrations == []
