"""One gRPC DevicePlugin server per advertised resource, and its registration with the kubelet.

The kubelet requires the plugin to serve on its socket before it registers, and dials that
socket right after ``Register``; ``PluginServer.start`` therefore binds synchronously and
``register`` is a separate step the manager retries.
"""

from __future__ import annotations

import itertools
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator
from concurrent import futures

import grpc

from gpustack.plugin.allocate import (
    AllocateSettings,
    AllocationError,
    container_response,
    preferred_allocation,
)
from gpustack.plugin.health import HealthState
from gpustack.plugin.resources import Resource
from gpustack.plugin.v1beta1 import api_pb2, api_pb2_grpc

log = logging.getLogger("gpustack.plugin")

API_VERSION = "v1beta1"
#: ListAndWatch streams one resource serves at once. Each holds a worker thread for its whole
#: life; the kubelet opens one, so the rest is headroom for a restarting kubelet and a debugging
#: client. Past it a stream is refused with RESOURCE_EXHAUSTED, so idle streams (a hostile or
#: broken peer on the node) can never take the threads that Allocate needs.
MAX_STREAMS = 4
#: Worker threads per server: up to MAX_STREAMS held by streams, the rest for unary calls.
MAX_WORKERS = 16
REGISTER_TIMEOUT_S = 1.0
#: A private subchannel per channel: a shared one may still be backing off from a kubelet
#: that just went away, which would delay registering with its successor.
CHANNEL_OPTIONS = (("grpc.use_local_subchannel_pool", 1),)
#: How often an idle ListAndWatch stream re-checks whether it should end.
STREAM_POLL_S = 0.5


def serve_unix(server: grpc.Server, path: str) -> int:
    """Start ``server`` on unix socket ``path``; returns the socket's inode.

    gRPC unlinks a unix socket by *path* when the server is torn down, which can happen after
    ``stop().wait()`` returns; binding a unique temporary name and renaming it into place means
    that late unlink can never remove a successor's socket at ``path``.
    """
    tmp = f"{path}.{os.getpid()}.{next(_BIND_COUNTER)}"
    server.add_insecure_port(f"unix:{tmp}")
    server.start()
    os.replace(tmp, path)
    return os.stat(path).st_ino


_BIND_COUNTER = itertools.count()


class SocketBusyError(RuntimeError):
    """Another live server (a second plugin instance) answers on the socket path."""


