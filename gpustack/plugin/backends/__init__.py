"""Device backends: where GPUs and their health events come from.

``nvml`` talks to the driver through pynvml; ``simulated`` describes GPUs in the config file and
takes health events from a file, so everything above discovery runs the same without hardware.
"""

from __future__ import annotations

from gpustack.plugin.backends.base import Backend, InitError
from gpustack.plugin.config import PluginConfig

__all__ = ["Backend", "InitError", "make_backend"]


def make_backend(config: PluginConfig) -> Backend:
    """The backend the config names (NVML is imported only when used)."""
    if config.extensions.backend == "simulated":
        from gpustack.plugin.backends.simulated import SimulatedBackend

        return SimulatedBackend(config)
    from gpustack.plugin.backends.nvml import NvmlBackend

    return NvmlBackend(config)
