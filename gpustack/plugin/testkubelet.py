"""A stand-in kubelet for testing device plugins over real gRPC on unix sockets.

``KubeletSimulator`` serves ``Registration`` on ``<socket_dir>/kubelet.sock`` like the kubelet,
then dials each registered plugin, follows its ListAndWatch stream and offers Allocate and
GetPreferredAllocation calls. ``restart()`` behaves like a restarting kubelet: it deletes every
socket in the directory and creates a fresh ``kubelet.sock``.

CLI (used by the image test and scripts/real-gpu-check.sh; keep it stable)::

    python -m gpustack.plugin.testkubelet --socket-dir D [--resource nvidia.com/gpu]
        [--allocate N] [--timeout S]

waits for the plugin to register ``--resource``, reads its first device list, allocates N healthy
devices and prints one JSON object ``{registered, devices, allocate_response}``; exit 1 with a
message on stderr when anything times out or fails.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict

from gpustack.plugin.server import CHANNEL_OPTIONS, serve_unix
from gpustack.plugin.v1beta1 import api_pb2, api_pb2_grpc

KUBELET_SOCKET = "kubelet.sock"
SUPPORTED_VERSIONS = ("v1beta1",)


@dataclass(frozen=True)
class Registration:
    """One accepted Register call."""

    resource: str
    endpoint: str
    version: str
    options: api_pb2.DevicePluginOptions
    #: ``time.monotonic()`` when the kubelet accepted it.
    at: float

    def to_json(self) -> dict[str, Any]:
        return {
            "resource": self.resource,
            "endpoint": self.endpoint,
            "version": self.version,
            "options": MessageToDict(
                self.options,
                preserving_proto_field_name=True,
                always_print_fields_with_no_presence=True,
            ),
        }


class PluginConnection:
    """The simulated kubelet's client of one registered plugin endpoint."""

    def __init__(self, socket_path: str, registration: Registration) -> None:
        self.registration = registration
        self._channel = grpc.insecure_channel(f"unix:{socket_path}", options=CHANNEL_OPTIONS)
        self.stub: Any = api_pb2_grpc.DevicePluginStub(self._channel)  # type: ignore[no-untyped-call]
        self._cond = threading.Condition()
        self.devices: list[api_pb2.Device] = []
        #: Every list received, oldest first.
        self.history: list[list[api_pb2.Device]] = []
        self.closed = False
        self.error: str | None = None
        self._stream: Any = None
        self._thread = threading.Thread(target=self._follow, name="list-and-watch", daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        try:
            self._stream = self.stub.ListAndWatch(api_pb2.Empty(), wait_for_ready=True)
            for response in self._stream:
                with self._cond:
                    self.devices = list(response.devices)
                    self.history.append(self.devices)
                    self._cond.notify_all()
        except grpc.RpcError as exc:
            self.error = str(exc.details()) if isinstance(exc, grpc.Call) else str(exc)
        finally:
            with self._cond:
                self.closed = True
                self._cond.notify_all()

    def wait_for(
        self, predicate: Callable[[list[api_pb2.Device]], bool], timeout: float = 5.0
    ) -> list[api_pb2.Device]:
        """Wait until ``predicate(latest device list)`` holds; raises ``TimeoutError``."""
        with self._cond:
            ok = self._cond.wait_for(
                lambda: bool(self.history) and predicate(self.devices), timeout
            )
            if not ok:
                raise TimeoutError(
                    f"{self.registration.resource}: condition not met within {timeout} s; "
                    f"latest list: {[(d.ID, d.health) for d in self.devices]}"
                )
            return list(self.devices)

    def health(self) -> dict[str, str]:
        with self._cond:
            return {d.ID: d.health for d in self.devices}

    def close(self) -> None:
        if self._stream is not None:
            self._stream.cancel()
        self._channel.close()
        self._thread.join(timeout=5)


class _RegistrationService(api_pb2_grpc.RegistrationServicer):
    def __init__(self, kubelet: KubeletSimulator) -> None:
        self.kubelet = kubelet

    def Register(
        self, request: api_pb2.RegisterRequest, context: grpc.ServicerContext
    ) -> api_pb2.Empty:
        if request.version not in SUPPORTED_VERSIONS:
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"unsupported device plugin API version {request.version!r}",
            )
        endpoint = os.path.join(self.kubelet.socket_dir, request.endpoint)
        if not os.path.exists(endpoint):
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"no socket at {endpoint}")
        options = api_pb2.DevicePluginOptions()
        options.CopyFrom(request.options)
        self.kubelet._accept(
            Registration(
                resource=request.resource_name,
                endpoint=request.endpoint,
                version=request.version,
                options=options,
                at=time.monotonic(),
            )
        )
        return api_pb2.Empty()


