"""Signal handlers wake the plugin's loop without taking a lock (gpustack/plugin/wake.py).

A Python signal handler runs in the main thread at a bytecode boundary, possibly while that
thread holds a lock. The first test shows the hazard is real: a handler that sets a
``threading.Event`` while the main thread holds the event's lock waits for itself forever. The
device plugin's handlers used to do exactly that (and log), so a SIGTERM or SIGHUP arriving at
the wrong moment could hang the plugin; now they only record the signal and write to a pipe.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpustack.plugin.wake import Waker

#: The main thread holds ``LOCK`` when the signal arrives; the handler does ``WAKE``.
SCENARIO = """
import os, signal, threading
from gpustack.plugin.wake import Waker
event, waker = threading.Event(), Waker()
signal.signal(signal.SIGUSR1, lambda signum, frame: {wake})
with {lock}:
    os.kill(os.getpid(), signal.SIGUSR1)
    for _ in range(3):
        pass  # bytecode boundaries: the handler runs here, while the lock is held
print("handled")
"""


def run(wake: str, lock: str) -> subprocess.CompletedProcess[str] | None:
    code = SCENARIO.format(wake=wake, lock=lock)
    try:
        return subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=5
        )
    except subprocess.TimeoutExpired:
        return None


def test_an_event_set_in_a_handler_deadlocks_when_the_main_thread_holds_its_lock() -> None:
    assert run("event.set()", "event._cond") is None, "the hazard the Waker exists for"


@pytest.mark.parametrize("lock", ["event._cond", "threading.Lock()"])
def test_a_waker_wakes_from_a_handler_whatever_lock_is_held(lock: str) -> None:
    done = run("waker.wake()", lock)
    assert done is not None and done.returncode == 0, done
    assert done.stdout.strip() == "handled"


def test_a_wake_ends_the_next_sleep_and_wakes_coalesce() -> None:
    waker = Waker()
    try:
        for _ in range(10_000):  # more than a pipe holds: the rest are dropped, not blocking
            waker.wake()
        started = time.monotonic()
        waker.sleep(5)
        assert time.monotonic() - started < 1, "a pending wake ends the sleep at once"
        started = time.monotonic()
        waker.sleep(0.2)
        assert time.monotonic() - started >= 0.2, "all the wakes were drained by one sleep"
    finally:
        waker.close()


def test_a_wake_after_close_writes_nowhere(tmp_path: Path) -> None:
    """A signal after the loop ended must not write into a file that reused the pipe's fds."""
    waker = Waker()
    pipe_fds = {waker._read, waker._write}
    waker.close()
    paths = [tmp_path / "a", tmp_path / "b"]
    fds = [os.open(p, os.O_WRONLY | os.O_CREAT) for p in paths]
    try:
        assert set(fds) == pipe_fds, "the test needs both descriptor numbers reused"
        waker.wake()
    finally:
        for fd in fds:
            os.close(fd)
    assert [p.read_bytes() for p in paths] == [b"", b""]
