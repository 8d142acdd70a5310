"""The device plugin DaemonSet and its config: advertises the node's GPUs to the kubelet.

Either gpustack's own plugin (``gpustack-device-plugin``, NVML or simulated backend) or NVIDIA's
``nvidia-device-plugin``; both read the same config file format (NVIDIA's ``version: v1``), which
lives in a ConfigMap whose checksum is stamped on the pod template, so editing the config rolls
the pods. The plugin needs no privileges beyond root for the kubelet's socket directory unless
the config asks for device specs (privileged) or MIG / volume-mounts (``SYS_ADMIN``), as in
NVIDIA's Helm chart.

A config that shares GPUs with CUDA MPS (NVIDIA's plugin only) also gets NVIDIA's MPS control
daemon, a privileged DaemonSet on the same nodes as the plugin that reads it (see
:mod:`gpustack.constructs.mps`).

The module runs a little past the project's ~400 lines: the props resolve two implementations,
node configs and MPS from one profile, and splitting that resolution from the DaemonSet it feeds
would put one decision in two files.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from constructs import Construct

from gpustack.constructs import k8s, kube
from gpustack.constructs.gfd import gpu_wait
from gpustack.constructs.kube import CDI_ROOT, VALIDATIONS_DIR
from gpustack.constructs.labels import Identity
from gpustack.constructs.mps import (
    MPS_ROOT_CTR_PATH,
    MpsControlDaemonProps,
    mps_control_daemon,
    mps_volumes,
)
from gpustack.constructs.node_daemonset import (
    CONFIG_CHECKSUM,
    VALIDATIONS,
    NodeApp,
    NodeDaemonSet,
    WaitFor,
    with_node_requirements,
)
from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.constructs.plugin_config import (
    CONFIG_DIR,
    CONFIG_KEY,
    CONFIG_PATH,
    MPS_ROOT,
    nvidia_health_env,
    render_config,
)
from gpustack.constructs.runtime import gpu_runtime_class, is_simulated
from gpustack.constructs.scripts import (
    DRIVER_ROOT_CTR_PATH,
    RUNTIME_CHECK,
)
from gpustack.profile import readiness
from gpustack.profile.derive import device_plugin_avoids, plugin_configs
from gpustack.profile.model import (
    PLUGIN_IMAGES,
    Implementation,
    MigStrategy,
    Profile,
    Resources,
)

NAME: Final = "nvidia-device-plugin"
DAEMONSET: Final = "nvidia-device-plugin-daemonset"
CONTAINER: Final = "nvidia-device-plugin"
INIT_CONTAINER: Final = "toolkit-validation"
#: Init container that proves the NVIDIA runtime (``nvidia-smi``) and writes ``toolkit-ready``.
RUNTIME_CHECK_CONTAINER: Final = "runtime-validation"
CONFIG_MAP: Final = "nvidia-device-plugin-config"
#: The kubelet's device plugin directory as the plugin container sees it (its registration
#: socket and ours live here); the host folder is ``<kubelet root>/device-plugins``.
DEVICE_PLUGIN_DIR: Final = "/var/lib/kubelet/device-plugins"
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
    """Properties for :class:`DevicePlugin`, all resolved from the profile (:meth:`from_profile`;
    the profile model owns the defaults).

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
      (``<kubelet root>/device-plugins``), mounted at :data:`DEVICE_PLUGIN_DIR` (the plugins'
      default); k0s and MicroK8s keep it elsewhere.
    - ``mps``: the config shares GPUs with CUDA MPS (``sharing.mps``, NVIDIA's plugin only): the
      plugin mounts the MPS root (``/run/nvidia/mps`` at ``/mps``) and its shared memory (at
      ``/dev/shm``), and :data:`MPS_DAEMON` runs on the same nodes.
    - ``runtime_check``: with gpustack's toolkit (and real GPUs), the plugin pod first waits for
      the toolkit's ``toolkit-configured``, then :data:`RUNTIME_CHECK_CONTAINER` (toolkit image,
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


def security_context(props: DevicePluginProps) -> k8s.SecurityContext:
    """Least privilege for the plugin, following NVIDIA's Helm chart rules."""
    if props.pass_device_specs:
        # DeviceSpecs name /dev/nvidia* host nodes the plugin must stat: needs all devices.
        return k8s.SecurityContext(privileged=True)
    add = None
    if props.mig_strategy != "none" or "volume-mounts" in props.device_list_strategy:
        # MIG capability files under /proc/driver/nvidia need CAP_SYS_ADMIN to read.
        add = ["SYS_ADMIN"]
    return k8s.SecurityContext(
        allow_privilege_escalation=False,
        capabilities=k8s.Capabilities(drop=["ALL"], add=add),
        # gpustack's plugin writes only to its mounts (sockets, CDI spec); NVIDIA's is not known
        # to, but its image is not ours to test.
        read_only_root_filesystem=True if props.implementation == "gpustack" else None,
    )


def plugin_env(props: DevicePluginProps) -> list[tuple[str, str]]:
    env: list[tuple[str, str]] = []
    if props.implementation == "nvidia":
        env.append(("CONFIG_FILE", CONFIG_PATH))
    if props.simulated:
        # Never let a default NVIDIA runtime inject GPUs into a simulated plugin.
        env.append(("NVIDIA_VISIBLE_DEVICES", "void"))
    else:
        # The NVIDIA runtime injects libnvidia-ml and the GPUs (NVML) into the plugin container.
        env += [
            ("NVIDIA_VISIBLE_DEVICES", "all"),
            ("NVIDIA_DRIVER_CAPABILITIES", "compute,utility"),
        ]
        if props.mig_strategy != "none":
            env.append(("NVIDIA_MIG_MONITOR_DEVICES", "all"))
    return env + list(props.extra_env)


class DevicePlugin(Construct):
    """ServiceAccount, config ConfigMap and the ``nvidia-device-plugin-daemonset``, plus a
    ConfigMap and DaemonSet per node config (the GitOps form of NVIDIA's per-node configs: no
    config-manager sidecar reading node labels from the API, a node affinity on the label), and
    an MPS control daemon next to each DaemonSet whose config shares GPUs with MPS.

    RBAC: none, and no API token: the plugin talks only to the kubelet over its unix socket
    (NVIDIA's ClusterRole exists for the per-node config label, which gpustack does not use).
    """

    def __init__(self, scope: Construct, id: str, props: DevicePluginProps) -> None:
        super().__init__(scope, id)
        self.props = props
        ident = Identity(NAME, "device-plugin", props.version, props.placement.labels)
        service_account = NodeApp(ident, props.placement).service_account(self)
        label = props.node_config_label
        names = [nc.name for nc in props.node_configs]
        # NotIn also matches nodes without the label: every node no node config claims.
        default_affinity = _node_affinity(label, "NotIn", names) if names else None
        # off the node pool whose GPUs NVIDIA's DRA driver hands out (``dra.nodeSelector``)
        default_affinity = with_node_requirements(default_affinity, props.avoid)
        _plugin(self, "", ident, service_account, CONFIG_MAP, DAEMONSET, props, default_affinity)
        if props.mps:
            mps = _mps_props(props, MPS_DAEMON, service_account, CONFIG_MAP, default_affinity)
            mps_control_daemon(self, "mps-control-daemon", mps)
        for nc in props.node_configs:
            # Its own app name keeps the selectors disjoint (the default DaemonSet's selector is
            # immutable, and would otherwise match these pods too).
            pool = Identity(nc.daemonset, "device-plugin", props.version, props.placement.labels)
            own = replace(
                props, config_yaml=nc.config_yaml, mig_strategy=nc.mig_strategy, mps=nc.mps
            )
            affinity = with_node_requirements(_node_affinity(label, "In", [nc.name]), props.avoid)
            prefix = f"{nc.name}-"
            _plugin(self, prefix, pool, service_account, nc.config_map, nc.daemonset, own, affinity)
            if nc.mps:
                mps = _mps_props(own, nc.mps_daemon, service_account, nc.config_map, affinity)
                mps_control_daemon(self, f"{prefix}mps-control-daemon", mps)


def _mps_props(
    plugin: DevicePluginProps,
    name: str,
    service_account: str,
    config_map: str,
    affinity: k8s.Affinity | None,
) -> MpsControlDaemonProps:
    """The MPS daemon next to one plugin DaemonSet (``plugin`` carries that config's file)."""
    return MpsControlDaemonProps(
        name=name,
        component="device-plugin",
        service_account=service_account,
        config_map=config_map,
        config_yaml=plugin.config_yaml,
        # The plugin's image; its extra env and resources are the plugin's own.
        container=ContainerSettings(
            image=plugin.container.image,
            image_pull_policy=plugin.container.image_pull_policy,
            env=(),
            resources=Resources(),
        ),
        placement=plugin.placement,
        version=plugin.version,
        runtime_class=plugin.runtime_class,
        wait_for=plugin.wait_for,
        wait_container=INIT_CONTAINER,
        affinity=affinity,
        mps_root=MPS_ROOT,
    )


def _node_affinity(label: str, operator: str, values: list[str]) -> k8s.Affinity:
    """A required node affinity on the node config label."""
    requirement = k8s.NodeSelectorRequirement(key=label, operator=operator, values=values)
    return k8s.Affinity(
        node_affinity=k8s.NodeAffinity(
            required_during_scheduling_ignored_during_execution=k8s.NodeSelector(
                node_selector_terms=[k8s.NodeSelectorTerm(match_expressions=[requirement])]
            )
        )
    )


def _plugin(
    scope: Construct,
    prefix: str,
    ident: Identity,
    service_account: str,
    config_map: str,
    daemonset: str,
    props: DevicePluginProps,
    affinity: k8s.Affinity | None,
) -> None:
    """One config's ConfigMap and the plugin DaemonSet that reads it."""
    ds = NodeDaemonSet(scope, NodeApp(ident, props.placement), service_account=service_account)
    config = ds.config_map(
        f"{prefix}config",
        config_map,
        {CONFIG_KEY: props.config_yaml},
        checksum=CONFIG_CHECKSUM,
        volume="config",
    )
    kubelet = kube.host_path("device-plugin", props.device_plugin_host_dir, "Directory")
    mounts = [
        ds.mount(kubelet, DEVICE_PLUGIN_DIR),
        ds.mount(config, CONFIG_DIR, read_only=True),
    ]
    if props.driver_root is not None:
        driver_root = kube.host_path("driver-root", props.driver_root, "DirectoryOrCreate")
        mounts.append(
            ds.mount(
                driver_root, DRIVER_ROOT_CTR_PATH, read_only=True, propagation="HostToContainer"
            )
        )
    if props.uses_cdi:
        cdi_root = kube.host_path("cdi-root", CDI_ROOT, "DirectoryOrCreate")
        mounts.append(ds.mount(cdi_root, CDI_ROOT))
    if props.mps:
        # The plugin checks the MPS daemon is ready and hands its pipes and shm to the pods.
        mps_root, mps_shm = mps_volumes(MPS_ROOT)
        mounts += [ds.mount(mps_root, MPS_ROOT_CTR_PATH), ds.mount(mps_shm, "/dev/shm")]

    if props.implementation == "gpustack":
        command = ["gpustack-device-plugin", "--config-file", CONFIG_PATH]
    else:
        command = ["nvidia-device-plugin"]
    container = kube.main_container(
        CONTAINER,
        props.container,
        command=command,
        env=kube.env_list(plugin_env(props), props.container.env),
        security_context=security_context(props),
        volume_mounts=mounts,
    )
    if props.runtime_check is not None:
        waits = [
            ds.wait_for(props.runtime_check, INIT_CONTAINER),
            _runtime_check(ds, props.runtime_check),
        ]
    elif props.wait_for is not None:
        waits = [ds.wait_for(props.wait_for, INIT_CONTAINER)]
    else:
        waits = []
    ds.add(
        f"{prefix}daemonset",
        daemonset,
        containers=[container],
        init_containers=waits,
        runtime_class_name=props.runtime_class,
        affinity=affinity,
        # every plugin DaemonSet is the device plugin NVIDIA's driver manager waits for
        app_label=DAEMONSET,
    )


def _runtime_check(ds: NodeDaemonSet, wait: WaitFor) -> k8s.Container:
    """:data:`RUNTIME_CHECK_CONTAINER`: ``nvidia-smi`` in a container of this pod (same runtime
    class), then ``toolkit-ready``. No privileges: the runtime injects the GPUs and
    ``nvidia-smi``; it writes only the readiness file."""
    return k8s.Container(
        name=RUNTIME_CHECK_CONTAINER,
        image=wait.image,
        image_pull_policy=wait.image_pull_policy,
        command=["sh", "-c", RUNTIME_CHECK.format(validations=VALIDATIONS_DIR)],
        env=kube.env_list(
            [("NVIDIA_VISIBLE_DEVICES", "all"), ("NVIDIA_DRIVER_CAPABILITIES", "utility")]
        ),
        security_context=kube.unprivileged(),
        volume_mounts=[ds.mount(VALIDATIONS, VALIDATIONS_DIR)],
    )
