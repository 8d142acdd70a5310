"""Pure rules without sockets: XID policy, resource naming, allocation preference at scale."""

from __future__ import annotations

from typing import Any

import pytest

from gpustack.plugin.allocate import AllocationError, preferred_allocation
from gpustack.plugin.backends.nvml import mig_profile_name, numa_node
from gpustack.plugin.backends.simulated import SimulatedBackend
from gpustack.plugin.config import DEFAULT_IGNORED_XIDS, HealthConfig, PluginConfig
from gpustack.plugin.devices import Gpu, MigDevice
from gpustack.plugin.health import EnvError, HealthState, XidPolicy
from gpustack.plugin.main import apply_overrides, build_parser, collect_overrides
from gpustack.plugin.resources import (
    Resource,
    ResourceError,
    build_resources,
    mig_resource_name,
)


@pytest.mark.parametrize(
    ("health", "env", "critical", "ignored"),
    [
        (HealthConfig(), {}, [48, 79, 94], list(DEFAULT_IGNORED_XIDS)),
        (HealthConfig(), {"DP_DISABLE_HEALTHCHECKS": "79, 48"}, [94], [79, 48, 13]),
        (HealthConfig(), {"DP_DISABLE_HEALTHCHECKS": "all"}, [], [48, 79]),
        (HealthConfig(), {"DP_DISABLE_HEALTHCHECKS": "xids"}, [], [48, 79]),
        (
            HealthConfig(),
            {"DP_DISABLE_HEALTHCHECKS": "all", "DP_ENABLE_HEALTHCHECKS": "79"},
            [79],
            [48],
        ),
        (HealthConfig(), {"DP_ENABLE_HEALTHCHECKS": "13"}, [13, 48], [31]),
        (HealthConfig(enabled=False), {}, [], [48, 79]),
        (HealthConfig(ignored_xids=()), {}, [13, 48], []),
        (HealthConfig(ignored_xids=(94,)), {}, [13], [94]),
    ],
    ids=[
        "defaults",
        "extra-ignored",
        "all",
        "xids",
        "all-but-forced",
        "forced",
        "config-off",
        "ignore-none",
        "custom-list",
    ],
)
def test_xid_policy(
    health: HealthConfig, env: dict[str, str], critical: list[int], ignored: list[int]
) -> None:
    policy = XidPolicy.from_config(health, env)
    assert [x for x in critical if policy.is_critical(x)] == critical
    assert [x for x in ignored if not policy.is_critical(x)] == ignored
    assert policy.active == bool(critical)


def test_xid_policy_rejects_garbage() -> None:
    with pytest.raises(EnvError, match="DP_ENABLE_HEALTHCHECKS"):
        XidPolicy.from_config(HealthConfig(), {"DP_ENABLE_HEALTHCHECKS": "seventy"})


def resources(doc: dict[str, Any]) -> list[Resource]:
    config = PluginConfig.from_dict(doc)
    return build_resources(config, SimulatedBackend(config).discover())


@pytest.mark.parametrize(
    ("name", "socket"),
    [
        ("nvidia.com/gpu", "nvidia-gpu.sock"),
        ("nvidia.com/gpu.shared", "nvidia-gpu.shared.sock"),
        ("nvidia.com/mig-1g.10gb", "nvidia-mig-1g.10gb.sock"),
        ("example.com/h100", "example-h100.sock"),
    ],
)
def test_socket_names(name: str, socket: str) -> None:
    assert Resource(name=name, units=()).socket_name == socket


def test_mig_resource_name_replaces_plus() -> None:
    assert mig_resource_name("1g.10gb+me") == "nvidia.com/mig-1g.10gb.me"


class Attrs:
    def __init__(self, gi: int, ci: int, mb: int) -> None:
        self.gpuInstanceSliceCount = gi
        self.computeInstanceSliceCount = ci
        self.memorySizeMB = mb


GIB = 1024**3
A100_40GB = 40 * GIB
A100_80GB = 80 * GIB
#: nvmlDeviceGetMemoryInfo().total of an H100 80GB HBM3 (81559 MiB; not a whole number of GiB).
H100_80GB = 81559 * 1024 * 1024


