"""The device plugin's properties, resolved from the profile: which implementation and image,
its config file and those of the node configs, what its pods wait for, which privileges and
mounts the config calls for, and whether CUDA MPS runs next to it.

One decision, made once here from the profile; :mod:`gpustack.constructs.device_plugin` builds
the ConfigMaps and DaemonSets from it, and the names below are theirs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.constructs.plugin_config import nvidia_health_env, render_config
from gpustack.constructs.runtime import gpu_runtime_class, is_simulated
from gpustack.constructs.waits import WaitFor, gpu_wait
from gpustack.profile import readiness
from gpustack.profile.derive import device_plugin_avoids, plugin_configs
from gpustack.profile.model import PLUGIN_IMAGES, Implementation, MigStrategy, Profile

NAME: Final = "nvidia-device-plugin"
DAEMONSET: Final = "nvidia-device-plugin-daemonset"
CONFIG_MAP: Final = "nvidia-device-plugin-config"
#: NVIDIA's MPS control daemon next to the default plugin DaemonSet; a node config's is
#: ``nvidia-mps-control-daemon-<name>`` (the default's name plus a 35-character node config name
#: would pass the 63 characters of the app name label).
MPS_DAEMON: Final = "nvidia-device-plugin-mps-control-daemon"
MPS_DAEMON_PREFIX: Final = "nvidia-mps-control-daemon"


@dataclass(frozen=True)
class NodeConfigProps:
    """One node config: its own DaemonSet ``nvidia-device-plugin-<name>`` and ConfigMap
    ``nvidia-device-plugin-config-<name>``, on the nodes whose node config label is ``name``.

    - ``name``: the label value (DNS-1123 label).
    - ``config_yaml``: that config's plugin config file.
    - ``mig_strategy``: its MIG strategy (privileges and env follow it).
    - ``mps``: its config shares GPUs with MPS: the plugin mounts the MPS root and an MPS
      control daemon ``nvidia-mps-control-daemon-<name>`` runs on its nodes.
    """

    name: str
    config_yaml: str
    mig_strategy: MigStrategy
    mps: bool

    @property
    def daemonset(self) -> str:
        return f"{NAME}-{self.name}"

    @property
    def config_map(self) -> str:
        return f"{CONFIG_MAP}-{self.name}"

    @property
    def mps_daemon(self) -> str:
        return f"{MPS_DAEMON_PREFIX}-{self.name}"


@dataclass(frozen=True)
class DevicePluginProps:
    """Properties for :class:`~gpustack.constructs.device_plugin.DevicePlugin`, all resolved
    from the profile (:meth:`from_profile`; the profile model owns the defaults).

    - ``container``: plugin image (per implementation unless the profile sets one), pull
      policy, extra env, resources.
    - ``config_yaml``: the plugin config file (see :mod:`gpustack.constructs.plugin_config`).
    - ``placement``: namespace and scheduling.
    - ``version``: plugin version, for the version label.
    - ``implementation``: ``gpustack`` runs ``gpustack-device-plugin --config-file``, ``nvidia``
      runs ``nvidia-device-plugin`` with ``CONFIG_FILE``.
    - ``runtime_class``: RuntimeClass that gives the plugin NVML; ``None`` for the simulated
      backend (no GPU, no NVIDIA runtime needed) and CRI-O hook mode.
    - ``wait_for``: readiness file to wait for before starting: the toolkit's ``toolkit-ready``
      (the driver's ``driver-ready`` without gpustack's toolkit); ``None`` with the simulated
      backend, which must start on GPU-less nodes, or when gpustack runs neither.
    - ``simulated``: the gpustack plugin's simulated backend: no driver root, no GPU runtime, and
      the NVIDIA runtime told to inject nothing.
    - ``driver_root``: host driver root (``driver.root``), mounted read-only at
      ``/driver-root``; ``None`` for the simulated backend.
    - ``pass_device_specs``, ``mig_strategy``, ``device_list_strategy``: the config values that
      decide privileges (see module doc) and mounts (CDI strategies need the CDI root).
    - ``extra_env``: implementation-specific env (NVIDIA's health-check variables, and the CDI
      hook path when gpustack installs the toolkit).
    - ``node_configs``: per-node-pool configs, each with its own DaemonSet and ConfigMap; with
      any, the default DaemonSet stays off the nodes they select.
    - ``node_config_label``: the node label whose value names a node config.
    - ``device_plugin_host_dir``: the kubelet's device plugin folder on the host
      (``<kubelet root>/device-plugins``), mounted at
      :data:`~gpustack.constructs.device_plugin.DEVICE_PLUGIN_DIR` (the plugins' default); k0s
      and MicroK8s keep it elsewhere.
    - ``mps``: the config shares GPUs with CUDA MPS (``sharing.mps``, NVIDIA's plugin only): the
      plugin mounts the MPS root (``/run/nvidia/mps`` at ``/mps``) and its shared memory (at
      ``/dev/shm``), and :data:`MPS_DAEMON` runs on the same nodes.
    - ``runtime_check``: with gpustack's toolkit (and real GPUs), the plugin pod first waits for
      the toolkit's ``toolkit-configured``, then
      :data:`~gpustack.constructs.device_plugin.RUNTIME_CHECK_CONTAINER` (toolkit image,
      started through the pod's ``nvidia`` runtime) runs ``nvidia-smi`` and writes
      ``toolkit-ready``, which ``wait_for`` names for everything else (the MPS daemon); ``None``
      waits for ``wait_for`` alone.
    - ``avoid``: node affinity requirements that keep every plugin DaemonSet off the node pool
      whose GPUs NVIDIA's DRA driver allocates (``dra.nodeSelector``): a GPU is handed out by
      one of the two, never both.
    """

    container: ContainerSettings
    config_yaml: str
    placement: Placement
    version: str
    implementation: Implementation
    runtime_class: str | None
    wait_for: WaitFor | None
    simulated: bool
    driver_root: str | None
    pass_device_specs: bool
    mig_strategy: MigStrategy
    device_list_strategy: tuple[str, ...]
    extra_env: tuple[tuple[str, str], ...]
    node_configs: tuple[NodeConfigProps, ...]
    node_config_label: str
    device_plugin_host_dir: str
    mps: bool
    runtime_check: WaitFor | None
    avoid: tuple[tuple[str, str, tuple[str, ...]], ...]

    @classmethod
    def from_profile(cls, profile: Profile) -> DevicePluginProps:
        dp, toolkit, driver = profile.device_plugin, profile.toolkit, profile.driver
        simulated = is_simulated(profile)
        # what the pods wait for is decided in the profile layer (readiness), which the
        # validation graph reads too: the plugin pod proves the runtime after the toolkit's
        # toolkit-configured; the MPS daemons (and a plugin without that check) wait like GPU
        # clients; a simulated stack must come up on nodes without GPUs: nothing to wait for
        wait_for = None if simulated else gpu_wait(profile)
        runtime_check: WaitFor | None = None
        if readiness.runtime_checked(profile):
            runtime_check = WaitFor(
                readiness.validation(readiness.TOOLKIT_CONFIGURED),
                toolkit.image_ref(),
                toolkit.image_pull_policy,
            )
        extra: list[tuple[str, str]] = []
        if dp.implementation == "nvidia":
            extra += nvidia_health_env(profile)
        cdi = any(s.startswith("cdi-") for s in dp.device_list_strategy)
        if toolkit.enabled and cdi and not simulated:
            # The hook the plugin's CDI spec names runs on the host: where gpustack's toolkit
            # put it. A toolkit installed from packages has it on PATH, the plugins' default
            # (/usr/bin/nvidia-cdi-hook). Both plugins read this variable.
            extra.append(("NVIDIA_CDI_HOOK_PATH", f"{toolkit.install_dir}/toolkit/nvidia-cdi-hook"))
        return cls(
            container=ContainerSettings.from_section(dp),
            config_yaml=render_config(profile),
            placement=Placement.from_profile(profile),
            version=dp.version or PLUGIN_IMAGES[dp.implementation][1],
            implementation=dp.implementation,
            runtime_class=None if simulated else gpu_runtime_class(profile),
            wait_for=wait_for,
            simulated=simulated,
            driver_root=None if simulated else driver.root,
            pass_device_specs=dp.pass_device_specs,
            mig_strategy=dp.mig_strategy,
            device_list_strategy=dp.device_list_strategy,
            extra_env=tuple(extra),
            device_plugin_host_dir=(
                f"{profile.cluster.resolved_kubelet_root_dir().rstrip('/')}/device-plugins"
            ),
            node_configs=tuple(
                NodeConfigProps(
                    name=name,
                    config_yaml=render_config(view),
                    mig_strategy=view.device_plugin.mig_strategy,
                    mps=view.device_plugin.mps is not None,
                )
                for name, view in plugin_configs(profile)
                if name is not None
            ),
            node_config_label=dp.node_config_label,
            mps=dp.mps is not None,
            runtime_check=runtime_check,
            avoid=device_plugin_avoids(profile),
        )

    @property
    def uses_cdi(self) -> bool:
        return any(s.startswith("cdi-") for s in self.device_list_strategy)
