"""``generate`` as a client: ask the warm renderer, start it when none answers, and when no
renderer can answer, render in this process as ``gpustack template --argocd`` would.

Every way a renderer can fail ends in a correct answer or the in-process one, never in a stale
or partial render: a renderer that does not take the call within ``GPUSTACK_RENDERER_ACK_S``
(stopped, wedged) or does not answer within ``GPUSTACK_RENDERER_TIMEOUT_S`` is killed; one
that closes the connection before its whole answer (killed, crashed, replaced) or asks for a
retry (its gpustack changed on disk) is left; then a new renderer is started and asked once
more, and after that the call is rendered in a fresh process. A lock file beside the socket
lets exactly one of many parallel first calls start the renderer; the rest wait for its socket.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import struct
import sys
import time

from gpustack.render_client.rundir import SWITCH, Settings, Unusable, folder, settings, socket_path
from gpustack.render_client.wire import ACK, Answer, Broken, Request, recv_answer, send_request

#: ``typing``, ``contextlib`` and ``subprocess`` are imported only where needed (or only for
#: the type checker): each would add milliseconds to every call's start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from typing import NoReturn

#: Renderers asked before rendering in this process (a second one is a fresh start).
ATTEMPTS = 2
_CRED = struct.Struct("3i")


class _Peer:
    __slots__ = ("pid", "sock")

    def __init__(self, sock: socket.socket, pid: int) -> None:
        self.sock, self.pid = sock, pid


def main(version: str, package: str) -> int:
    """Answer one ``generate`` call (stdout, stderr, the exit status returned); ``package``:
    the gpustack package folder the renderer must be started from."""
    env = os.environ
    if env.get(SWITCH, "").strip().lower() == "off":
        _in_process()
    try:
        knobs = settings(env)
    except Unusable as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return 1
    try:
        path = socket_path(folder(env), version, package, sys.executable)
    except Unusable as exc:
        _note(f"warm renderer not used: {exc}")
        _in_process()
    request = Request(os.getcwd(), dict(env))
    for _ in range(ATTEMPTS):
        try:
            answer = _ask(path, request, knobs, package)
        except Unusable as exc:  # a socket served by someone else: never asked
            _note(f"warm renderer not used: {exc}")
            _in_process()
        if answer is not None and answer.retry is None:
            return _print(answer)
    _note("the warm renderer did not answer; rendering in this process")
    _in_process()


def _ask(path: str, request: Request, knobs: Settings, package: str) -> Answer | None:
    """The renderer's answer, or ``None`` when it failed (and was killed where wedged)."""
    peer = _connect(path) or _start(path, knobs, package)
    if peer is None:
        return None
    with peer.sock:
        try:
            peer.sock.settimeout(knobs.ack_s)
            # sent before the acknowledgement is read: one wake-up fewer per call, which on a
            # loaded machine is milliseconds; a stopped renderer still fails to acknowledge
            send_request(peer.sock, request)
            if peer.sock.recv(1) != ACK:
                return None
            peer.sock.settimeout(knobs.timeout_s)
            return recv_answer(peer.sock)
        except TimeoutError:
            _kill(path, peer.pid)
            return None
        except (Broken, OSError):
            return None


def _connect(path: str) -> _Peer | None:
    """A connection to the renderer at ``path``; ``None`` when nothing listens there. A
    listener of another user is :class:`Unusable` (the folder check should make it impossible)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        pid, uid, _ = _CRED.unpack(
            sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _CRED.size)
        )
    except OSError:
        sock.close()
        return None
    if uid != os.geteuid():
        sock.close()
        raise Unusable(f"{path} is served by uid {uid}, not by this user")
    return _Peer(sock, pid)


class _Locked:
    """The start lock beside the socket, held for a ``with`` block (a class rather than
    :func:`contextlib.contextmanager`, whose import costs the client's start)."""

    def __init__(self, path: str) -> None:
        self.path = _beside(path, ".lock")
        self.fd = -1

    def __enter__(self) -> None:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *_: object) -> None:
        os.close(self.fd)


def _unlink(path: str) -> None:
    try:  # noqa: SIM105 (contextlib's import costs the start)
        os.unlink(path)
    except FileNotFoundError:
        pass


def _start(path: str, knobs: Settings, package: str) -> _Peer | None:
    """Start a renderer unless another call did meanwhile, and connect to it; ``None`` when it
    exited or did not open its socket within ``GPUSTACK_RENDERER_START_S``."""
    with _Locked(path):
        peer = _connect(path)
        if peer is not None:
            return peer
        _unlink(path)  # a dead renderer's socket: nothing listens on it
        process = _spawn(path, package)
        deadline = time.monotonic() + knobs.start_s
        while time.monotonic() < deadline:
            peer = _connect(path)
            if peer is not None or process.poll() is not None:
                return peer
            time.sleep(0.005)
        process.kill()
        return None


def _spawn(path: str, package: str) -> subprocess.Popen[bytes]:
    """The renderer, in its own session (Argo CD ending this call's process group must not end
    it), its output in a log beside the socket, the same gpustack first on its path."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "PARAM_"))}
    first = os.path.dirname(package)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [first, env.get("PYTHONPATH")]))
    with open(_beside(path, ".log"), "wb") as log:
        return subprocess.Popen(
            [sys.executable, "-P", "-m", "gpustack.renderer", path],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd="/",
            env=env,
            start_new_session=True,
        )


def _beside(path: str, suffix: str) -> str:
    return os.path.splitext(path)[0] + suffix


def _kill(path: str, pid: int) -> None:
    """End a wedged renderer and free its socket path, unless another call has already put a
    new renderer there."""
    try:  # noqa: SIM105 (contextlib's import costs the start)
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    with _Locked(path):
        peer = _connect(path)
        if peer is not None:
            peer.sock.close()
            if peer.pid != pid:
                return
        _unlink(path)


def _print(answer: Answer) -> int:
    try:
        sys.stdout.buffer.write(answer.stdout)
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        pass
    if answer.stderr:
        sys.stderr.write(answer.stderr)
        sys.stderr.flush()
    return answer.exit


def _note(line: str) -> None:
    sys.stderr.write(f"gpustack: {line}\n")
    sys.stderr.flush()


def _in_process() -> NoReturn:
    """Become ``gpustack template --argocd``: the same command line, working directory and
    environment, in this process's place."""
    sys.stdout.flush()
    sys.stderr.flush()
    argv = [sys.executable, "-P", "-m", "gpustack", "template", "--argocd"]
    os.execv(sys.executable, argv)
