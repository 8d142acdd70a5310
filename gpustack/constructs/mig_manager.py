"""NVIDIA's MIG manager and the mig-parted config gpustack generates from the profile.

Why: ``gpus.mig`` (and a node config's) describes the MIG layout the device plugin and the
rules assume; the MIG manager is what applies it. It watches its node's ``nvidia.com/mig.config``
label and, when it changes, pauses the GPU clients (deploy labels set to
``paused-for-mig-change``, waiting for pods ``app=nvidia-device-plugin-daemonset``,
``app=gpu-feature-discovery``, ``app=nvidia-dcgm-exporter``), repartitions the GPUs with
mig-parted to the named config, records ``nvidia.com/mig.config.state`` and resumes the clients.
The config file (``version: v1``, ``mig-configs``) holds ``all-disabled``, ``default`` (the
layout of ``gpus.mig``) and one entry per node config with a layout, named like it (see
:func:`gpustack.profile.derive.mig_layouts`). Editing a layout changes the ConfigMap in
``dist/`` and, through its checksum, rolls the manager.

Shape follows the GPU Operator's ``assets/state-mig-manager`` (privileged, hostPID, hostIPC,
host root, ``/sys``, the driver root, CDI); its entrypoint waits for ``driver-ready`` and takes
the driver paths from it, as the toolkit does. The pod runs with the GPU RuntimeClass, as the
operator's ``TransformMIGManager`` sets it (``controllers/object_controls.go`` at v26.7.0): the
image is distroless and carries no NVML; it asks the NVIDIA runtime for ``libnvidia-ml.so.1`` and
the utilities with ``NVIDIA_VISIBLE_DEVICES=all`` and ``NVIDIA_DRIVER_CAPABILITIES=utility``
(mig-parted ``deployments/container/Dockerfile`` at v0.15.0). Without the runtime NVML is not
found and every reconfiguration ends ``failed``.

Host GPU clients, as NVIDIA renders them (``assets/state-mig-manager/0410_configmap.yaml``,
``0420_configmap.yaml`` and ``0600_daemonset.yaml`` at GPU Operator v26.7.0): the manager gets a
clients file (``GPU_CLIENTS_FILE``: ``migManager.hostGpuClients``, by default NVIDIA's list of
the systemd services of NVSM, ``nv_peer_mem``, DCGM and the DCGM exporter that may hold a GPU on
the host), and its entrypoint sets ``WITH_SHUTDOWN_HOST_GPU_CLIENTS`` from ``IS_HOST_DRIVER`` in
``driver-ready``. With a
driver installed on the host (``driver.enabled: false``), a MIG mode change stops those services
(and ``kubelet.service``) over the host's D-Bus (``/host/run/dbus/system_bus_socket``), runs a
copy of ``nvidia-mig-parted`` chrooted into ``/host`` and starts the services again
(``pkg/mig/reconfigure`` and ``cmd/nvidia-mig-manager/main.go`` ``copyMigPartedToHost``,
mig-parted v0.15.0); without the file and the flag it changes the mode while DCGM holds the GPU,
and the change fails. That needs the host root mounted writable at ``/host`` and hostPID, both
already there. A driver container (``IS_HOST_DRIVER=false``) has no host clients to stop. A
``WITH_SHUTDOWN_HOST_GPU_CLIENTS`` in ``migManager.env`` wins over the derived value.

RBAC (:data:`CLUSTER_RULES`, :data:`RULES`) is what ``cmd/nvidia-mig-manager`` and
``pkg/mig/reconfigure`` call in gpustack's configuration (mig-parted v0.15.0): stopping host
services goes over D-Bus, not the API; no validator pods to delete (gpustack has none),
``CONFIG_FILE`` always set, so the v0.14+ discovery path that writes a per-node ConfigMap
(``POD_NAME``, ``POD_NAMESPACE``, configmaps create/update) never runs. From v0.15.0 it also
waits for every DaemonSet pod on its node whose node selector names
``nvidia.com/gpu.deploy.client`` (a pods list in all namespaces, ``waitForPodsWithNodeSelector``),
so the pods list is cluster-wide (:data:`CLUSTER_POD_RULES`);
an older pinned manager (v0.13.x, v0.14.x) lists only the stack namespace and gets only the Role.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from constructs import Construct

from gpustack.constructs import k8s, kube
from gpustack.constructs.config_text import config_yaml
from gpustack.constructs.kube import CDI_ROOT, VALIDATIONS_DIR
from gpustack.constructs.node_daemonset import (
    CONFIG_CHECKSUM,
    VALIDATIONS,
    NodeDaemonSet,
)
from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.constructs.rbac import TOKEN_DIR, Access, grant, token_volume
from gpustack.constructs.runtime import gpu_runtime_class
from gpustack.constructs.scripts import DRIVER_ROOT_CTR_PATH, SCRIPTS_DIR
from gpustack.constructs.waits import WaitFor, gpu_wait
from gpustack.kube.labels import MIG_MANAGER_COMPONENT
from gpustack.profile import readiness
from gpustack.profile.derive import MIG_CONFIG_LABEL, MIG_STATE_LABEL, mig_layouts
from gpustack.profile.model import Profile
from gpustack.profile.versions import tag_at_least

NAME: Final = "nvidia-mig-manager"
COMPONENT: Final = MIG_MANAGER_COMPONENT
CONFIG_MAP: Final = "nvidia-mig-manager-config"
CONFIG_KEY: Final = "config.yaml"
CONFIG_DIR: Final = "/mig-parted-config"
#: The node label whose value names the config to apply, and the one the manager reports in.
CONFIG_LABEL: Final = MIG_CONFIG_LABEL
STATE_LABEL: Final = MIG_STATE_LABEL
#: The host GPU clients file: a ConfigMap mounted at :data:`GPU_CLIENTS_DIR`.
GPU_CLIENTS_MAP: Final = "nvidia-mig-manager-gpu-clients"
GPU_CLIENTS_KEY: Final = "clients.yaml"
GPU_CLIENTS_DIR: Final = "/gpu-clients"
#: Pod-template annotation with the checksum of the clients file (a new list rolls the manager).
GPU_CLIENTS_CHECKSUM: Final = "gpustack.dev/gpu-clients-checksum"
CLUSTER_ROLE: Final = "gpustack-nvidia-mig-manager-pods"
ROLE: Final = "gpustack-nvidia-mig-manager-pods"

CLUSTER_RULES: Final = (
    Access(
        "",
        ("nodes",),
        ("get", "list", "watch", "patch"),
        "watch its node's nvidia.com/mig.config label (an informer on its node); set"
        " nvidia.com/mig.config.state and pause or resume the GPU clients' deploy labels",
    ),
)
RULES: Final = (
    Access(
        "",
        ("pods",),
        ("list",),
        "wait until the paused GPU clients' pods on its node are gone (stack namespace)",
    ),
)
#: The first MIG manager release that lists pods in every namespace.
CLUSTER_PODS_SINCE: Final = "v0.15.0"
CLUSTER_POD_RULES: Final = (
    Access(
        "",
        ("pods",),
        ("list",),
        "wait until third-party DaemonSet pods selecting nvidia.com/gpu.deploy.client on its"
        " node are gone (all namespaces; v0.15.0 and later)",
    ),
)


def cluster_rules(version: str) -> tuple[Access, ...]:
    """The ClusterRole's rules for a MIG manager release (see the module docstring)."""
    if tag_at_least(version, CLUSTER_PODS_SINCE):
        return CLUSTER_RULES + CLUSTER_POD_RULES
    return CLUSTER_RULES


