"""Device backends: where GPUs and their health events come from.

``nvml`` talks to the driver through pynvml; ``simulated`` describes GPUs in the config file and
takes health events from a file, so everything above discovery runs the same without hardware.
"""

from __future__ import annotations

import threading
from typing import Protocol

from gpustack.plugin.config import PluginConfig
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


def make_backend(config: PluginConfig) -> Backend:
    """The backend the config names (NVML is imported only when used)."""
    if config.extensions.backend == "simulated":
        from gpustack.plugin.backends.simulated import SimulatedBackend

        return SimulatedBackend(config)
    from gpustack.plugin.backends.nvml import NvmlBackend

    return NvmlBackend(config)
