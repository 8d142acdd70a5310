"""The messages between the plugin's client and its renderer, on a unix stream socket.

Each message is a frame: a 4-byte big-endian length, then that many bytes. On accepting, the
renderer first sends the single byte :data:`ACK` from its accepting thread, so a client tells a
renderer that is stopped or wedged (no byte within seconds) from one that is busy rendering
(the answer may take longer). Then the client sends one frame, the request (JSON: working
directory and environment), and the renderer answers with two: a JSON head (the exit status
and stderr text, or ``retry`` with a reason when this renderer must not answer) and stdout's
bytes. A connection closed before both frames arrived is a crash, never an answer.
"""

from __future__ import annotations

import json
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
    send_frame(sock, json.dumps({"cwd": request.cwd, "env": dict(request.env)}).encode())


def recv_request(sock: socket.socket) -> Request:
    try:
        doc = json.loads(recv_frame(sock, REQUEST_LIMIT))
        cwd, env = doc["cwd"], doc["env"]
    except (ValueError, KeyError, TypeError) as exc:
        raise Broken(f"not a request: {exc}") from None
    if not isinstance(cwd, str) or not isinstance(env, dict):
        raise Broken("not a request: cwd or env of the wrong type")
    return Request(cwd, {str(k): str(v) for k, v in env.items()})


def send_answer(sock: socket.socket, answer: Answer) -> None:
    head = {"exit": answer.exit, "stderr": answer.stderr, "retry": answer.retry}
    send_frame(sock, json.dumps(head).encode())
    send_frame(sock, answer.stdout)


def recv_answer(sock: socket.socket) -> Answer:
    try:
        head = json.loads(recv_frame(sock, REQUEST_LIMIT))
        exit, stderr, retry = int(head["exit"]), str(head["stderr"]), head["retry"]
    except (ValueError, KeyError, TypeError) as exc:
        raise Broken(f"not an answer: {exc}") from None
    stdout = recv_frame(sock, ANSWER_LIMIT)
    return Answer(exit, stderr, stdout, None if retry is None else str(retry))
