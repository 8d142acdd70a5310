"""The messages between the plugin's client and its renderer, on a unix stream socket.

Each message is a frame: a 4-byte big-endian length, then that many bytes. On accepting, the
renderer first sends the single byte :data:`ACK` from its accepting thread, so a client tells a
renderer that is stopped or wedged (no byte within seconds) from one that is busy rendering
(the answer may take longer). The client sends one frame, the request (without waiting for the
acknowledgement, which it reads after), with the working
directory, then each ``NAME=value`` of the environment, NUL-separated (neither a path nor the
environment can hold a NUL; no JSON, whose import would cost the client a tenth of its start).
The renderer answers with two frames: a head (the exit status, the ``retry`` reason, empty
unless this renderer must not answer, and stderr's text, NUL-separated) and stdout's bytes. A
connection closed before both frames arrived is a crash, never an answer.
"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Mapping

ACK = b"+"
_LENGTH = struct.Struct(">I")
#: A request is a path and an environment; more than this is refused unread.
REQUEST_LIMIT = 1 << 20
#: The manifests of one cluster are well under a megabyte; a frame past this is refused.
ANSWER_LIMIT = 1 << 28


class Broken(Exception):
    """The peer closed the connection mid-message, or sent a frame over the limit."""


class Request:
    """A ``generate`` call: its working directory and environment. (Plain classes here, not
    dataclasses: importing :mod:`dataclasses` would cost the client a tenth of its start.)"""

    __slots__ = ("cwd", "env")

    def __init__(self, cwd: str, env: Mapping[str, str]) -> None:
        self.cwd, self.env = cwd, env


class Answer:
    """What ``generate`` prints and exits with; ``retry``: ask another renderer instead."""

    __slots__ = ("exit", "retry", "stderr", "stdout")

    def __init__(
        self, exit: int = 0, stderr: str = "", stdout: bytes = b"", retry: str | None = None
    ) -> None:
        self.exit, self.stderr, self.stdout, self.retry = exit, stderr, stdout, retry


def send_frame(sock: socket.socket, data: bytes) -> None:
    sock.sendall(_LENGTH.pack(len(data)) + data)


def _exactly(sock: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise Broken("connection closed mid-message")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def recv_frame(sock: socket.socket, limit: int) -> bytes:
    (size,) = _LENGTH.unpack(_exactly(sock, _LENGTH.size))
    if size > limit:
        raise Broken(f"a frame of {size} bytes, over the limit of {limit}")
    return _exactly(sock, size)


def send_request(sock: socket.socket, request: Request) -> None:
    fields = [request.cwd, *(f"{k}={v}" for k, v in request.env.items())]
    send_frame(sock, b"\0".join(os.fsencode(f) for f in fields))


def recv_request(sock: socket.socket) -> Request:
    cwd, *pairs = (os.fsdecode(f) for f in recv_frame(sock, REQUEST_LIMIT).split(b"\0"))
    env = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name:
            raise Broken(f"not a request: {pair[:40]!r} is not NAME=value")
        env[name] = value
    if not cwd.startswith("/"):
        raise Broken("not a request: the working directory is not absolute")
    return Request(cwd, env)


def send_answer(sock: socket.socket, answer: Answer) -> None:
    head = f"{answer.exit}\0{answer.retry or ''}\0{answer.stderr}"
    send_frame(sock, head.encode("utf-8", "surrogateescape"))
    send_frame(sock, answer.stdout)


def recv_answer(sock: socket.socket) -> Answer:
    head = recv_frame(sock, REQUEST_LIMIT).decode("utf-8", "surrogateescape").split("\0", 2)
    try:
        exit, retry, stderr = int(head[0]), head[1], head[2]
    except (ValueError, IndexError):
        raise Broken("not an answer: the head is not status, retry, stderr") from None
    stdout = recv_frame(sock, ANSWER_LIMIT)
    return Answer(exit, stderr, stdout, retry or None)
