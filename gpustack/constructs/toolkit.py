"""The NVIDIA container toolkit DaemonSet: installs the NVIDIA runtime and configures the node's
container runtime (containerd or CRI-O) to offer it, optionally with CDI.

Shape follows the GPU operator's ``nvidia-container-toolkit-daemonset``: the runtime's config,
drop-in and socket are reached through their *parent directories* mounted at
``/runtime/config-dir/``, ``/runtime/config-dir.d/`` and ``/runtime/sock-dir/`` (the installer
replaces files atomically, which a file mount would not see), and ``hostPID`` lets it signal the
runtime to reload.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Final

from cdk8s_plus_33 import k8s
from constructs import Construct

from gpustack.constructs import kube
from gpustack.constructs.kube import CDI_ROOT, VALIDATIONS_DIR
from gpustack.constructs.labels import Identity
from gpustack.constructs.node_daemonset import VALIDATIONS, NodeApp, NodeDaemonSet
from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.constructs.runtime import cdi_only
from gpustack.constructs.scripts import (
    DRIVER_ROOT_CTR_PATH,
    HOST_ROOT_CTR_PATH,
    SCRIPTS_DIR,
    TOOLKIT_ENTRYPOINT,
    TOOLKIT_READY_PROBE,
    TOOLKIT_WAIT_FOR_DRIVER,
)
from gpustack.profile.model import (
    Profile,
    RestartMode,
    RuntimeName,
    RuntimePaths,
    runtime_paths,
)

NAME: Final = "nvidia-container-toolkit"
DAEMONSET: Final = "nvidia-container-toolkit-daemonset"
CONTAINER: Final = "nvidia-container-toolkit-ctr"
INIT_CONTAINER: Final = "driver-validation"

TOOLKIT_RUN_DIR: Final = "/run/nvidia/toolkit"
PID_FILE: Final = f"{TOOLKIT_RUN_DIR}/toolkit.pid"
CDI_KIND: Final = "management.nvidia.com/gpu"
#: CRI-O reads OCI hooks here; the toolkit installs its hook here when CDI is off.
CRIO_HOOKS_DIR: Final = "/usr/share/containers/oci/hooks.d"
CONFIG_DIR_CTR: Final = "/runtime/config-dir/"
DROP_IN_DIR_CTR: Final = "/runtime/config-dir.d/"
SOCKET_DIR_CTR: Final = "/runtime/sock-dir/"


@dataclass(frozen=True)
class ToolkitProps:
    """Properties for :class:`ContainerToolkit`, all from the profile's ``toolkit``, ``driver``
    and ``cluster`` sections (:meth:`from_profile`; the profile model owns the defaults).

    - ``container``: image ``<toolkit.image>:<version>``, pull policy, extra env, resources.
    - ``placement``: namespace and scheduling.
    - ``version``: toolkit version, for the version label.
    - ``runtime``: the node's runtime, ``containerd`` or ``crio``.
    - ``paths``: host paths of the runtime's config, drop-in and socket and the config source, as
      resolved by :func:`gpustack.profile.model.runtime_paths`.
    - ``restart_mode``: how the installer makes the runtime reload (``signal`` needs hostPID
      and works for containerd only; CRI-O needs ``systemd``, which the profile resolves for
      it).
    - ``runtime_class``: name of the runtime handler to register.
    - ``set_as_default``: make the NVIDIA runtime the node default (off by default: pods opt in
      through the RuntimeClass or CDI; a default runtime exposes GPUs to pods that request none).
    - ``cdi``: generate CDI specs (the management spec, whose only device is ``all``) and
      enable CDI in the runtime.
    - ``cdi_mode``: run the ``nvidia`` handler in CDI mode, which turns every
      ``NVIDIA_VISIBLE_DEVICES`` entry into a ``management.nvidia.com/gpu`` device. Only right
      when the device plugin hands out CDI device names alone: that spec has no per-GPU devices,
      so a pod given ``NVIDIA_VISIBLE_DEVICES=GPU-<uuid>`` (the ``envvar`` strategy) would fail to
      start. Otherwise the installer's ``auto`` mode applies (per-GPU IDs work, and containers
      that name only CDI devices still get CDI).
    - ``install_dir``: host directory the toolkit installs into.
    - ``driver_root``: host path of the driver root (``driver.root``: the driver container's, or
      ``/`` for a preinstalled driver).
    - ``host_driver``: the driver is preinstalled, so the init container checks it with
      ``chroot /host nvidia-smi`` and writes ``driver-ready`` itself.
    """

    container: ContainerSettings
    placement: Placement
    version: str
    runtime: RuntimeName
    paths: RuntimePaths
    restart_mode: RestartMode
    runtime_class: str
    set_as_default: bool
    cdi: bool
    cdi_mode: bool
    install_dir: str
    driver_root: str
    host_driver: bool

    @classmethod
    def from_profile(cls, profile: Profile) -> ToolkitProps:
        t, runtime = profile.toolkit, profile.cluster.runtime
        return cls(
            container=ContainerSettings.from_section(t),
            placement=Placement.from_profile(profile),
            version=t.version,
            runtime=runtime.name,
            paths=runtime_paths(runtime),
            restart_mode=runtime.resolved_restart_mode(),
            runtime_class=t.runtime_class,
            set_as_default=t.set_as_default,
            cdi=t.cdi.enabled,
            cdi_mode=t.cdi.enabled and cdi_only(profile),
            install_dir=t.install_dir,
            driver_root=profile.driver.root,
            host_driver=not profile.driver.enabled,
        )

    @property
    def config_ctr(self) -> str:
        """The runtime's top-level config as the installer sees it."""
        return CONFIG_DIR_CTR + posixpath.basename(self.paths.config)

    @property
    def drop_in_ctr(self) -> str | None:
        drop_in = self.paths.drop_in_config
        return DROP_IN_DIR_CTR + posixpath.basename(drop_in) if drop_in else None

    @property
    def socket_ctr(self) -> str | None:
        socket = self.paths.socket
        return SOCKET_DIR_CTR + posixpath.basename(socket) if socket else None

    @property
    def crio_hooks(self) -> bool:
        """CRI-O without CDI is configured through an OCI hook, not a runtime handler."""
        return self.runtime == "crio" and not self.cdi


