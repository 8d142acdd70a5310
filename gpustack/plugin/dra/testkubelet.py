"""A stand-in kubelet for DRA plugins: plugin watcher, registration and DRAPlugin calls.

The DRA counterpart of :class:`gpustack.plugin.testkubelet.KubeletSimulator`, doing what the
kubelet does (pkg/kubelet/pluginmanager and cm/dra/plugin, see
:mod:`gpustack.plugin.dra.upstream`): it watches the registry folder for unix sockets (names
starting with ``.`` ignored), dials each new one, calls ``GetInfo`` (1 s), refuses a plugin
whose type is not ``DRAPlugin`` or that offers no service it knows (``v1.DRAPlugin``,
``v1beta1.DRAPlugin``; v1 is the one implemented here), uses the registration socket when the
endpoint is empty, answers with ``NotifyRegistrationStatus`` and then calls
``NodePrepareResources``/``NodeUnprepareResources`` on the endpoint, all over real gRPC.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from gpustack import dra_upstream as upstream
from gpustack.plugin.dra.pluginregistration import api_pb2 as reg_pb2
from gpustack.plugin.dra.pluginregistration import api_pb2_grpc as reg_grpc
from gpustack.plugin.dra.v1 import api_pb2 as dra_pb2
from gpustack.plugin.dra.v1 import api_pb2_grpc as dra_grpc
from gpustack.plugin.server import CHANNEL_OPTIONS

KNOWN_SERVICES = (upstream.DRA_SERVICE_V1, upstream.DRA_SERVICE_V1BETA1)
GET_INFO_TIMEOUT_S = 1.0
NOTIFY_TIMEOUT_S = 5.0


class RegistrationRefused(RuntimeError):
    """The kubelet would not register this plugin; the message is what it notified."""


def _claims(claims: Sequence[tuple[str, str, str]]) -> list[dra_pb2.Claim]:
    """The request's claims, from (namespace, uid, name)."""
    return [dra_pb2.Claim(namespace=ns, uid=uid, name=name) for ns, uid, name in claims]


@dataclass
class DraPluginConnection:
    """A registered DRA plugin and the client for its endpoint."""

    socket: str
    info: reg_pb2.PluginInfo
    service: str
    channel: grpc.Channel
    stub: Any = field(repr=False)

    def prepare(
        self, claims: Sequence[tuple[str, str, str]], timeout: float = 10.0
    ) -> dra_pb2.NodePrepareResourcesResponse:
        """``claims`` as (namespace, uid, name)."""
        request = dra_pb2.NodePrepareResourcesRequest(claims=_claims(claims))
        response: dra_pb2.NodePrepareResourcesResponse = self.stub.NodePrepareResources(
            request, timeout=timeout
        )
        return response

    def unprepare(
        self, claims: Sequence[tuple[str, str, str]], timeout: float = 10.0
    ) -> dra_pb2.NodeUnprepareResourcesResponse:
        """``claims`` as (namespace, uid, name)."""
        request = dra_pb2.NodeUnprepareResourcesRequest(claims=_claims(claims))
        response: dra_pb2.NodeUnprepareResourcesResponse = self.stub.NodeUnprepareResources(
            request, timeout=timeout
        )
        return response

    def close(self) -> None:
        self.channel.close()


class DraKubelet:
    """Registers DRA plugins found in ``registry_dir``."""

    def __init__(self, registry_dir: str) -> None:
        self.registry_dir = registry_dir
        self.plugins: dict[str, DraPluginConnection] = {}
        #: (socket, error) of every refused registration.
        self.refused: list[tuple[str, str]] = []
        self._seen: set[str] = set()
        os.makedirs(registry_dir, exist_ok=True)

    def __enter__(self) -> DraKubelet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for plugin in self.plugins.values():
            plugin.close()
        self.plugins.clear()

    def _sockets(self) -> list[str]:
        found = []
        for name in sorted(os.listdir(self.registry_dir)):
            path = os.path.join(self.registry_dir, name)
            if name.startswith("."):
                continue
            try:
                if stat.S_ISSOCK(os.lstat(path).st_mode):
                    found.append(path)
            except FileNotFoundError:
                continue
        return found

    def register(self, socket: str) -> DraPluginConnection:
        """Do the plugin watcher's registration of ``socket``; raises :class:`RegistrationRefused`
        (after notifying the plugin) or ``grpc.RpcError``."""
        with grpc.insecure_channel(f"unix:{socket}", options=CHANNEL_OPTIONS) as channel:
            client: Any = reg_grpc.RegistrationStub(channel)  # type: ignore[no-untyped-call]
            info: reg_pb2.PluginInfo = client.GetInfo(
                reg_pb2.InfoRequest(), timeout=GET_INFO_TIMEOUT_S, wait_for_ready=True
            )
            endpoint = info.endpoint or socket
            problem = ""
            service = next((s for s in info.supported_versions if s in KNOWN_SERVICES), "")
            if info.type != upstream.PLUGIN_TYPE:
                problem = f"no handler registered for plugin type: {info.type}"
            elif not info.supported_versions:
                problem = "empty list of supported gRPC services (aka supported versions)"
            elif service != upstream.DRA_SERVICE_V1:
                problem = (
                    f"none of services supported by the plugin ({list(info.supported_versions)}) "
                    f"are supported by the kubelet ({[upstream.DRA_SERVICE_V1]})"
                )
            elif info.name in self.plugins and self.plugins[info.name].socket == endpoint:
                problem = f"endpoint {endpoint} already registered for DRA driver {info.name}"
            client.NotifyRegistrationStatus(
                reg_pb2.RegistrationStatus(plugin_registered=not problem, error=problem),
                timeout=NOTIFY_TIMEOUT_S,
            )
        if problem:
            self.refused.append((socket, problem))
            raise RegistrationRefused(problem)
        channel = grpc.insecure_channel(f"unix:{endpoint}", options=CHANNEL_OPTIONS)
        connection = DraPluginConnection(
            socket=endpoint,
            info=info,
            service=service,
            channel=channel,
            stub=dra_grpc.DRAPluginStub(channel),  # type: ignore[no-untyped-call]
        )
        old = self.plugins.get(info.name)
        if old is not None:
            old.close()
        self.plugins[info.name] = connection
        return connection

    def wait_for_plugin(self, driver: str, timeout: float = 10.0) -> DraPluginConnection:
        """Poll the registry folder (as the plugin watcher's fsnotify would) until ``driver`` is
        registered; raises ``TimeoutError``."""
        deadline = time.monotonic() + timeout
        while True:
            for socket in self._sockets():
                if socket in self._seen:
                    continue
                self._seen.add(socket)
                try:
                    self.register(socket)
                except (RegistrationRefused, grpc.RpcError):
                    continue
            if driver in self.plugins:
                return self.plugins[driver]
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"no DRA plugin {driver} registered within {timeout} s "
                    f"(registered: {sorted(self.plugins) or 'none'}, refused: {self.refused})"
                )
            time.sleep(0.05)
