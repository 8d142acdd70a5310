"""The readiness files that order the stack on a node: their paths, and which one each pod
waits for under a profile.

gpustack runs no validator pod (the GPU Operator's ``nvidia-validator``): its pods publish and
wait for files in a host folder instead (the scripts are in :mod:`gpustack.constructs.scripts`).
Which file a pod waits for changes with the profile (no toolkit, no device plugin, a simulated
plugin), and a wait for a file no pod of the profile writes never ends (issue 20, item 2). So the
decisions live here, in the profile layer, once: the constructs build their init containers from
them, and :mod:`gpustack.profile.graph` (read by ``gpustack validate``) checks that every wait
has a writer. Nothing here imports cdk8s.

- ``driver-ready``: written by the driver container's startupProbe, or by the toolkit's init
  container when the driver is preinstalled (no driver container).
- ``.driver-ctr-ready``: written by the driver container's startupProbe.
- ``toolkit-configured``: written by the toolkit's startupProbe once the runtime is configured.
- ``toolkit-ready``: written only by the device plugin pod's runtime check (``nvidia-smi``
  through the ``nvidia`` runtime; a real plugin, not the simulated backend).
- ``/run/mellanox/drivers/.driver-ready``: written by NVIDIA's network operator's MOFED driver
  container, which gpustack does not deploy (:data:`EXTERNAL`).
"""

from __future__ import annotations

from typing import Final

from gpustack.profile.derive import dra_allocates_gpus, is_simulated, plugin_configs
from gpustack.profile.model import Profile

#: The host folder of the readiness files (the GPU Operator's, so tools that read it still do).
VALIDATIONS_DIR: Final = "/run/nvidia/validations"
#: File names under :data:`VALIDATIONS_DIR` (see the module docstring for their writers).
DRIVER_READY: Final = "driver-ready"
DRIVER_CTR_READY: Final = ".driver-ctr-ready"
TOOLKIT_CONFIGURED: Final = "toolkit-configured"
TOOLKIT_READY: Final = "toolkit-ready"

#: Where a MOFED driver container (NVIDIA's network operator) announces its driver is loaded.
MOFED_READY: Final = "/run/mellanox/drivers/.driver-ready"

#: Files a pod may wait for that no gpustack pod writes: path -> (who writes it, the profile
#: setting that makes a pod wait for it). ``gpustack validate`` does not refuse a wait for them;
#: the cluster folder states them as prerequisites (:mod:`gpustack.profile.prerequisites`).
EXTERNAL: Final = {
    MOFED_READY: (
        "NVIDIA's network operator (its MOFED driver container, on nodes with a Mellanox device)",
        "driver.rdma.enabled without driver.rdma.useHostMofed",
    ),
}


def validation(name: str) -> str:
    """The host path of readiness file ``name`` (one of the names above)."""
    return f"{VALIDATIONS_DIR}/{name}"


def runtime_checked(profile: Profile) -> bool:
    """Whether the device plugin's pod proves the ``nvidia`` runtime and writes
    ``toolkit-ready``: only with gpustack's toolkit, an enabled plugin and real GPUs."""
    return profile.toolkit.enabled and profile.device_plugin.enabled and not is_simulated(profile)


def gpu_client_wait(profile: Profile) -> str | None:
    """The readiness file a GPU client (GPU feature discovery, the DCGM exporter, the MIG
    manager's init container, the MPS daemon) waits for: ``toolkit-ready`` where the device
    plugin's pod proves the runtime, the toolkit's own ``toolkit-configured`` where no such pod
    runs (a cluster that allocates GPUs with a DRA driver sets ``devicePlugin.enabled: false``,
    or gives DRA a node pool of its own),
    ``driver-ready`` without gpustack's toolkit, nothing when gpustack runs neither."""
    if profile.toolkit.enabled:
        # where NVIDIA's DRA driver hands out a node pool's GPUs no plugin pod runs on that
        # pool, and one DaemonSet of each client serves both pools
        proven = runtime_checked(profile) and not dra_allocates_gpus(profile)
        return validation(TOOLKIT_READY if proven else TOOLKIT_CONFIGURED)
    if profile.driver.enabled:
        return validation(DRIVER_READY)
    return None