_DRIVER_READY: Final = readiness.validation(readiness.DRIVER_READY)
_ENTRYPOINT: Final = f"""\
#!/bin/sh
# MIG manager entrypoint: take the driver's paths from driver-ready, then run the manager.
set -eu
until [ -f "{_DRIVER_READY}" ]; do
  echo "waiting for {_DRIVER_READY}"
  sleep 5
done
set -a
. "{_DRIVER_READY}"
set +a
# a host driver may have host GPU clients (DCGM, NVSM) to stop across a MIG mode change
WITH_SHUTDOWN_HOST_GPU_CLIENTS="${{WITH_SHUTDOWN_HOST_GPU_CLIENTS:-${{IS_HOST_DRIVER:-false}}}}"
export WITH_SHUTDOWN_HOST_GPU_CLIENTS
echo "WITH_SHUTDOWN_HOST_GPU_CLIENTS=$WITH_SHUTDOWN_HOST_GPU_CLIENTS"
exec nvidia-mig-manager
"""


def render_gpu_clients(services: tuple[str, ...]) -> str:
    """The host GPU clients file mig-manager reads (``version: v1``, ``systemd-services``)."""
    return config_yaml({"version": "v1", "systemd-services": list(services)})


def render_config(layouts: dict[str, tuple[tuple[str, int], ...]]) -> str:
    """The mig-parted config file: every GPU of a node gets the named layout."""
    configs: dict[str, list[dict[str, object]]] = {}
    for name, layout in layouts.items():
        if layout:
            configs[name] = [{"devices": "all", "mig-enabled": True, "mig-devices": dict(layout)}]
        else:
            configs[name] = [{"devices": "all", "mig-enabled": False}]
    return config_yaml({"version": "v1", "mig-configs": configs})


