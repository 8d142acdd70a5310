"""Which RuntimeClass GPU containers use, decided once for every component.

The toolkit's installer always registers three handlers in containerd or CRI-O: the main one
(``toolkit.runtimeClass``, default ``nvidia``) and ``nvidia-cdi``/``nvidia-legacy``, which force a
mode. Exceptions: CRI-O without CDI is configured with an OCI hook that applies to every
container, so there is no handler to name; and k3s/RKE2 render containerd's config themselves on
every start, keeping only the handler they register for the runtime binary they find
(``nvidia``), so the installer's ``nvidia-cdi``/``nvidia-legacy`` do not survive there
(``tests/node/`` shows each distribution's loaded config).
Pure Python: no cdk8s.
"""

from __future__ import annotations

from typing import Final

from gpustack.profile.model import SELF_CONFIGURING, Profile

#: Handlers the toolkit registers next to the main one (fixed names in nvidia-ctk-installer).
EXTRA_HANDLERS: Final = ("nvidia-cdi", "nvidia-legacy")


def is_simulated(profile: Profile) -> bool:
    """True when the plugin advertises simulated GPUs (gpustack implementation only)."""
    dp = profile.device_plugin
    return dp.implementation == "gpustack" and dp.backend == "simulated"


def gpu_runtime_class(profile: Profile) -> str | None:
    """Name of the RuntimeClass (= handler) for GPU containers; ``None`` for CRI-O hook mode."""
    if profile.cluster.runtime.name == "crio" and not profile.toolkit.cdi.enabled:
        return None
    return profile.toolkit.runtime_class


def runtime_classes(profile: Profile) -> tuple[str, ...]:
    """Every RuntimeClass gpustack declares: the main one, plus the mode-forcing ones with CDI.

    ``nvidia-cdi``/``nvidia-legacy`` are declared only when gpustack runs the toolkit (so the
    handlers are known to exist) with CDI on: ``nvidia-cdi`` needs the CDI specs the toolkit writes
    only then, and without CDI ``nvidia`` already is the legacy mode. Never on k3s/RKE2, whose
    regenerated config has no such handlers.
    """
    main = gpu_runtime_class(profile)
    if main is None or (is_simulated(profile) and not profile.toolkit.enabled):
        # Simulated GPUs on nodes gpustack does not configure: nothing would use the class, and
        # such nodes (kind, k3d) usually have no NVIDIA handler at all.
        return ()
    names = [main]
    self_configuring = profile.cluster.runtime.distribution in SELF_CONFIGURING
    if profile.toolkit.enabled and profile.toolkit.cdi.enabled and not self_configuring:
        names += [h for h in EXTRA_HANDLERS if h != main]
    return tuple(names)


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