def plugin_waits(profile: Profile) -> frozenset[str]:
    """Every file the device plugin component's pods wait for: the plugin pod waits for
    ``toolkit-configured`` before its runtime check (or for :func:`gpu_client_wait` without
    one), and each MPS daemon waits like a GPU client. A simulated plugin waits for nothing (it
    must start on nodes without GPUs)."""
    if is_simulated(profile):
        return frozenset()
    waits = {validation(TOOLKIT_CONFIGURED)} if runtime_checked(profile) else set()
    client = gpu_client_wait(profile)
    mps = any(view.device_plugin.mps is not None for _, view in plugin_configs(profile))
    if client is not None and (mps or not runtime_checked(profile)):
        waits.add(client)
    return frozenset(waits)


def plugin_writes(profile: Profile) -> frozenset[str]:
    """``toolkit-ready``, where the plugin's pod runs the runtime check."""
    return frozenset({validation(TOOLKIT_READY)}) if runtime_checked(profile) else frozenset()


def driver_waits(profile: Profile) -> frozenset[str]:
    """The MOFED driver's file, with GPUDirect RDMA from a MOFED driver container."""
    rdma = profile.driver.rdma
    return frozenset({MOFED_READY}) if rdma.enabled and not rdma.use_host_mofed else frozenset()


def driver_writes(profile: Profile) -> frozenset[str]:
    """The driver container's startupProbe publishes ``driver-ready`` and ``.driver-ctr-ready``."""
    return frozenset({validation(DRIVER_READY), validation(DRIVER_CTR_READY)})


def toolkit_waits(profile: Profile) -> frozenset[str]:
    """The toolkit's entrypoint sources ``driver-ready`` (its init container waits for the
    driver container's, or writes it for a preinstalled driver)."""
    return frozenset({validation(DRIVER_READY)})


def toolkit_writes(profile: Profile) -> frozenset[str]:
    """``toolkit-configured`` (startupProbe); ``driver-ready`` too for a preinstalled driver."""
    written = {validation(TOOLKIT_CONFIGURED)}
    if not profile.driver.enabled:
        written.add(validation(DRIVER_READY))
    return frozenset(written)


def gpu_client_waits(profile: Profile) -> frozenset[str]:
    """:func:`gpu_client_wait` as a set (GPU feature discovery, the DCGM exporter)."""
    wait = gpu_client_wait(profile)
    return frozenset({wait}) if wait is not None else frozenset()


def dra_plugin_wait(profile: Profile) -> str | None:
    """The readiness file NVIDIA's DRA kubelet plugin waits for: the runtime configured by
    gpustack's toolkit (``toolkit-configured``: the claims' CDI devices can be injected), else the
    driver loaded by gpustack's driver (``driver-ready``), else nothing (both on the host). Never
    ``toolkit-ready``: the device plugin pod writes that, and none runs on DRA's nodes."""
    if profile.toolkit.enabled:
        return validation(TOOLKIT_CONFIGURED)
    if profile.driver.enabled:
        return validation(DRIVER_READY)
    return None


def dra_plugin_waits(profile: Profile) -> frozenset[str]:
    """:func:`dra_plugin_wait` as a set."""
    wait = dra_plugin_wait(profile)
    return frozenset({wait}) if wait is not None else frozenset()


def mig_manager_waits(profile: Profile) -> frozenset[str]:
    """A GPU client's wait, then ``driver-ready``: its entrypoint reads the driver's paths
    from it, whoever wrote it."""
    return gpu_client_waits(profile) | {validation(DRIVER_READY)}