def _bool(value: bool) -> str:
    return "true" if value else "false"


def toolkit_env(props: ToolkitProps) -> list[tuple[str, str]]:
    """The installer's environment (nvidia-ctk-installer), in a stable order."""
    containerd = props.runtime == "containerd"
    env = [
        ("ROOT", props.install_dir),
        ("NVIDIA_VISIBLE_DEVICES", "void"),
        ("TOOLKIT_PID_FILE", PID_FILE),
        ("RUNTIME", props.runtime),
        ("RUNTIME_CONFIG", props.config_ctr),
        ("CONTAINERD_CONFIG" if containerd else "CRIO_CONFIG", props.config_ctr),
    ]
    if props.drop_in_ctr and props.paths.drop_in_config:
        env += [
            ("RUNTIME_DROP_IN_CONFIG", props.drop_in_ctr),
            ("RUNTIME_DROP_IN_CONFIG_HOST_PATH", props.paths.drop_in_config),
        ]
    else:
        # No drop-in directory on this distribution: the installer edits the top-level config.
        env.append(("RUNTIME_DROP_IN_CONFIG", ""))
    if props.socket_ctr:
        env.append(("RUNTIME_SOCKET", props.socket_ctr))
        if containerd:
            env.append(("CONTAINERD_SOCKET", props.socket_ctr))
    source = [
        f"file={HOST_ROOT_CTR_PATH}{s[len('file=') :]}" if s.startswith("file=/") else s
        for s in props.paths.config_source
    ]
    env += [
        ("RUNTIME_CONFIG_SOURCE", ",".join(source)),
        ("RUNTIME_RESTART_MODE", props.restart_mode),
        ("NVIDIA_RUNTIME_NAME", props.runtime_class),
    ]
    if containerd:
        env.append(("CONTAINERD_RUNTIME_CLASS", props.runtime_class))
    env += [
        ("NVIDIA_RUNTIME_SET_AS_DEFAULT", _bool(props.set_as_default)),
        ("CDI_ENABLED", _bool(props.cdi)),
    ]
    if props.cdi:
        if props.cdi_mode:
            env.append(("NVIDIA_CONTAINER_RUNTIME_MODE", "cdi"))
        env += [
            ("NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND", CDI_KIND),
            ("CDI_OUTPUT_DIR", CDI_ROOT),
        ]
    if props.runtime == "crio":
        env.append(("CRIO_CONFIG_MODE", "hook" if props.crio_hooks else "config"))
    return env


def render_scripts(props: ToolkitProps) -> dict[str, str]:
    """The toolkit's scripts ConfigMap data."""
    common = {
        "validations": VALIDATIONS_DIR,
        "driver_root_ctr": DRIVER_ROOT_CTR_PATH,
        "host_root_ctr": HOST_ROOT_CTR_PATH,
    }
    return {
        "entrypoint.sh": TOOLKIT_ENTRYPOINT.render(**common),
        "ready-probe.sh": TOOLKIT_READY_PROBE.render(
            **common,
            install_dir=props.install_dir,
            hook_dir=CRIO_HOOKS_DIR if props.crio_hooks else None,
            runtime_config=props.drop_in_ctr or props.config_ctr,
            cdi=props.cdi,
            cdi_root=CDI_ROOT,
        ),
        "wait-for-driver.sh": TOOLKIT_WAIT_FOR_DRIVER.render(
            **common, host_driver=props.host_driver
        ),
    }