@dataclass(frozen=True)
class MigManagerProps:
    """Properties for :class:`MigManager`, from ``migManager``, ``gpus``, the node configs,
    ``toolkit`` and ``driver`` (the profile model owns the defaults).

    - ``container``: image, pull policy, env, resources.
    - ``placement``: namespace and scheduling.
    - ``version``: for the version label.
    - ``config_yaml``: the mig-parted config (:func:`render_config`).
    - ``host_gpu_clients``: the host's systemd services the clients file lists.
    - ``driver_root``: host path of the driver root.
    - ``cdi``: the toolkit writes CDI specs, which the manager regenerates after a change.
    - ``cdi_hook``: the host path of ``nvidia-cdi-hook`` (gpustack's toolkit install dir).
    - ``wait_for``: the ``toolkit-validation`` init container's file, as the GPU Operator's
      (see :func:`gpustack.constructs.waits.gpu_wait`); the entrypoint then waits for
      ``driver-ready`` and reads the driver's paths from it.
    - ``runtime_class``: the RuntimeClass that injects NVML and ``nvidia-smi``; ``None`` where
      CRI-O's hook already applies to every container.
    """

    container: ContainerSettings
    placement: Placement
    version: str
    config_yaml: str
    host_gpu_clients: tuple[str, ...]
    driver_root: str
    cdi: bool
    cdi_hook: str | None
    wait_for: WaitFor | None
    runtime_class: str | None

    @classmethod
    def from_profile(cls, profile: Profile) -> MigManagerProps:
        toolkit = profile.toolkit
        cdi = toolkit.enabled and toolkit.cdi.enabled
        return cls(
            container=ContainerSettings.from_section(profile.mig_manager),
            placement=Placement.from_profile(profile),
            version=profile.mig_manager.version,
            config_yaml=render_config(mig_layouts(profile)),
            host_gpu_clients=profile.mig_manager.host_gpu_clients,
            driver_root=profile.driver.root,
            cdi=cdi,
            cdi_hook=f"{toolkit.install_dir}/toolkit/nvidia-cdi-hook" if cdi else None,
            wait_for=gpu_wait(profile),
            runtime_class=gpu_runtime_class(profile),
        )


