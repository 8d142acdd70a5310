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

The props, resolved from the profile (two implementations, node configs, MPS), are in
:mod:`gpustack.constructs.device_plugin_props`; this module builds the objects from them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from constructs import Construct

from gpustack.constructs import k8s, kube
from gpustack.constructs.device_plugin_props import (
    CONFIG_MAP,
    DAEMONSET,
    MPS_DAEMON,
    NAME,
    DevicePluginProps,
)
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
    with_node_requirements,
)
from gpustack.constructs.placement import ContainerSettings
from gpustack.constructs.plugin_config import (
    CONFIG_DIR,
    CONFIG_KEY,
    CONFIG_PATH,
    MPS_ROOT,
)
from gpustack.constructs.scripts import (
    DRIVER_ROOT_CTR_PATH,
    RUNTIME_CHECK,
)
from gpustack.constructs.waits import WaitFor
from gpustack.kube.labels import DEVICE_PLUGIN_COMPONENT
from gpustack.profile.model import (
    Resources,
)

CONTAINER: Final = "nvidia-device-plugin"
INIT_CONTAINER: Final = "toolkit-validation"
#: Init container that proves the NVIDIA runtime (``nvidia-smi``) and writes ``toolkit-ready``.
RUNTIME_CHECK_CONTAINER: Final = "runtime-validation"
#: The kubelet's device plugin directory as the plugin container sees it (its registration
#: socket and ours live here); the host folder is ``<kubelet root>/device-plugins``.
DEVICE_PLUGIN_DIR: Final = "/var/lib/kubelet/device-plugins"


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
        ident = Identity.placed(NAME, DEVICE_PLUGIN_COMPONENT, props.version, props.placement)
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
            pool = Identity.placed(
                nc.daemonset, DEVICE_PLUGIN_COMPONENT, props.version, props.placement
            )
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
        volume_mounts=_plugin_mounts(ds, config, props),
    )
    ds.add(
        f"{prefix}daemonset",
        daemonset,
        containers=[container],
        init_containers=_plugin_waits(ds, props),
        runtime_class_name=props.runtime_class,
        affinity=affinity,
        # every plugin DaemonSet is the device plugin NVIDIA's driver manager waits for
        app_label=DAEMONSET,
    )


def _plugin_mounts(
    ds: NodeDaemonSet, config: k8s.Volume, props: DevicePluginProps
) -> list[k8s.VolumeMount]:
    """The kubelet's device plugin folder and the config; the driver root (real GPUs), the CDI
    folder (CDI strategies) and the MPS root and shared memory (MPS) where the config needs
    them."""
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
    return mounts


def _plugin_waits(ds: NodeDaemonSet, props: DevicePluginProps) -> list[k8s.Container]:
    """Wait for ``toolkit-configured`` and prove the runtime (:func:`_runtime_check`), or wait
    for ``wait_for``, or nothing (simulated GPUs)."""
    if props.runtime_check is not None:
        return [
            ds.wait_for(props.runtime_check, INIT_CONTAINER),
            _runtime_check(ds, props.runtime_check),
        ]
    return ds.waits(props.wait_for, INIT_CONTAINER)


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