@pytest.mark.parametrize(
    ("attrs", "total", "name"),
    [
        # MIG devices get a little less than their share; NVIDIA's names round the share up.
        (Attrs(1, 1, 4864), A100_40GB, "1g.5gb"),
        (Attrs(2, 2, 9856), A100_40GB, "2g.10gb"),
        (Attrs(3, 3, 19968), A100_40GB, "3g.20gb"),
        (Attrs(7, 7, 40192), A100_40GB, "7g.40gb"),
        (Attrs(1, 1, 9728), A100_80GB, "1g.10gb"),
        (Attrs(3, 3, 40192), A100_80GB, "3g.40gb"),
        (Attrs(7, 7, 81152), A100_80GB, "7g.80gb"),
        (Attrs(1, 1, 9984), H100_80GB, "1g.10gb"),
        (Attrs(1, 1, 19968), H100_80GB, "1g.20gb"),
        (Attrs(3, 3, 40448), H100_80GB, "3g.40gb"),
        (Attrs(2, 1, 19968), A100_80GB, "1c.2g.20gb"),
    ],
)
def test_mig_profile_names_from_nvml_attributes(attrs: Attrs, total: int, name: str) -> None:
    assert mig_profile_name(attrs, total) == name


def test_numa_node_of_missing_device_is_none() -> None:
    assert numa_node("00000000:FF:1F.7") is None


def test_custom_resource_name_and_shared_rename() -> None:
    doc = {
        "sharing": {
            "timeSlicing": {
                "renameByDefault": True,
                "resources": [{"name": "example.com/h100", "replicas": 3}],
            }
        },
        "gpustack": {
            "resourceName": "example.com/h100",
            "backend": "simulated",
            "simulated": {"gpus": [{"index": 0}, {"index": 1}]},
        },
    }
    (res,) = resources(doc)
    assert res.name == "example.com/h100.shared" and res.replicas == 3
    assert len(res.device_ids) == 6


def mixed_a100(*shared: dict[str, Any], rename_by_default: bool = False) -> dict[str, Any]:
    """Two A100s, one with 2 × 1g.10gb + 1 × 2g.20gb, one whole; ``shared`` time-sliced."""
    gpus = [
        {"index": 0, "mig": {"enabled": True, "devices": {"1g.10gb": 2, "2g.20gb": 1}}},
        {"index": 1},
    ]
    return {
        "flags": {"migStrategy": "mixed"},
        "sharing": {
            "timeSlicing": {"renameByDefault": rename_by_default, "resources": list(shared)}
        },
        "gpustack": {"backend": "simulated", "simulated": {"gpus": gpus}},
    }


@pytest.mark.parametrize(
    ("doc", "advertised"),
    [
        (
            mixed_a100({"name": "nvidia.com/mig-1g.10gb", "replicas": 3}),
            {"nvidia.com/mig-1g.10gb": 6, "nvidia.com/mig-2g.20gb": 1, "nvidia.com/gpu": 1},
        ),
        (
            mixed_a100(
                {"name": "nvidia.com/mig-1g.10gb", "replicas": 3, "rename": "nvidia.com/tiny"},
                {"name": "nvidia.com/gpu", "replicas": 2},
                rename_by_default=True,
            ),
            {"nvidia.com/tiny": 6, "nvidia.com/mig-2g.20gb": 1, "nvidia.com/gpu.shared": 2},
        ),
        (
            mixed_a100(
                {"name": "nvidia.com/gpu", "replicas": 4, "rename": "nvidia.com/gpu"},
                rename_by_default=True,
            ),
            {"nvidia.com/mig-1g.10gb": 2, "nvidia.com/mig-2g.20gb": 1, "nvidia.com/gpu": 4},
        ),
    ],
    ids=["plain", "rename-and-default", "rename-keeps-name"],
)
def test_advertised_names_and_device_counts(
    doc: dict[str, Any], advertised: dict[str, int]
) -> None:
    assert {r.name: len(r.device_ids) for r in resources(doc)} == advertised


def test_rename_onto_an_unshared_mig_resource_is_refused() -> None:
    doc = mixed_a100(
        {"name": "nvidia.com/mig-1g.10gb", "replicas": 2, "rename": "nvidia.com/mig-2g.20gb"}
    )
    with pytest.raises(ResourceError, match=r"both be advertised as nvidia\.com/mig-2g\.20gb"):
        resources(doc)


def big_node(n: int) -> Resource:
    """``n`` GPUs in NVLink quads (0-3, 4-7, …), two NUMA nodes."""
    gpus = [
        {
            "index": i,
            "numaNode": i * 2 // n,
            "nvlinkPeers": [j for j in range(i - i % 4, i - i % 4 + 4) if j != i],
        }
        for i in range(n)
    ]
    (res,) = resources({"gpustack": {"backend": "simulated", "simulated": {"gpus": gpus}}})
    return res


def test_preferred_on_a_large_node_stays_within_an_nvlink_quad() -> None:
    res = big_node(64)  # C(64, 4) is far above the exhaustive limit: greedy path
    ids = res.device_ids
    chosen = preferred_allocation(res, ids, [ids[21]], 4)
    assert sorted(chosen) == sorted(ids[20:24])