class KubeletSimulator:
    """Registration server plus device plugin clients, all over unix sockets in ``socket_dir``."""

    def __init__(self, socket_dir: str) -> None:
        self.socket_dir = socket_dir
        self.socket_path = os.path.join(socket_dir, KUBELET_SOCKET)
        self.registrations: list[Registration] = []
        self._plugins: dict[str, PluginConnection] = {}
        self._cond = threading.Condition()
        self._server: grpc.Server | None = None

    def __enter__(self) -> KubeletSimulator:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        os.makedirs(self.socket_dir, exist_ok=True)
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        api_pb2_grpc.add_RegistrationServicer_to_server(  # type: ignore[no-untyped-call]
            _RegistrationService(self), server
        )
        serve_unix(server, self.socket_path)
        self._server = server

    def stop(self) -> None:
        """Stop serving and drop plugin connections (sockets stay, as when a kubelet dies)."""
        if self._server is not None:
            self._server.stop(grace=0).wait()
            self._server = None
        with self._cond:
            plugins, self._plugins = list(self._plugins.values()), {}
        for plugin in plugins:
            plugin.close()

    def restart(self) -> float:
        """Act like a kubelet restart; returns ``time.monotonic()`` of the new kubelet.sock."""
        self.stop()
        for name in os.listdir(self.socket_dir):
            path = os.path.join(self.socket_dir, name)
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                os.unlink(path)
        self.start()
        return time.monotonic()

    def _accept(self, registration: Registration) -> None:
        connection = PluginConnection(
            os.path.join(self.socket_dir, registration.endpoint), registration
        )
        with self._cond:
            old = self._plugins.get(registration.resource)
            self._plugins[registration.resource] = connection
            self.registrations.append(registration)
            self._cond.notify_all()
        if old is not None:
            threading.Thread(target=old.close, daemon=True).start()

    def wait_for_registration(
        self, resource: str, timeout: float = 10.0, after: float = 0.0
    ) -> Registration:
        """The first registration of ``resource`` accepted at or after ``after``."""

        def found() -> Registration | None:
            for reg in self.registrations:
                if reg.resource == resource and reg.at >= after:
                    return reg
            return None

        with self._cond:
            if not self._cond.wait_for(lambda: found() is not None, timeout):
                seen = sorted({r.resource for r in self.registrations})
                raise TimeoutError(
                    f"no registration of {resource} within {timeout} s "
                    f"(registered: {', '.join(seen) or 'none'})"
                )
            reg = found()
            assert reg is not None
            return reg

    def plugin(self, resource: str) -> PluginConnection:
        with self._cond:
            if resource not in self._plugins:
                raise KeyError(f"{resource} is not registered")
            return self._plugins[resource]

    def resources(self) -> list[str]:
        with self._cond:
            return sorted(self._plugins)

    def list_and_watch(self, resource: str, timeout: float = 5.0) -> list[api_pb2.Device]:
        """The latest device list of ``resource`` (waits for the first one)."""
        return self.plugin(resource).wait_for(lambda devices: True, timeout)

    def options(self, resource: str) -> api_pb2.DevicePluginOptions:
        options: api_pb2.DevicePluginOptions = self.plugin(resource).stub.GetDevicePluginOptions(
            api_pb2.Empty(), timeout=5
        )
        return options

    def allocate(
        self, resource: str, *containers: Sequence[str], timeout: float = 5.0
    ) -> api_pb2.AllocateResponse:
        """Allocate one container per ID list; raises ``grpc.RpcError`` on rejection."""
        request = api_pb2.AllocateRequest(
            container_requests=[
                api_pb2.ContainerAllocateRequest(devices_ids=ids) for ids in containers
            ]
        )
        response: api_pb2.AllocateResponse = self.plugin(resource).stub.Allocate(
            request, timeout=timeout
        )
        return response

    def preferred(
        self,
        resource: str,
        available: Sequence[str],
        must_include: Sequence[str] = (),
        size: int = 1,
        timeout: float = 5.0,
    ) -> list[str]:
        request = api_pb2.PreferredAllocationRequest(
            container_requests=[
                api_pb2.ContainerPreferredAllocationRequest(
                    available_deviceIDs=available,
                    must_include_deviceIDs=must_include,
                    allocation_size=size,
                )
            ]
        )
        response = self.plugin(resource).stub.GetPreferredAllocation(request, timeout=timeout)
        return list(response.container_responses[0].deviceIDs)


