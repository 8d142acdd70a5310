"""``python -m gpustack.renderer SOCKET``: bind the socket, then warm up and serve until done.

The socket is bound under a temporary name and renamed into place once it listens, so a client
never connects to a half-made one; the client that started the renderer holds the start lock
until then. Only the standard library and the client's modules are imported before that, so the
socket is there in a Python start; Node and cdk8s start after, while the first call waits.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
from pathlib import Path

from gpustack.render_client.rundir import Unusable, check, settings
from gpustack.renderer.server import Renderer

#: Calls waiting to be accepted (parallel Applications); more wait in connect().
BACKLOG = 128


def bind(path: Path) -> socket.socket:
    """A socket listening at ``path``, readable and writable by this user only."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.fspath(temporary))
    os.chmod(temporary, 0o600)  # connecting needs write; nobody needs execute
    listener.listen(BACKLOG)
    os.rename(temporary, path)
    return listener


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m gpustack.renderer SOCKET", file=sys.stderr)
        return 2
    path = Path(args[0])
    try:
        check(os.fspath(path.parent))
        knobs = settings(os.environ)
    except Unusable as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    os.umask(0o077)
    os.chdir("/")
    renderer = Renderer(bind(path), path, knobs)
    threading.Thread(target=renderer.accept_loop, daemon=True).start()
    renderer.warm_up()
    renderer.run()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # jsii's exit hooks would wait on Node; the kernel ends it with its pipe


if __name__ == "__main__":
    sys.exit(main())
