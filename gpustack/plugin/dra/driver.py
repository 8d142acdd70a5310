"""The simulated DRA driver's kubelet plugin: two gRPC servers and the slice publisher.

Sockets (the layout of k8s.io/dynamic-resource-allocation/kubeletplugin, see
:mod:`gpustack.plugin.dra.upstream`): the DRAPlugin service on
``<plugins dir>/<driver>/dra.sock``, bound first, then the Registration service on
``<registry dir>/<driver>-reg.sock``, which the kubelet's plugin watcher finds. GetInfo answers
type ``DRAPlugin``, the driver name, the dra.sock path and ``v1.DRAPlugin``. Stopping removes the
registration socket first, so the kubelet deregisters the plugin.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent import futures
from dataclasses import dataclass
from typing import Any, Final

import grpc
from google.protobuf.message import Message

from gpustack import dra_upstream as upstream
from gpustack.plugin.devices import Gpu
from gpustack.plugin.dra import claims, slices
from gpustack.plugin.dra.kubeapi import ApiError, KubeClient
from gpustack.plugin.dra.pluginregistration import api_pb2 as reg_pb2
from gpustack.plugin.dra.pluginregistration import api_pb2_grpc as reg_grpc
from gpustack.plugin.dra.publisher import Publisher
from gpustack.plugin.dra.v1 import api_pb2 as dra_pb2
from gpustack.plugin.dra.v1 import api_pb2_grpc as dra_grpc
from gpustack.plugin.server import SocketBusyError, serve_unix, socket_in_use

log = logging.getLogger("gpustack.plugin.dra")

MAX_WORKERS: Final = 8
DEFAULT_RESYNC_S: Final = 30.0


@dataclass(frozen=True)
class DriverSettings:
    driver: str
    node_name: str
    registry_dir: str = upstream.KUBELET_REGISTRY_DIR
    plugins_dir: str = upstream.KUBELET_PLUGINS_DIR
    cdi_root: str = "/var/run/cdi"
    node: slices.NodeDriver = slices.NodeDriver()
    resync_s: float = DEFAULT_RESYNC_S

    @property
    def dra_socket(self) -> str:
        return os.path.join(self.plugins_dir, self.driver, upstream.DRA_SOCKET)

    @property
    def registration_socket(self) -> str:
        return os.path.join(
            self.registry_dir, upstream.REGISTRATION_SOCKET.format(driver=self.driver)
        )


class _Registration(reg_grpc.RegistrationServicer):
    def __init__(self, driver: DraDriver) -> None:
        self.driver = driver

    def GetInfo(
        self, request: reg_pb2.InfoRequest, context: grpc.ServicerContext
    ) -> reg_pb2.PluginInfo:
        s = self.driver.settings
        return reg_pb2.PluginInfo(
            type=upstream.PLUGIN_TYPE,
            name=s.driver,
            endpoint=s.dra_socket,
            supported_versions=[upstream.DRA_SERVICE_V1],
        )

    def NotifyRegistrationStatus(
        self, request: reg_pb2.RegistrationStatus, context: grpc.ServicerContext
    ) -> reg_pb2.RegistrationStatusResponse:
        with self.driver._lock:
            self.driver.registration_status = (request.plugin_registered, request.error)
        if request.plugin_registered:
            log.info("registered with the kubelet as %s", self.driver.settings.driver)
        else:
            log.error("the kubelet refused the registration: %s", request.error)
        return reg_pb2.RegistrationStatusResponse()


class _DraPlugin(dra_grpc.DRAPluginServicer):
    def __init__(self, driver: DraDriver) -> None:
        self.driver = driver

    def NodePrepareResources(
        self, request: dra_pb2.NodePrepareResourcesRequest, context: grpc.ServicerContext
    ) -> dra_pb2.NodePrepareResourcesResponse:
        response = dra_pb2.NodePrepareResourcesResponse()
        _answer_each(response.claims, request.claims, self.driver.prepare)
        return response

    def NodeUnprepareResources(
        self, request: dra_pb2.NodeUnprepareResourcesRequest, context: grpc.ServicerContext
    ) -> dra_pb2.NodeUnprepareResourcesResponse:
        response = dra_pb2.NodeUnprepareResourcesResponse()
        _answer_each(response.claims, request.claims, self.driver.unprepare)
        return response


def _answer_each(
    answers: Any, claims: Iterable[dra_pb2.Claim], answer: Callable[[dra_pb2.Claim], Message]
) -> None:
    """Answer each claim of a request on its own, under its UID (the kubelet reads one answer per
    claim: one claim's failure is that claim's error, never the whole call's)."""
    for claim in claims:
        answers[claim.uid].CopyFrom(answer(claim))


class DraDriver:
    """Serve, register, publish; ``stop()`` undoes all but the published slice."""

    def __init__(self, settings: DriverSettings, client: KubeClient, gpus: Sequence[Gpu]) -> None:
        self.settings = settings
        self.client = client
        self.gpus = {slices.device_name(g): g for g in slices.published(gpus)}
        self.publisher = Publisher(client, settings.driver, settings.node_name, gpus, settings.node)
        self.registration_status: tuple[bool, str] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._servers: list[grpc.Server] = []
        #: Sockets this instance bound (only these are removed on stop).
        self._bound: list[str] = []
        self._thread: threading.Thread | None = None
        left_out = [g.index for g in gpus if g.mig_enabled]
        if left_out:
            log.warning("MIG-enabled GPUs %s are not published (MIG is not simulated)", left_out)

    def start(self) -> None:
        """Bind and serve; raises ``SocketBusyError`` when another instance answers on either
        socket (replacing its sockets would leave the kubelet talking to two drivers)."""
        s = self.settings
        for path in (s.dra_socket, s.registration_socket):
            if socket_in_use(path):
                raise SocketBusyError(f"another plugin serves {path}; stop it first")
        os.makedirs(os.path.dirname(s.dra_socket), exist_ok=True)
        os.makedirs(s.registry_dir, exist_ok=True)
        os.makedirs(s.cdi_root, exist_ok=True)
        dra = grpc.server(futures.ThreadPoolExecutor(max_workers=MAX_WORKERS))
        dra_grpc.add_DRAPluginServicer_to_server(_DraPlugin(self), dra)  # type: ignore[no-untyped-call]
        serve_unix(dra, s.dra_socket)
        self._servers.append(dra)
        self._bound.append(s.dra_socket)
        reg = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        reg_grpc.add_RegistrationServicer_to_server(_Registration(self), reg)  # type: ignore[no-untyped-call]
        serve_unix(reg, s.registration_socket)
        self._servers.append(reg)
        self._bound.append(s.registration_socket)
        log.info(
            "serving %s on %s, registration on %s", s.driver, s.dra_socket, s.registration_socket
        )
        self._thread = threading.Thread(target=self._publish_loop, name="publish", daemon=True)
        self._thread.start()

    def _publish_loop(self) -> None:
        while True:
            try:
                outcome = self.publisher.sync()
                log.debug("ResourceSlice sync: %s", outcome)
            except ApiError as exc:
                log.error("publishing ResourceSlices failed: %s; retrying", exc)
            if self._stop.wait(self.settings.resync_s):
                return

    def stop(self) -> None:
        self._stop.set()
        for path in reversed(self._bound):  # registration first: the kubelet deregisters
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        self._bound.clear()
        for server in reversed(self._servers):
            server.stop(grace=1).wait()
        self._servers.clear()
        if self._thread is not None:
            self._thread.join(timeout=15)

    # --- DRAPlugin -------------------------------------------------------------------------
    def prepare(self, claim: dra_pb2.Claim) -> dra_pb2.NodePrepareResourceResponse:
        s = self.settings
        where = f"{claim.namespace}/{claim.name}"
        try:
            obj = self.client.get_claim(claim.namespace, claim.name)
            ours = claims.our_devices(obj, claim.uid, s.driver, s.node_name, self.gpus)
            with self._lock:
                prepared = claims.prepare(s.cdi_root, s.driver, s.node_name, claim.uid, ours)
        except ApiError as exc:
            return dra_pb2.NodePrepareResourceResponse(error=f"retrieve claim {where}: {exc}")
        except (claims.ClaimError, OSError) as exc:
            return dra_pb2.NodePrepareResourceResponse(error=str(exc))
        log.info("prepared claim %s: %s", where, [p.device for p in prepared])
        return dra_pb2.NodePrepareResourceResponse(
            devices=[
                dra_pb2.Device(
                    request_names=list(p.requests),
                    pool_name=p.pool,
                    device_name=p.device,
                    cdi_device_ids=[p.cdi_id],
                )
                for p in prepared
            ]
        )

    def unprepare(self, claim: dra_pb2.Claim) -> dra_pb2.NodeUnprepareResourceResponse:
        try:
            with self._lock:
                claims.unprepare(self.settings.cdi_root, self.settings.driver, claim.uid)
        except OSError as exc:
            return dra_pb2.NodeUnprepareResourceResponse(error=str(exc))
        log.info("unprepared claim %s/%s", claim.namespace, claim.name)
        return dra_pb2.NodeUnprepareResourceResponse()
