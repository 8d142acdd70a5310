"""The renderer is reachable by its own user only: its socket is mode 0600 in a folder of that
user with mode 0700, and neither it nor its Node child has a network socket (a port anyone in
the pod, or on the node with host networking, could ask to render)."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.renderer.procs import REPO, env_for, fresh_base, generate, renderers

#: /proc/net tables of sockets that are not unix sockets.
NETWORK_TABLES = ("tcp", "tcp6", "udp", "udp6", "raw", "raw6")


@pytest.fixture
def base() -> Iterator[Path]:
    yield from fresh_base()


def tree(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        for task in Path(f"/proc/{p}/task").iterdir():
            todo.extend(int(c) for c in (task / "children").read_text().split())
    return found


def socket_inodes(pid: int) -> set[str]:
    """The inodes of the sockets ``pid`` holds open."""
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            found.add(target[len("socket:[") : -1])
    return found


def network_sockets(pids: list[int]) -> set[str]:
    """The sockets of ``pids`` that are listed in a network table (TCP, UDP, raw; v4 or v6)."""
    held = set().union(*(socket_inodes(p) for p in pids))
    listed = set()
    for table in NETWORK_TABLES:
        path = Path(f"/proc/{pids[0]}/net/{table}")
        if path.exists():
            for line in path.read_text().splitlines()[1:]:
                listed.add(line.split()[9])
    return held & listed


def test_the_socket_is_private_and_no_network_socket_is_open(base: Path) -> None:
    env = env_for(base, "lab-1gpu.yaml")
    assert generate(REPO / "profiles", env).returncode == 0
    folder = base / f"gpustack-renderer-{os.geteuid()}"
    st = os.lstat(folder)
    assert stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()
    assert stat.S_IMODE(st.st_mode) == 0o700
    (sock,) = folder.glob("*.sock")
    st = os.lstat(sock)
    assert stat.S_ISSOCK(st.st_mode) and st.st_uid == os.geteuid()
    assert stat.S_IMODE(st.st_mode) == 0o600
    (renderer,) = renderers(base)
    pids = tree(renderer)
    assert len(pids) >= 2, "the renderer and jsii's Node"
    assert socket_inodes(renderer), "the listening unix socket at least"
    assert network_sockets(pids) == set()


def test_the_network_check_sees_a_listening_tcp_port() -> None:
    """The check above can fail: a process listening on a loopback port is found."""
    code = "import socket,sys\ns=socket.socket()\ns.bind(('127.0.0.1',0))\ns.listen()\n"
    code += "print(1,flush=True)\nsys.stdin.read()\n"
    with subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as child:
        try:
            assert child.stdout is not None and child.stdout.readline() == b"1\n"
            assert len(network_sockets([child.pid])) == 1
        finally:
            child.kill()
    with socket.socket(socket.AF_UNIX) as unix:
        unix.bind(f"\0gpustack-test-{os.getpid()}")
        assert network_sockets([os.getpid()]) == set()
