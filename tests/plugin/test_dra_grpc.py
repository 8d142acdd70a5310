"""The simulated DRA driver over real gRPC on unix sockets, registered by the test kubelet.

The driver publishes to a recording API server on 127.0.0.1, the stand-in kubelet
(gpustack/plugin/dra/testkubelet.py) finds its registration socket, calls GetInfo and
NotifyRegistrationStatus, then NodePrepareResources/NodeUnprepareResources with claims the API
server holds. Both the in-process driver and the ``gpustack-dra-plugin`` console script.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack import dra_upstream as upstream
from gpustack.plugin.dra import claims
from gpustack.plugin.dra.driver import DraDriver, DriverSettings
from gpustack.plugin.dra.kubeapi import ApiConfig, KubeClient
from gpustack.plugin.dra.testkubelet import DraKubelet, RegistrationRefused
from gpustack.plugin.server import serve_unix

from .conftest import H100X8
from .fake_apiserver import FakeApiServer
from .test_dra_slices import discover

DRIVER = "gpu.nvidia.com"
NODE = "node-a"
DRA_SCRIPT = Path(sys.executable).parent / "gpustack-dra-plugin"


def claim(
    name: str, results: list[tuple[str, str, str, str]] | None, namespace: str = "default"
) -> dict[str, Any]:
    """A ResourceClaim; ``results`` as (request, driver, pool, device), None = unallocated."""
    obj: dict[str, Any] = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace, "uid": str(uuid.uuid4())},
        "spec": {"devices": {"requests": []}},
        "status": {},
    }
    if results is not None:
        obj["status"]["allocation"] = {
            "devices": {
                "results": [
                    {"request": r, "driver": d, "pool": p, "device": dev}
                    for r, d, p, dev in results
                ]
            }
        }
    return obj


def ref(obj: dict[str, Any]) -> tuple[str, str, str]:
    meta = obj["metadata"]
    return meta["namespace"], meta["uid"], meta["name"]


@pytest.fixture
def api() -> Iterator[FakeApiServer]:
    with FakeApiServer() as server:
        server.add_node(NODE)
        yield server


@pytest.fixture
def dirs(sockdir: Path) -> dict[str, Path]:
    return {name: sockdir / name for name in ("registry", "plugins", "cdi")}


@pytest.fixture
def driver(api: FakeApiServer, dirs: dict[str, Path], sockdir: Path) -> Iterator[DraDriver]:
    token = sockdir / "token"
    token.write_text(api.token)
    settings = DriverSettings(
        driver=DRIVER,
        node_name=NODE,
        registry_dir=str(dirs["registry"]),
        plugins_dir=str(dirs["plugins"]),
        cdi_root=str(dirs["cdi"]),
        resync_s=0.2,
    )
    client = KubeClient(ApiConfig(api.url, token_file=str(token)))
    drv = DraDriver(settings, client, discover(H100X8))
    drv.start()
    yield drv
    drv.stop()


@pytest.fixture
def kubelet(dirs: dict[str, Path]) -> Iterator[DraKubelet]:
    with DraKubelet(str(dirs["registry"])) as sim:
        yield sim


def wait_until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def test_registration(driver: DraDriver, kubelet: DraKubelet, dirs: dict[str, Path]) -> None:
    plugin = kubelet.wait_for_plugin(DRIVER)
    assert os.path.basename(os.listdir(dirs["registry"])[0]) == f"{DRIVER}-reg.sock"
    assert plugin.info.type == "DRAPlugin"
    assert plugin.info.name == DRIVER
    assert plugin.info.endpoint == str(dirs["plugins"] / DRIVER / "dra.sock")
    assert list(plugin.info.supported_versions) == ["v1.DRAPlugin"]
    assert plugin.service == upstream.DRA_SERVICE_V1
    wait_until(lambda: driver.registration_status is not None)
    assert driver.registration_status == (True, "")


def test_prepare_and_unprepare(
    driver: DraDriver, kubelet: DraKubelet, api: FakeApiServer, dirs: dict[str, Path]
) -> None:
    plugin = kubelet.wait_for_plugin(DRIVER)
    two = claim("two-gpus", [("gpus", DRIVER, NODE, "gpu-3"), ("gpus", DRIVER, NODE, "gpu-5")])
    api.add_claim(two)
    _, uid, _ = ref(two)
    response = plugin.prepare([ref(two)])
    assert list(response.claims) == [uid]
    result = response.claims[uid]
    assert result.error == ""
    assert [(list(d.request_names), d.pool_name, d.device_name, list(d.cdi_device_ids))
            for d in result.devices] == [
        (["gpus"], NODE, "gpu-3", [f"k8s.gpu.nvidia.com/claim={uid}-gpu-3"]),
        (["gpus"], NODE, "gpu-5", [f"k8s.gpu.nvidia.com/claim={uid}-gpu-5"]),
    ]  # fmt: skip
    spec_path = dirs["cdi"] / f"k8s.gpu.nvidia.com-claim_{uid}.json"
    spec = json.loads(spec_path.read_text())
    gpus = {g.index: g.uuid for g in discover(H100X8)}
    assert spec["kind"] == "k8s.gpu.nvidia.com/claim"
    assert spec["containerEdits"] == {"env": ["NVIDIA_VISIBLE_DEVICES=void"]}
    assert {d["name"]: d["containerEdits"]["env"] for d in spec["devices"]} == {
        f"{uid}-gpu-3": [f"GPUSTACK_SIMULATED_DEVICE_3={gpus[3]}"],
        f"{uid}-gpu-5": [f"GPUSTACK_SIMULATED_DEVICE_5={gpus[5]}"],
    }
    # The kubelet read the claim with exactly one GET.
    path = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/two-gpus"
    assert api.calls().count(("GET", path)) == 1
    gone = plugin.unprepare([ref(two)])
    assert list(gone.claims) == [uid] and gone.claims[uid].error == ""
    assert not spec_path.exists()
    again = plugin.unprepare([ref(two)])  # idempotent, as the kubelet may retry
    assert again.claims[uid].error == ""


def test_subrequest_names_are_stripped_and_other_drivers_ignored(
    driver: DraDriver, kubelet: DraKubelet, api: FakeApiServer
) -> None:
    plugin = kubelet.wait_for_plugin(DRIVER)
    mixed = claim(
        "mixed",
        [("gpu/large", DRIVER, NODE, "gpu-0"), ("nic", "net.example.com", NODE, "eth1")],
    )
    api.add_claim(mixed)
    _, uid, _ = ref(mixed)
    result = plugin.prepare([ref(mixed)]).claims[uid]
    assert result.error == ""
    assert [(list(d.request_names), d.device_name) for d in result.devices] == [(["gpu"], "gpu-0")]


CLAIM_ERRORS = {
    "unallocated": (None, "is not allocated"),
    "other-node": ([("g", DRIVER, "node-b", "gpu-0")], "is not one of node node-a's"),
    "unknown-device": ([("g", DRIVER, NODE, "gpu-8")], "gpu-8"),
}


@pytest.mark.parametrize("case", CLAIM_ERRORS)
def test_claim_errors_are_per_claim(
    case: str, driver: DraDriver, kubelet: DraKubelet, api: FakeApiServer, dirs: dict[str, Path]
) -> None:
    plugin = kubelet.wait_for_plugin(DRIVER)
    results, message = CLAIM_ERRORS[case]
    bad = claim("bad", results)
    good = claim("good", [("g", DRIVER, NODE, "gpu-1")])
    api.add_claim(bad)
    api.add_claim(good)
    response = plugin.prepare([ref(bad), ref(good)])
    assert message in response.claims[ref(bad)[1]].error
    assert not list(response.claims[ref(bad)[1]].devices)
    assert response.claims[ref(good)[1]].error == ""
    assert not (dirs["cdi"] / claims.spec_file(DRIVER, ref(bad)[1])).exists()


def test_replaced_and_missing_claims(
    driver: DraDriver, kubelet: DraKubelet, api: FakeApiServer
) -> None:
    plugin = kubelet.wait_for_plugin(DRIVER)
    current = claim("c", [("g", DRIVER, NODE, "gpu-1")])
    api.add_claim(current)
    ns, _, name = ref(current)
    stale_uid = str(uuid.uuid4())
    response = plugin.prepare([(ns, stale_uid, name), ("default", "u-missing", "missing")])
    assert "got replaced" in response.claims[stale_uid].error
    assert "404" in response.claims["u-missing"].error


def test_slice_published_and_restored(driver: DraDriver, api: FakeApiServer) -> None:
    wait_until(lambda: len(api.slices) == 1)
    (name,) = api.slices
    assert [d["name"] for d in api.slices[name]["spec"]["devices"]] == [
        f"gpu-{i}" for i in range(8)
    ]
    with api.lock:
        api.slices.clear()  # as the kubelet wipes a deregistered driver's slices
    wait_until(lambda: len(api.slices) == 1)


def test_stop_removes_the_sockets(
    api: FakeApiServer, dirs: dict[str, Path], driver: DraDriver
) -> None:
    assert os.path.exists(driver.settings.registration_socket)
    driver.stop()
    assert not os.path.exists(driver.settings.registration_socket)
    assert not os.path.exists(driver.settings.dra_socket)


@pytest.mark.parametrize(
    ("info", "problem"),
    [
        ({"type": "CSIPlugin", "supported_versions": ["v1.DRAPlugin"]}, "no handler registered"),
        ({"type": "DRAPlugin", "supported_versions": []}, "empty list of supported"),
        ({"type": "DRAPlugin", "supported_versions": ["v1alpha4"]}, "none of services"),
    ],
    ids=["type", "no-versions", "unknown-version"],
)
def test_the_test_kubelet_refuses_what_the_kubelet_refuses(
    info: dict[str, Any], problem: str, dirs: dict[str, Path]
) -> None:
    from concurrent import futures

    import grpc

    from gpustack.plugin.dra.pluginregistration import api_pb2 as reg_pb2
    from gpustack.plugin.dra.pluginregistration import api_pb2_grpc as reg_grpc

    notified: list[tuple[bool, str]] = []

    class Servicer(reg_grpc.RegistrationServicer):
        def GetInfo(self, request: Any, context: Any) -> Any:
            return reg_pb2.PluginInfo(name="x.example.com", endpoint="", **info)

        def NotifyRegistrationStatus(self, request: Any, context: Any) -> Any:
            notified.append((request.plugin_registered, request.error))
            return reg_pb2.RegistrationStatusResponse()

    dirs["registry"].mkdir(parents=True, exist_ok=True)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    reg_grpc.add_RegistrationServicer_to_server(Servicer(), server)  # type: ignore[no-untyped-call]
    path = str(dirs["registry"] / "x.example.com-reg.sock")
    serve_unix(server, path)
    try:
        with (
            DraKubelet(str(dirs["registry"])) as sim,
            pytest.raises(RegistrationRefused, match=problem),
        ):
            sim.register(path)
        assert notified and notified[0][0] is False and problem in notified[0][1]
    finally:
        server.stop(grace=0).wait()


# --- The console script -------------------------------------------------------------------------


def test_console_script_end_to_end(api: FakeApiServer, sockdir: Path) -> None:
    config = sockdir / "config.yaml"
    config.write_text(yaml.safe_dump(H100X8))
    token = sockdir / "token"
    token.write_text(api.token)
    registry, plugins, cdi_root = sockdir / "registry", sockdir / "plugins", sockdir / "cdi"
    env = {
        **os.environ,
        "NODE_NAME": NODE,
        "KUBELET_REGISTRAR_DIRECTORY_PATH": str(registry),
        "KUBELET_PLUGINS_DIRECTORY_PATH": str(plugins),
        "CDI_ROOT": str(cdi_root),
    }
    proc = subprocess.Popen(
        [str(DRA_SCRIPT), "--config-file", str(config), "--api-server", api.url,
         "--token-file", str(token), "--resync-seconds", "0.2"],
        env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        with DraKubelet(str(registry)) as sim:
            plugin = sim.wait_for_plugin(DRIVER, timeout=20)
            wait_until(lambda: len(api.slices) == 1, timeout=20)
            one = claim("one", [("gpu", DRIVER, NODE, "gpu-7")])
            api.add_claim(one)
            _, uid, _ = ref(one)
            result = plugin.prepare([ref(one)]).claims[uid]
            assert [list(d.cdi_device_ids) for d in result.devices] == [
                [f"k8s.gpu.nvidia.com/claim={uid}-gpu-7"]
            ]
            assert (cdi_root / f"k8s.gpu.nvidia.com-claim_{uid}.json").is_file()
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert not (registry / f"{DRIVER}-reg.sock").exists()


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ([], {}, "--config-file is required"),
        (["--config-file", "c.yaml"], {}, "--node-name is required"),
        (["--config-file", "c.yaml", "--node-name", "n", "--driver-name", "GPU"], {},
         "must be a DNS subdomain"),
        (["--config-file", "c.yaml", "--node-name", "n", "--driver-version", "five"], {},
         "is not a version"),
        (["--config-file", "c.yaml", "--node-name", "n", "--resync-seconds", "0"], {},
         "must be > 0"),
        (["--config-file", "CONFIG", "--node-name", "n"], {"KUBERNETES_SERVICE_HOST": ""},
         "KUBERNETES_SERVICE_HOST"),
        (["--config-file", "NVML", "--node-name", "n", "--api-server", "http://127.0.0.1:9"], {},
         "only simulates GPUs"),
    ],
    ids=["config", "node", "driver-name", "version", "resync", "not-in-pod", "nvml"],
)  # fmt: skip
def test_console_script_refuses_bad_input(
    args: list[str], env: dict[str, str], message: str, tmp_path: Path
) -> None:
    sim = tmp_path / "sim.yaml"
    sim.write_text(yaml.safe_dump(H100X8))
    nvml = tmp_path / "nvml.yaml"
    nvml.write_text(yaml.safe_dump({"flags": {"migStrategy": "none"}}))
    args = [str(sim) if a == "CONFIG" else str(nvml) if a == "NVML" else a for a in args]
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_")}
    full_env.update(env)
    done = subprocess.run(
        [str(DRA_SCRIPT), *args], env=full_env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr


@pytest.mark.parametrize("uid", ["../../escape", "a/b", "/abs"])
def test_a_hostile_uid_stays_in_the_cdi_root(
    uid: str, driver: DraDriver, kubelet: DraKubelet, api: FakeApiServer, dirs: dict[str, Path]
) -> None:
    """The uid names the spec file: a ``/`` in it never leaves the CDI root (it must also match
    the claim's own UID, so the kubelet cannot be tricked into preparing another claim)."""
    plugin = kubelet.wait_for_plugin(DRIVER)
    hostile = claim("hostile", [("g", DRIVER, NODE, "gpu-2")])
    hostile["metadata"]["uid"] = uid
    api.add_claim(hostile)
    result = plugin.prepare([("default", uid, "hostile")]).claims[uid]
    assert result.error == ""
    written = sorted(p.name for p in dirs["cdi"].iterdir())
    assert written == [claims.spec_file(DRIVER, uid)]
    assert "/" not in written[0]
    assert plugin.unprepare([("default", uid, "hostile")]).claims[uid].error == ""
    assert list(dirs["cdi"].iterdir()) == []


def test_a_second_instance_refuses_to_start(
    api: FakeApiServer, driver: DraDriver, sockdir: Path
) -> None:
    """A second driver on the same sockets exits with one line; the first keeps serving."""
    config = sockdir / "config.yaml"
    config.write_text(yaml.safe_dump(H100X8))
    s = driver.settings
    done = subprocess.run(
        [str(DRA_SCRIPT), "--config-file", str(config), "--node-name", NODE,
         "--api-server", api.url, "--kubelet-registrar-directory-path", s.registry_dir,
         "--kubelet-plugins-directory-path", s.plugins_dir, "--cdi-root", s.cdi_root],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("gpustack-dra-plugin: another plugin")
    assert os.path.exists(s.registration_socket) and os.path.exists(s.dra_socket)
    with DraKubelet(s.registry_dir) as sim:
        assert sim.wait_for_plugin(DRIVER).info.name == DRIVER


def test_sighup_reloads_and_sigterm_removes_the_sockets(api: FakeApiServer, sockdir: Path) -> None:
    """SIGHUP killed the driver and left its sockets behind (issue #33): now it reloads the
    config as the device plugin does (unchanged: keeps serving; unusable: keeps the previous
    one, in one line; changed: serves and publishes the new GPUs), and SIGTERM still ends it
    with both sockets removed."""
    config = sockdir / "config.yaml"
    config.write_text(yaml.safe_dump(H100X8))
    token = sockdir / "token"
    token.write_text(api.token)
    registry, plugins, cdi_root = sockdir / "registry", sockdir / "plugins", sockdir / "cdi"
    env = {
        **os.environ,
        "NODE_NAME": NODE,
        "KUBELET_REGISTRAR_DIRECTORY_PATH": str(registry),
        "KUBELET_PLUGINS_DIRECTORY_PATH": str(plugins),
        "CDI_ROOT": str(cdi_root),
    }
    proc = subprocess.Popen(
        [str(DRA_SCRIPT), "--config-file", str(config), "--api-server", api.url,
         "--token-file", str(token), "--resync-seconds", "0.2"],
        env=env, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    reg_socket = registry / f"{DRIVER}-reg.sock"
    dra_socket = plugins / DRIVER / "dra.sock"

    def devices() -> int:
        return sum(len(s["spec"].get("devices", [])) for s in api.slices.values())

    try:
        with DraKubelet(str(registry)) as sim:
            sim.wait_for_plugin(DRIVER, timeout=20)
            wait_until(lambda: devices() == 8, timeout=20)
            proc.send_signal(signal.SIGHUP)  # unchanged
            config.write_text("gpustack: [\n")
            proc.send_signal(signal.SIGHUP)  # unusable
            time.sleep(1.0)
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert reg_socket.exists() and dra_socket.exists()
            two = {
                "gpustack": {
                    **H100X8["gpustack"],
                    "simulated": {"gpus": [{"index": 0}, {"index": 1}]},
                }
            }
            config.write_text(yaml.safe_dump(two))
            proc.send_signal(signal.SIGHUP)  # changed
            wait_until(lambda: devices() == 2, timeout=20)
            assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "reload failed, keeping the previous configuration" in err, err
    assert "configuration changed: 2 GPUs" in err, err
    assert not reg_socket.exists() and not dra_socket.exists()