def socket_in_use(path: str) -> bool:
    """Whether something accepts connections on unix socket ``path`` (a stale file does not)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(REGISTER_TIMEOUT_S)
    try:
        probe.connect(path)
    except OSError:
        return False
    finally:
        probe.close()
    return True


class DevicePluginService(api_pb2_grpc.DevicePluginServicer):
    """The kubelet-facing API for one resource."""

    def __init__(
        self,
        resource: Resource,
        health: HealthState,
        settings: AllocateSettings,
        stopping: threading.Event,
    ) -> None:
        self.resource = resource
        self.health = health
        self.settings = settings
        self.stopping = stopping
        self._streams = threading.BoundedSemaphore(MAX_STREAMS)
        self._lock = threading.Lock()
        #: Whether a refusal was logged since the streams were last below the limit.
        self._refusal_logged = False

    def _open_stream(self) -> Callable[[], None] | None:
        """Take a stream slot; returns its release (safe to call twice), or ``None`` if full."""
        if not self._streams.acquire(blocking=False):
            with self._lock:
                first, self._refusal_logged = not self._refusal_logged, True
            if first:  # one line per burst: a peer retrying in a loop must not flood the log
                log.warning(
                    "%d ListAndWatch streams are open for %s; refusing more until one closes",
                    MAX_STREAMS,
                    self.resource.name,
                )
            return None
        released = False

        def release() -> None:
            nonlocal released
            with self._lock:
                if released:
                    return
                released = True
                self._refusal_logged = False
            self._streams.release()

        return release

    def devices(self, unhealthy: frozenset[str]) -> list[api_pb2.Device]:
        devices = []
        for device_id, unit in self.resource.by_id.items():
            device = api_pb2.Device(
                ID=device_id, health="Unhealthy" if unit.uuid in unhealthy else "Healthy"
            )
            if unit.numa_node is not None:
                device.topology.nodes.append(api_pb2.NUMANode(ID=unit.numa_node))
            devices.append(device)
        return devices

    def GetDevicePluginOptions(
        self, request: api_pb2.Empty, context: grpc.ServicerContext
    ) -> api_pb2.DevicePluginOptions:
        return api_pb2.DevicePluginOptions(
            pre_start_required=False, get_preferred_allocation_available=True
        )

    def ListAndWatch(
        self, request: api_pb2.Empty, context: grpc.ServicerContext
    ) -> Iterator[api_pb2.ListAndWatchResponse]:
        release = self._open_stream()
        if release is None:
            context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{MAX_STREAMS} ListAndWatch streams are already open for {self.resource.name}; "
                "close one first",
            )
        # The RPC's end releases the slot even if gRPC drops this generator without closing it.
        if not context.add_callback(release):
            release()
            return
        try:
            yield from self._watch(context)
        finally:
            release()

    def _watch(self, context: grpc.ServicerContext) -> Iterator[api_pb2.ListAndWatchResponse]:
        context.add_callback(self.health.wake)
        seen = -1
        last: list[api_pb2.Device] | None = None
        while not self.stopping.is_set() and context.is_active() and not self.health.closed:
            generation, unhealthy = self.health.snapshot()
            if generation != seen:
                seen = generation
                devices = self.devices(unhealthy)
                if devices != last:
                    last = devices
                    bad = sum(d.health != "Healthy" for d in devices)
                    log.info(
                        "ListAndWatch %s: sending %d devices (%d unhealthy)",
                        self.resource.name,
                        len(devices),
                        bad,
                    )
                    yield api_pb2.ListAndWatchResponse(devices=devices)
            self.health.wait_for_change(seen, STREAM_POLL_S)

    def GetPreferredAllocation(
        self, request: api_pb2.PreferredAllocationRequest, context: grpc.ServicerContext
    ) -> api_pb2.PreferredAllocationResponse:
        response = api_pb2.PreferredAllocationResponse()
        for req in request.container_requests:
            try:
                ids = preferred_allocation(
                    self.resource,
                    list(req.available_deviceIDs),
                    list(req.must_include_deviceIDs),
                    req.allocation_size,
                    self.settings.allocation_policy,
                )
            except AllocationError as exc:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            response.container_responses.append(
                api_pb2.ContainerPreferredAllocationResponse(deviceIDs=ids)
            )
        return response

    def Allocate(
        self, request: api_pb2.AllocateRequest, context: grpc.ServicerContext
    ) -> api_pb2.AllocateResponse:
        response = api_pb2.AllocateResponse()
        for req in request.container_requests:
            try:
                resp = container_response(
                    self.resource, self.settings, list(req.devices_ids), self.health.health
                )
            except AllocationError as exc:
                log.warning("Allocate %s rejected: %s", self.resource.name, exc)
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
            response.container_responses.append(resp)
        return response

    def PreStartContainer(
        self, request: api_pb2.PreStartContainerRequest, context: grpc.ServicerContext
    ) -> api_pb2.PreStartContainerResponse:
        return api_pb2.PreStartContainerResponse()


#: Room in a request for what is not a device ID (field tags, sizes, a pod's annotations).
_REQUEST_SLACK = 64 << 10


def max_request_bytes(resource: Resource) -> int:
    """The largest request the kubelet can send this resource: each advertised ID at most once
    in each of a request's two lists (it keeps them in sets; kubernetes
    pkg/kubelet/cm/devicemanager/manager.go). gRPC refuses a larger message before it is
    decoded, in its C core: a 4 MB request from a hostile client held the Python interpreter
    for its decoding, and delayed the kubelet's Allocate (issue #33)."""
    ids = sum(len(i.encode()) + 8 for i in resource.by_id)
    return 2 * ids + _REQUEST_SLACK


