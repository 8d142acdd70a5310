"""One resource's server on its socket, registered with the kubelet: binding, serving again and
registering, each retried without ever ending the plugin.

The manager (:mod:`gpustack.plugin.manager`) decides when: a replaced ``kubelet.sock`` (a new
:func:`kubelet_id`) or a removed plugin socket asks for :func:`restart`, a served but unregistered
slot for :func:`register`. What is done, and how often it is retried, is here: a socket folder
that cannot be served is retried every :data:`REBIND_RETRY_S`, a registration the kubelet refused
after :data:`REJECTED_RETRY_S`, and each failure is logged once, not every poll.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass

import grpc

from gpustack.plugin.backends import InitError
from gpustack.plugin.server import PluginServer, SocketBusyError

log = logging.getLogger("gpustack.plugin")

#: Wait before retrying a registration the kubelet answered with an error.
REJECTED_RETRY_S = 5.0
#: Wait before serving again on a socket folder that could not be served.
REBIND_RETRY_S = 1.0

#: A kubelet socket's identity: its inode and change time (:func:`kubelet_id`).
KubeletId = tuple[int, int]


def kubelet_id(path: str) -> KubeletId | None:
    """Identity of the current kubelet socket (changes when a new kubelet creates it)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_ctime_ns


@dataclass
class Slot:
    """One resource's server, its socket and its registration with the kubelet."""

    server: PluginServer
    registered_with: KubeletId | None = None
    next_attempt: float = 0.0
    last_error: str = ""
    #: When to try serving again after binding failed, and that failure (logged once).
    next_bind: float = 0.0
    bind_error: str = ""


class BindError(InitError):
    """The socket folder cannot be served now; at run time that is retried, not fatal."""


def bind(server: PluginServer, socket_dir: str) -> None:
    """Start ``server``; every failure is a one-line ``InitError``."""
    name = server.resource.name
    try:
        os.makedirs(socket_dir, exist_ok=True)
        server.start()
    except SocketBusyError as exc:
        raise InitError(f"cannot serve {name}: {exc}") from None
    except (OSError, RuntimeError) as exc:  # gRPC reports bind failures as RuntimeError
        raise BindError(
            f"cannot serve {name} on {server.socket_path}: {exc}; "
            "check --socket-dir (the kubelet's device-plugins directory, writable by root)"
        ) from None


def restart(slot: Slot, socket_dir: str) -> None:
    """Serve ``slot`` again; a folder that cannot be served is retried, logged once."""
    now = time.monotonic()
    if not slot.server.serving and now < slot.next_bind:
        return
    slot.server.stop()
    slot.registered_with = None
    slot.next_attempt = 0.0
    try:
        bind(slot.server, socket_dir)
    except BindError as exc:
        slot.next_bind = now + REBIND_RETRY_S
        if str(exc) != slot.bind_error:
            log.error("%s; retrying every %.0f s", exc, REBIND_RETRY_S)
            slot.bind_error = str(exc)
        return
    if slot.bind_error:
        log.info("serving %s again", slot.server.resource.name)
        slot.bind_error = ""


def register(slot: Slot, sock: str, current: KubeletId) -> None:
    """Register ``slot``'s server with the kubelet at ``sock``; a refusal is retried (after
    :data:`REJECTED_RETRY_S` when the kubelet answered), logged once per message."""
    now = time.monotonic()
    if now < slot.next_attempt:
        return
    try:
        slot.server.register(sock)
    except (grpc.RpcError, TimeoutError) as exc:
        code = exc.code() if isinstance(exc, grpc.RpcError) else None
        detail = exc.details() if isinstance(exc, grpc.RpcError) else str(exc)
        message = f"registering {slot.server.resource.name} failed: {detail}"
        if message != slot.last_error:
            log.warning("%s; retrying", message)
            slot.last_error = message
        if code not in (None, grpc.StatusCode.UNAVAILABLE):
            slot.next_attempt = now + REJECTED_RETRY_S
        return
    slot.registered_with = current
    slot.last_error = ""