def _device_json(device: api_pb2.Device) -> dict[str, Any]:
    return {
        "id": device.ID,
        "health": device.health,
        "numa_nodes": [n.ID for n in device.topology.nodes],
    }


def run_cli(socket_dir: str, resource: str, count: int, timeout: float) -> dict[str, Any]:
    """What the CLI prints; raises ``TimeoutError``/``RuntimeError`` with a clear message."""
    deadline = time.monotonic() + timeout
    with KubeletSimulator(socket_dir) as kubelet:
        try:
            registration = kubelet.wait_for_registration(resource, timeout)
            devices = kubelet.list_and_watch(resource, max(0.1, deadline - time.monotonic()))
            allocated: dict[str, Any] | None = None
            if count > 0:
                healthy = [d.ID for d in devices if d.health == "Healthy"]
                if len(healthy) < count:
                    raise RuntimeError(
                        f"{resource} has {len(healthy)} healthy devices, {count} requested"
                    )
                response = kubelet.allocate(resource, healthy[:count])
                allocated = MessageToDict(
                    response.container_responses[0], preserving_proto_field_name=True
                )
            return {
                "registered": registration.to_json(),
                "devices": [_device_json(d) for d in devices],
                "allocate_response": allocated,
            }
        finally:
            if os.path.lexists(kubelet.socket_path):
                os.unlink(kubelet.socket_path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gpustack.plugin.testkubelet",
        description="Stand-in kubelet: wait for a device plugin, list and allocate, print JSON.",
    )
    parser.add_argument("--socket-dir", required=True, help="directory for kubelet.sock")
    parser.add_argument("--resource", default="nvidia.com/gpu", help="resource to wait for")
    parser.add_argument("--allocate", type=int, default=1, metavar="N", help="devices to allocate")
    parser.add_argument("--timeout", type=float, default=30.0, metavar="S", help="seconds to wait")
    args = parser.parse_args(argv)
    if args.allocate < 0:
        parser.error("--allocate must be >= 0")
    try:
        result = run_cli(args.socket_dir, args.resource, args.allocate, args.timeout)
    except (TimeoutError, RuntimeError) as exc:
        print(f"testkubelet: {exc}", file=sys.stderr)
        return 1
    except grpc.RpcError as exc:
        detail = exc.details() if isinstance(exc, grpc.Call) else str(exc)
        print(f"testkubelet: plugin call failed: {detail}", file=sys.stderr)
        return 1
    print(json.dumps(result, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
