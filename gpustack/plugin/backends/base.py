"""What every device backend is: the :class:`Backend` protocol and the :class:`InitError` it
raises. Its own module, so the backends import it without importing the package that picks them
(:func:`gpustack.plugin.backends.make_backend`)."""

from __future__ import annotations

import threading
from typing import Protocol

from gpustack.plugin.devices import Gpu
from gpustack.plugin.health import HealthState, XidPolicy


class InitError(RuntimeError):
    """The backend cannot start; the message is one line telling the user what to fix."""


class Backend(Protocol):
    """What the plugin needs from a source of GPUs."""

    def discover(self) -> list[Gpu]:
        """All GPUs, ordered by index; raises ``InitError``."""
        ...

    def control_paths(self) -> tuple[str, ...]:
        """Control device nodes to pass with ``passDeviceSpecs``."""
        ...

    def watch_health(self, state: HealthState, policy: XidPolicy, stop: threading.Event) -> None:
        """Feed health events into ``state`` until ``stop`` is set (runs in its own thread)."""
        ...

    def close(self) -> None:
        """Release backend resources."""
        ...