class MigManager(Construct):
    """ServiceAccount, RBAC, config and scripts ConfigMaps, and ``nvidia-mig-manager``."""

    def __init__(self, scope: Construct, id: str, props: MigManagerProps) -> None:
        super().__init__(scope, id)
        self.props = props
        ds = NodeDaemonSet.of(self, NAME, COMPONENT, props)
        roles = ((CLUSTER_ROLE, cluster_rules(props.version), True), (ROLE, RULES, False))
        for name, rules, cluster in roles:
            grant(
                self,
                ds.app.ident,
                name=name,
                namespace=props.placement.namespace,
                service_account=ds.service_account,
                rules=rules,
                cluster=cluster,
            )
        ds.add(
            "daemonset",
            NAME,
            containers=[self._manager(self._mounts(ds))],
            init_containers=ds.waits(props.wait_for, "toolkit-validation"),
            host_pid=True,
            host_ipc=True,
            runtime_class_name=props.runtime_class,
        )

    def _mounts(self, ds: NodeDaemonSet) -> list[k8s.VolumeMount]:
        """Its three ConfigMaps (scripts, MIG layouts, host GPU clients), the readiness files,
        the host's ``/sys``, root and driver root, the CDI folder and the API token."""
        props = self.props
        config = ds.config_map(
            "config",
            CONFIG_MAP,
            {CONFIG_KEY: props.config_yaml},
            checksum=CONFIG_CHECKSUM,
            volume="mig-parted-config",
        )
        clients = ds.config_map(
            "gpu-clients",
            GPU_CLIENTS_MAP,
            {GPU_CLIENTS_KEY: render_gpu_clients(props.host_gpu_clients)},
            checksum=GPU_CLIENTS_CHECKSUM,
            volume="gpu-clients",
        )
        scripts = ds.scripts({"entrypoint.sh": _ENTRYPOINT})
        driver_root = kube.host_path("driver-root", props.driver_root, "DirectoryOrCreate")
        return [
            ds.mount(scripts, SCRIPTS_DIR, read_only=True),
            ds.mount(config, CONFIG_DIR, read_only=True),
            ds.mount(clients, GPU_CLIENTS_DIR, read_only=True),
            ds.mount(VALIDATIONS, VALIDATIONS_DIR),
            ds.mount(kube.host_path("host-sys", "/sys", "Directory"), "/sys"),
            ds.mount(kube.host_path("host-root", "/"), "/host", propagation="HostToContainer"),
            ds.mount(driver_root, DRIVER_ROOT_CTR_PATH, propagation="HostToContainer"),
            ds.mount(kube.host_path("cdi-root", CDI_ROOT, "DirectoryOrCreate"), CDI_ROOT),
            ds.mount(token_volume(), TOKEN_DIR, read_only=True),
        ]

    def _manager(self, mounts: list[k8s.VolumeMount]) -> k8s.Container:
        """``nvidia-mig-manager``: applies the node's MIG layout."""
        props = self.props
        env = [
            ("CONFIG_FILE", f"{CONFIG_DIR}/{CONFIG_KEY}"),
            ("GPU_CLIENTS_FILE", f"{GPU_CLIENTS_DIR}/{GPU_CLIENTS_KEY}"),
            ("WITH_REBOOT", "false"),
            ("CDI_ENABLED", "true" if props.cdi else "false"),
        ]
        if props.cdi_hook:
            env.append(("NVIDIA_CDI_HOOK_PATH", props.cdi_hook))
        return kube.main_container(
            NAME,
            props.container,
            command=["sh", f"{SCRIPTS_DIR}/entrypoint.sh"],
            env=kube.env_list(
                env,
                props.container.env,
                field_refs={
                    "NODE_NAME": "spec.nodeName",
                    "DEFAULT_GPU_CLIENTS_NAMESPACE": "metadata.namespace",
                },
            ),
            # repartitions GPUs (nvidia-smi / NVML as root) and restarts host GPU services
            security_context=k8s.SecurityContext(privileged=True),
            volume_mounts=mounts,
        )