class PluginServer:
    """A DevicePlugin gRPC server on ``<socket_dir>/<resource socket name>``."""

    def __init__(
        self,
        resource: Resource,
        health: HealthState,
        settings: AllocateSettings,
        socket_dir: str,
    ) -> None:
        self.resource = resource
        self.socket_path = os.path.join(socket_dir, resource.socket_name)
        self._stopping = threading.Event()
        self._service = DevicePluginService(resource, health, settings, self._stopping)
        self._server: grpc.Server | None = None
        self._inode: int | None = None

    def start(self) -> None:
        """Bind and serve, replacing a stale socket but never a live one.

        Taking over a live socket would make two instances replace each other's socket and
        re-register forever; raises ``SocketBusyError`` instead.
        """
        if socket_in_use(self.socket_path):
            raise SocketBusyError(
                f"{self.socket_path} is served by another running device plugin; stop it "
                "first (one plugin per node and socket directory)"
            )
        self._stopping.clear()
        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=MAX_WORKERS),
            options=[("grpc.max_receive_message_length", max_request_bytes(self.resource))],
        )
        api_pb2_grpc.add_DevicePluginServicer_to_server(  # type: ignore[no-untyped-call]
            self._service, server
        )
        try:
            self._inode = serve_unix(server, self.socket_path)
        except BaseException:
            server.stop(grace=0)  # its threads would outlive this failed start
            raise
        self._server = server
        log.info(
            "serving %s (%d devices) on %s",
            self.resource.name,
            len(self.resource.by_id),
            self.socket_path,
        )

    @property
    def serving(self) -> bool:
        return self._server is not None

    def socket_intact(self) -> bool:
        """False once someone (a restarting kubelet) deleted or replaced our socket, or the
        folder it was in (a file in its place: ``NotADirectoryError``)."""
        if self._inode is None:
            return False
        try:
            return os.stat(self.socket_path).st_ino == self._inode
        except OSError:
            return False

    def stop(self) -> None:
        """End streams, stop serving and remove our socket (if it is still ours)."""
        self._stopping.set()
        self._service.health.wake()
        if self._server is not None:
            self._server.stop(grace=0.2).wait()
            self._server = None
        if self.socket_intact():
            os.unlink(self.socket_path)
        self._inode = None

    def register(self, kubelet_socket: str) -> None:
        """Register with the kubelet; raises ``grpc.RpcError`` or ``TimeoutError``."""
        # A stale kubelet.sock refuses at once; gRPC would keep retrying until the timeout.
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(REGISTER_TIMEOUT_S)
        try:
            probe.connect(kubelet_socket)
        except OSError as exc:
            raise TimeoutError(f"kubelet socket {kubelet_socket}: {exc.strerror or exc}") from None
        finally:
            probe.close()
        # wait_for_ready instead of channel_ready_future: the latter's connectivity poller makes
        # closing the channel take 200 ms, which adds up over one registration per resource.
        with grpc.insecure_channel(f"unix:{kubelet_socket}", options=CHANNEL_OPTIONS) as channel:
            stub = api_pb2_grpc.RegistrationStub(channel)  # type: ignore[no-untyped-call]
            try:
                stub.Register(
                    api_pb2.RegisterRequest(
                        version=API_VERSION,
                        endpoint=os.path.basename(self.socket_path),
                        resource_name=self.resource.name,
                        options=api_pb2.DevicePluginOptions(
                            pre_start_required=False, get_preferred_allocation_available=True
                        ),
                    ),
                    timeout=REGISTER_TIMEOUT_S,
                    wait_for_ready=True,
                )
            except grpc.RpcError as exc:
                if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                    raise TimeoutError(
                        f"kubelet socket {kubelet_socket} is not answering"
                    ) from None
                raise
        log.info("registered %s with the kubelet at %s", self.resource.name, kubelet_socket)