class ContainerToolkit(Construct):
    """ServiceAccount, scripts ConfigMap ``nvidia-container-toolkit-scripts`` and the
    ``nvidia-container-toolkit-daemonset``.

    The init container waits for ``driver-ready`` (or, with a preinstalled driver, checks the host
    driver and writes it). The startupProbe writes ``toolkit-ready`` once the runtime is
    configured; preStop removes it, and the installer undoes its runtime changes on exit.
    RBAC: none and no API token: the installer only touches host files and signals the runtime
    (the operator's Role exists for OpenShift SCCs and its own DaemonSet lookups).
    """

    def __init__(self, scope: Construct, id: str, props: ToolkitProps) -> None:
        super().__init__(scope, id)
        self.props = props
        ident = Identity(NAME, "container-toolkit", props.version, props.placement.labels)
        app = NodeApp(ident, props.placement)
        ds = NodeDaemonSet(self, app, service_account=app.service_account(self))
        scripts = ds.scripts(render_scripts(props))

        runtime = props.runtime
        host_root = kube.host_path("host-root", "/")
        mounts = [
            ds.mount(
                kube.host_path("toolkit-root", TOOLKIT_RUN_DIR, "DirectoryOrCreate"),
                TOOLKIT_RUN_DIR,
            ),
            ds.mount(VALIDATIONS, VALIDATIONS_DIR),
            # Writable: with CDI the installer creates the control device nodes under the dev
            # root, which is inside the driver root when the driver container made them.
            ds.mount(
                kube.host_path("driver-root", props.driver_root, "DirectoryOrCreate"),
                DRIVER_ROOT_CTR_PATH,
                propagation="HostToContainer",
            ),
            ds.mount(host_root, HOST_ROOT_CTR_PATH, read_only=True, propagation="HostToContainer"),
            ds.mount(
                kube.host_path("toolkit-install-dir", props.install_dir, "DirectoryOrCreate"),
                props.install_dir,
            ),
            ds.mount(scripts, SCRIPTS_DIR, read_only=True),
            ds.mount(
                kube.host_path(
                    f"{runtime}-config", posixpath.dirname(props.paths.config), "DirectoryOrCreate"
                ),
                CONFIG_DIR_CTR,
            ),
        ]
        if props.paths.drop_in_config:
            drop_in_dir = posixpath.dirname(props.paths.drop_in_config)
            volume = kube.host_path(f"{runtime}-drop-in-config", drop_in_dir, "DirectoryOrCreate")
            mounts.append(ds.mount(volume, DROP_IN_DIR_CTR))
        if props.paths.socket:
            volume = kube.host_path(f"{runtime}-socket", posixpath.dirname(props.paths.socket))
            mounts.append(ds.mount(volume, SOCKET_DIR_CTR))
        if props.crio_hooks:
            volume = kube.host_path("crio-hooks", CRIO_HOOKS_DIR, "DirectoryOrCreate")
            mounts.append(ds.mount(volume, CRIO_HOOKS_DIR))
        if props.cdi:
            volume = kube.host_path("cdi-root", CDI_ROOT, "DirectoryOrCreate")
            mounts.append(ds.mount(volume, CDI_ROOT))

        privileged = k8s.SecurityContext(
            privileged=True, se_linux_options=k8s.SeLinuxOptions(level="s0")
        )
        init = k8s.Container(
            name=INIT_CONTAINER,
            image=props.container.image,
            image_pull_policy=props.container.image_pull_policy,
            command=["sh", f"{SCRIPTS_DIR}/wait-for-driver.sh"],
            security_context=privileged,
            volume_mounts=[
                ds.mount(VALIDATIONS, VALIDATIONS_DIR),
                ds.mount(
                    host_root, HOST_ROOT_CTR_PATH, read_only=True, propagation="HostToContainer"
                ),
                ds.mount(scripts, SCRIPTS_DIR, read_only=True),
            ],
        )
        ready = f"{VALIDATIONS_DIR}/toolkit-ready"
        container = kube.main_container(
            CONTAINER,
            props.container,
            command=["sh", f"{SCRIPTS_DIR}/entrypoint.sh"],
            env=kube.env_list(toolkit_env(props), props.container.env),
            security_context=privileged,
            startup_probe=k8s.Probe(
                exec=kube.exec_action("sh", f"{SCRIPTS_DIR}/ready-probe.sh"),
                initial_delay_seconds=5,
                period_seconds=5,
                timeout_seconds=10,
                failure_threshold=120,
            ),
            lifecycle=k8s.Lifecycle(
                pre_stop=k8s.LifecycleHandler(exec=kube.exec_action("rm", "-f", ready))
            ),
            volume_mounts=mounts,
        )
        ds.add(
            "daemonset",
            DAEMONSET,
            containers=[container],
            init_containers=[init],
            default_container=True,
            host_pid=True,
        )
