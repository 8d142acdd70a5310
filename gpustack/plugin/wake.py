"""Waking a main loop from a signal handler without taking a lock.

A Python signal handler runs in the main thread, between two bytecodes of whatever that thread
is doing, possibly while it holds a lock. ``threading.Event.set`` takes the event's plain
(non-reentrant) lock, and logging takes its stream's: a handler that calls either while the main
thread sits between ``Event.wait`` re-taking that lock and releasing it waits for itself forever.
A plugin deadlocked that way no longer stops on SIGTERM (the kubelet kills it after its grace
period) and no longer re-registers when the kubelet restarts (the node loses its GPUs).

So the handlers only set plain attributes and :meth:`Waker.wake`, which writes a byte to a pipe
(``os.write`` takes no Python lock: the same way ``signal.set_wakeup_fd`` wakes a loop); the
loop sleeps in ``select`` on the pipe's other end and logs what the handlers recorded.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
from collections.abc import Callable
from types import FrameType

#: The signals that stop a plugin; SIGHUP reloads its config instead.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT)


class Waker:
    """A pipe the main loop sleeps on and anyone, a signal handler included, may wake."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._closed = False

    def wake(self) -> None:
        """End the current (or the next) :meth:`sleep` at once; nothing once closed (a late
        signal must not write to whatever file has reused the pipe's descriptor number)."""
        if self._closed:
            return
        with contextlib.suppress(OSError):  # full: a wake is already pending
            os.write(self._write, b"\0")

    def sleep(self, timeout: float | None) -> None:
        """Wait until woken or for ``timeout`` seconds (``None``: until woken), then forget
        the wakes."""
        select.select([self._read], [], [], timeout)
        try:
            while os.read(self._read, 512):
                pass
        except BlockingIOError:  # drained
            pass

    def close(self) -> None:
        self._closed = True
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)


def on_signals(stop: Callable[[str], object], reload: Callable[[str], object]) -> None:
    """Install both plugins' handlers: ``stop`` on :data:`STOP_SIGNALS`, ``reload`` on SIGHUP,
    each called with the signal's name. Both run in a signal handler, so they must take no lock
    and log nothing (above): record, and :meth:`Waker.wake` the loop."""

    def handler(call: Callable[[str], object]) -> Callable[[int, FrameType | None], None]:
        def handle(signum: int, frame: FrameType | None) -> None:
            call(signal.Signals(signum).name)

        return handle

    for sig in STOP_SIGNALS:
        signal.signal(sig, handler(stop))
    signal.signal(signal.SIGHUP, handler(reload))
