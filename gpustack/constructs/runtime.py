"""Which RuntimeClass GPU containers use, decided once for every component.

The toolkit's installer always registers three handlers in containerd or CRI-O: the main one
(``toolkit.runtimeClass``, default ``nvidia``) and ``nvidia-cdi``/``nvidia-legacy``, which force a
mode. Exception: CRI-O without CDI is configured with an OCI hook that applies to every
container, so there is no handler to name.
Pure Python: no cdk8s.
"""

from __future__ import annotations

from gpustack.profile.derive import (  # re-exported: stated once in the derivations
    EXTRA_HANDLERS,
    gpu_runtime_class,
    is_simulated,
    runtime_classes,
)
from gpustack.profile.model import Profile

__all__ = [
    "EXTRA_HANDLERS",
    "cdi_names_only",
    "cdi_only",
    "gpu_runtime_class",
    "is_simulated",
    "runtime_classes",
    "workload_runtime_class",
]


def cdi_names_only(device_list_strategy: tuple[str, ...]) -> bool:
    """True when a plugin with these strategies hands containers CDI device names alone."""
    return all(s.startswith("cdi-") for s in device_list_strategy)


def cdi_only(profile: Profile) -> bool:
    """True when gpustack's device plugin (enabled) gives every device as a CDI name.

    Only then may the ``nvidia`` handler run in CDI mode: an ``NVIDIA_VISIBLE_DEVICES`` ID from
    the envvar strategy has no device in the toolkit's management spec. With the plugin
    disabled, the user's own plugin is unknown, so the answer is ``False``.
    """
    dp = profile.device_plugin
    return dp.enabled and cdi_names_only(dp.device_list_strategy)


def workload_runtime_class(profile: Profile, device_list_strategy: tuple[str, ...]) -> str | None:
    """RuntimeClass a GPU workload needs: none when every device reaches it through CDI.

    With envvar or volume-mounts strategies only the NVIDIA runtime turns the plugin's answer
    into devices; with CDI strategies (which need CDI on) containerd/CRI-O inject them directly.
    """
    if cdi_names_only(device_list_strategy):
        return None
    return gpu_runtime_class(profile)
