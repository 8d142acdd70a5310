"""NVIDIA's CUDA MPS control daemon: one DaemonSet next to each device plugin DaemonSet whose
config shares GPUs with MPS (``sharing.mps``, NVIDIA's plugin only).

It starts an MPS server per shared resource, limited to ``1/replicas`` of each GPU, whose pipes
the plugin hands to the pods it allocates replicas to. It belongs to the device-plugin component
(it reads the plugin's ConfigMap and runs under the plugin's ServiceAccount), so the device
plugin construct creates it; this module knows nothing about the plugin beyond what
:class:`MpsControlDaemonProps` says.

From the reference (NVIDIA's Helm chart and config docs): the daemon is NVIDIA's plugin image
running ``mps-control-daemon``, a separate DaemonSet that sets the GPUs' compute mode to
EXCLUSIVE_PROCESS (hence privileged); an init step ``mps-control-daemon mount-shm`` mounts the
MPS shared memory; ``/run/nvidia/mps`` (DirectoryOrCreate) is mounted at ``/mps`` and
``/run/nvidia/mps/shm`` at ``/dev/shm``; ``flags.mpsRoot`` names the host root; the daemon waits
for ``toolkit-ready`` like the plugin.

Our best understanding, not checked against NVIDIA's manifests here: ``hostPID`` (the daemon and
its MPS servers must see the client processes of other pods); Bidirectional propagation on the
init step's ``/mps`` mount, so the shm mount it makes under ``/mps/shm`` reaches the host and the
other pods; the daemon finds its config through ``CONFIG_FILE`` like the plugin and needs only
``compute,utility`` driver capabilities; no ``NODE_NAME``.

Placement: NVIDIA's chart puts the daemon on nodes labelled ``nvidia.com/mps.capable=true``, a
label its GPU feature discovery sets from the plugin config. gpustack deploys no GFD, so the
daemon uses the plugin's own node selector and node config affinity instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from constructs import Construct

from gpustack.constructs import k8s, kube
from gpustack.constructs.labels import Identity
from gpustack.constructs.node_daemonset import CONFIG_CHECKSUM, NodeApp, NodeDaemonSet
from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.constructs.plugin_config import CONFIG_DIR, CONFIG_KEY, CONFIG_PATH
from gpustack.constructs.waits import WaitFor

CONTAINER: Final = "mps-control-daemon"
INIT_CONTAINER: Final = "mps-control-daemon-mounts"
#: Where the plugin and the MPS daemon see the MPS root (its ``shm`` folder is their /dev/shm).
MPS_ROOT_CTR_PATH: Final = "/mps"


def mps_volumes(root: str) -> tuple[k8s.Volume, k8s.Volume]:
    """The MPS root (pipes) and its ``shm`` folder, as the plugin and the daemon mount them."""
    return (
        kube.host_path("mps-root", root, "DirectoryOrCreate"),
        kube.host_path("mps-shm", f"{root}/shm"),
    )


@dataclass(frozen=True)
class MpsControlDaemonProps:
    """Properties of one MPS control daemon DaemonSet (see the module doc). All required: the
    device plugin builds them from its own props, so nothing here restates a profile default.

    - ``name``: DaemonSet and app name.
    - ``component``: the component it belongs to (the device plugin's).
    - ``service_account``: the ServiceAccount it runs under (the plugin's).
    - ``config_map``: the plugin ConfigMap it reads (the same file as the plugin).
    - ``config_yaml``: that file's text, whose checksum rolls the daemon with the plugin.
    - ``container``: image (NVIDIA's device plugin image) and pull policy; the plugin's extra
      env and resources are not applied.
    - ``placement``: namespace and scheduling, the plugin's.
    - ``version``: for the version label.
    - ``runtime_class``: RuntimeClass that injects the GPUs and the driver's MPS binaries.
    - ``wait_for``: readiness file to wait for, as the plugin does; ``None`` waits for nothing.
    - ``wait_container``: name of that wait's init container (the plugin's).
    - ``affinity``: the node affinity of the plugin DaemonSet that reads the same config, so the
      daemon runs exactly where that plugin does; ``None`` for every selected node.
    - ``mps_root``: host folder of the MPS pipes and shared memory.
    """

    name: str
    component: str
    service_account: str
    config_map: str
    config_yaml: str
    container: ContainerSettings
    placement: Placement
    version: str
    runtime_class: str | None
    wait_for: WaitFor | None
    wait_container: str
    affinity: k8s.Affinity | None
    mps_root: str


def mps_control_daemon(scope: Construct, id: str, props: MpsControlDaemonProps) -> None:
    """The MPS control daemon DaemonSet (see :class:`MpsControlDaemonProps`) in ``scope``."""
    ident = Identity.placed(props.name, props.component, props.version, props.placement)
    ds = NodeDaemonSet(
        scope, NodeApp(ident, props.placement), service_account=props.service_account
    )
    # The plugin's ConfigMap: the daemon rolls when the file they share changes.
    ds.stamp(CONFIG_CHECKSUM, {CONFIG_KEY: props.config_yaml})
    mps_root, mps_shm = mps_volumes(props.mps_root)
    privileged = k8s.SecurityContext(privileged=True)
    env = [
        ("CONFIG_FILE", CONFIG_PATH),
        ("NVIDIA_VISIBLE_DEVICES", "all"),
        ("NVIDIA_DRIVER_CAPABILITIES", "compute,utility"),
    ]
    container = kube.main_container(
        CONTAINER,
        props.container,
        command=["mps-control-daemon"],
        env=kube.env_list(env),
        security_context=privileged,
        volume_mounts=[
            ds.mount(
                kube.config_map_volume("config", props.config_map), CONFIG_DIR, read_only=True
            ),
            ds.mount(mps_root, MPS_ROOT_CTR_PATH),
            ds.mount(mps_shm, "/dev/shm"),
        ],
    )
    init_containers = []
    if props.wait_for is not None:
        init_containers.append(ds.wait_for(props.wait_for, props.wait_container))
    init_containers.append(
        k8s.Container(
            name=INIT_CONTAINER,
            image=props.container.image,
            image_pull_policy=props.container.image_pull_policy,
            command=["mps-control-daemon", "mount-shm"],
            security_context=privileged,
            volume_mounts=[ds.mount(mps_root, MPS_ROOT_CTR_PATH, propagation="Bidirectional")],
        )
    )
    ds.add(
        id,
        props.name,
        containers=[container],
        init_containers=init_containers,
        runtime_class_name=props.runtime_class,
        host_pid=True,
        affinity=props.affinity,
    )