def test_preferred_exhaustive_quad() -> None:
    res = big_node(16)
    ids = res.device_ids
    available = [ids[0], ids[1], ids[4], ids[5], ids[6], ids[7], ids[8]]
    assert sorted(preferred_allocation(res, available, [], 4)) == sorted(ids[4:8])


@pytest.mark.parametrize(
    ("size", "must"),
    [(0, []), (3, []), (1, ["GPU-00000000-0000-0000-0000-000000000000"])],
    ids=["zero", "too-many", "unknown"],
)
def test_preferred_rejects_impossible_requests(size: int, must: list[str]) -> None:
    res = big_node(4)
    with pytest.raises(AllocationError):
        preferred_allocation(res, res.device_ids[:2], must, size)


def test_health_state_notifies_waiters_and_ignores_repeats() -> None:
    (res,) = resources(
        {"gpustack": {"backend": "simulated", "simulated": {"gpus": [{"index": 0}, {"index": 1}]}}}
    )
    state = HealthState(res.units)
    generation, unhealthy = state.snapshot()
    assert unhealthy == frozenset()
    policy = XidPolicy.from_config(HealthConfig(), {})
    assert state.apply_xid(policy, res.units[0].uuid, 79) == [res.units[0].uuid]
    assert state.wait_for_change(generation, 0) == generation + 1
    assert state.apply_xid(policy, res.units[0].uuid, 79) == [res.units[0].uuid]
    assert state.snapshot()[0] == generation + 1  # already unhealthy: no new list
    assert state.apply_xid(policy, res.units[1].uuid, 13) == []
    assert state.health(res.units[1].uuid) == "Healthy"


@pytest.mark.parametrize(
    ("argv", "env", "field", "value"),
    [
        (["--driver-root", "/run/nvidia/driver"], {}, "nvidia_driver_root", "/run/nvidia/driver"),
        (["--dev-root", "/host"], {}, "nvidia_dev_root", "/host"),
        (["--driver-root-ctr-path", "/host-driver"], {}, "container_driver_root", "/host-driver"),
        ([], {"DRIVER_ROOT_CTR_PATH": "/host-driver"}, "container_driver_root", "/host-driver"),
        # The gpustack name wins over NVIDIA's alias when both are set.
        (
            [],
            {"CONTAINER_DRIVER_ROOT": "/a", "DRIVER_ROOT_CTR_PATH": "/b"},
            "container_driver_root",
            "/a",
        ),
    ],
    ids=["driver-root", "dev-root", "driver-root-ctr-path", "env-alias", "env-precedence"],
)
def test_nvidia_flag_and_env_aliases(
    argv: list[str], env: dict[str, str], field: str, value: str
) -> None:
    # The names NVIDIA's plugin and the GPU operator use must configure this plugin alike.
    args = build_parser().parse_args(argv)
    config = apply_overrides(PluginConfig(), collect_overrides(args, env))
    flags = config.flags
    assert getattr(flags.plugin if field == "container_driver_root" else flags, field) == value


def _mig(profile: str, position: int) -> MigDevice:
    return MigDevice(
        uuid=f"MIG-{position:08d}-0000-0000-0000-000000000000",
        profile=profile,
        parent_uuid="GPU-00000000-0000-0000-0000-000000000000",
        parent_index=0,
        position=position,
        gpu_instance=position,
        compute_instance=0,
        device_paths=("/dev/nvidia0",),
    )


def _a100_with(*migs: MigDevice) -> Gpu:
    return Gpu(
        index=0,
        uuid="GPU-00000000-0000-0000-0000-000000000000",
        minor=0,
        product="NVIDIA A100-SXM4-80GB",
        memory_mib=81920,
        compute_capability="8.0",
        numa_node=0,
        nvlink_peers=frozenset(),
        mig_enabled=True,
        mig_devices=migs,
    )


@pytest.mark.parametrize("strategy", ["single", "mixed"])
def test_partial_compute_instances_are_not_advertised(
    strategy: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A compute instance smaller than its GPU instance (``1c.2g.20gb``) is no schedulable
    unit: like NVIDIA's plugin, advertise only MIG devices whose CI spans the GI."""
    gpu = _a100_with(_mig("2g.20gb", 0), _mig("1c.2g.20gb", 1), _mig("2g.20gb", 2))
    config = PluginConfig.from_dict({"flags": {"migStrategy": strategy}})
    (res,) = build_resources(config, [gpu])
    expected = "nvidia.com/gpu" if strategy == "single" else "nvidia.com/mig-2g.20gb"
    assert res.name == expected
    assert [u.uuid for u in res.units] == [gpu.mig_devices[0].uuid, gpu.mig_devices[2].uuid]
    assert "1c.2g.20gb" in caplog.text and "not advertised" in caplog.text
