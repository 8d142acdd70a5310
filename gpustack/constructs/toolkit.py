"""The NVIDIA container toolkit DaemonSet: installs the NVIDIA runtime and configures the node's
container runtime (containerd or CRI-O) to offer it, optionally with CDI.

Shape follows the GPU operator's ``nvidia-container-toolkit-daemonset``: the runtime's folders
mounted as :mod:`gpustack.constructs.toolkit_mounts` says, and ``hostPID`` lets it signal the
runtime to reload.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Final

from constructs import Construct

from gpustack.constructs import k8s, kube
from gpustack.constructs.kube import CDI_ROOT, VALIDATIONS_DIR
from gpustack.constructs.node_daemonset import VALIDATIONS, NodeDaemonSet
from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.constructs.runtime import cdi_only
from gpustack.constructs.scripts import (
    DEV_CHAR_RELINK_SECONDS,
    DEV_CHAR_SYMLINKS,
    DRIVER_ROOT_CTR_PATH,
    HOST_ROOT_CTR_PATH,
    SCRIPTS_DIR,
    TOOLKIT_CONFIGURED,
    TOOLKIT_ENTRYPOINT,
    TOOLKIT_READY,
    TOOLKIT_READY_PROBE,
    TOOLKIT_WAIT_FOR_DRIVER,
)
from gpustack.constructs.toolkit_mounts import (
    CONFIG_DIR_CTR,
    DEV_CHAR_CTR,
    DROP_IN_DIR_CTR,
    SOCKET_DIR_CTR,
    runtime_folders,
)
from gpustack.kube.labels import TOOLKIT_COMPONENT
from gpustack.profile.model import (
    SELF_CONFIGURING,
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
      ``driver.hostDriverRoot`` for a preinstalled driver, ``/`` unless it lives elsewhere).
    - ``host_driver``: the driver is preinstalled, so the init container checks it with
      ``nvidia-smi`` on the host and writes ``driver-ready`` itself.
    - ``volume_mounts``: the device plugin may hand out GPUs as volume mounts
      (``deviceListStrategy: volume-mounts``), which the runtime honours only when told to
      (``ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS``), and must then ignore the
      environment variable in unprivileged pods, as NVIDIA's chart sets it.
    - ``self_configuring``: k3s or RKE2, which render containerd's config themselves (and
      register the ``nvidia`` handler they find) on every start: the installer's imports line in
      their ``config.toml`` lasts only until then, so the probe does not look for it.
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
    volume_mounts: bool
    self_configuring: bool

    @classmethod
    def from_profile(cls, profile: Profile) -> ToolkitProps:
        t, runtime = profile.toolkit, profile.cluster.runtime
        return cls(
            container=ContainerSettings.from_section(t),
            placement=Placement.from_profile(profile),
            version=t.version,
            runtime=runtime.name,
            paths=runtime_paths(runtime, profile.cluster.kubernetes_version),
            restart_mode=runtime.resolved_restart_mode(),
            runtime_class=t.runtime_class,
            set_as_default=t.set_as_default,
            cdi=t.cdi.enabled,
            cdi_mode=t.cdi.enabled and cdi_only(profile),
            install_dir=t.install_dir,
            driver_root=profile.driver.root,
            host_driver=not profile.driver.enabled,
            volume_mounts=_volume_mounts(profile),
            self_configuring=runtime.distribution in SELF_CONFIGURING,
        )

    @property
    def config_ctr(self) -> str:
        """The runtime's top-level config as the installer sees it."""
        return CONFIG_DIR_CTR + posixpath.basename(self.paths.config)

    @property
    def drop_in_ctr(self) -> str:
        return DROP_IN_DIR_CTR + posixpath.basename(self.paths.drop_in_config)

    @property
    def socket_ctr(self) -> str | None:
        socket = self.paths.socket
        return SOCKET_DIR_CTR + posixpath.basename(socket) if socket else None

    @property
    def crio_hooks(self) -> bool:
        """CRI-O without CDI is configured through an OCI hook, not a runtime handler."""
        return self.runtime == "crio" and not self.cdi


def _volume_mounts(profile: Profile) -> bool:
    """gpustack's device plugin hands out devices as volume mounts (node configs share the
    default config's strategy)."""
    dp = profile.device_plugin
    return dp.enabled and "volume-mounts" in dp.device_list_strategy


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
    # Never empty: the installer would then write the handlers into the top-level file and
    # rewrite it with its original tree plus an imports line, losing them (issue #10, item 1).
    env += [
        ("RUNTIME_DROP_IN_CONFIG", props.drop_in_ctr),
        ("RUNTIME_DROP_IN_CONFIG_HOST_PATH", props.paths.drop_in_config),
    ]
    if props.paths.executable:
        # For the `command` config source: the runtime binary is not on the host's PATH (k0s).
        env.append(("RUNTIME_EXECUTABLE_PATH", props.paths.executable))
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
    if props.volume_mounts:
        env += [
            ("ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS", "true"),
            ("ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED", "false"),
        ]
    if props.runtime == "crio":
        env.append(("CRIO_CONFIG_MODE", "hook" if props.crio_hooks else "config"))
        if props.crio_hooks and props.paths.hooks_dir:
            env.append(("CRIO_HOOKS_DIR", props.paths.hooks_dir))
    return env


def drop_in_import(props: ToolkitProps) -> str | None:
    """The entry NVIDIA's installer adds to the top-level containerd config's ``imports``: the
    drop-in's host folder as a glob (``importPattern`` in nvidia-container-toolkit
    ``pkg/config/engine/containerd/config_drop_in.go``, the same at every tag the node tier
    runs), never the file.
    ``None`` where there is nothing to look for: CRI-O reads its ``crio.conf.d`` itself (the
    installer leaves ``crio.conf`` alone), and k3s/RKE2 render their config on every start."""
    if props.runtime != "containerd" or props.self_configuring:
        return None
    return posixpath.dirname(props.paths.drop_in_config) + "/*.toml"


def render_scripts(props: ToolkitProps) -> dict[str, str]:
    """The toolkit's scripts ConfigMap data."""
    common = {
        "validations": VALIDATIONS_DIR,
        "driver_root_ctr": DRIVER_ROOT_CTR_PATH,
        "host_root_ctr": HOST_ROOT_CTR_PATH,
    }
    return {
        "entrypoint.sh": TOOLKIT_ENTRYPOINT.render(
            **common,
            scripts_dir=SCRIPTS_DIR,
            dev_char=DEV_CHAR_CTR,
            relink_seconds=DEV_CHAR_RELINK_SECONDS,
        ),
        "ready-probe.sh": TOOLKIT_READY_PROBE.render(
            **common,
            install_dir=props.install_dir,
            hook_dir=props.paths.hooks_dir if props.crio_hooks else None,
            runtime_config=props.drop_in_ctr,
            top_level_config=props.config_ctr,
            drop_in_import=drop_in_import(props),
            cdi=props.cdi,
            cdi_root=CDI_ROOT,
            scripts_dir=SCRIPTS_DIR,
            dev_char=DEV_CHAR_CTR,
            configured=TOOLKIT_CONFIGURED,
        ),
        "wait-for-driver.sh": TOOLKIT_WAIT_FOR_DRIVER.render(
            **common, host_driver=props.host_driver, host_driver_root=props.driver_root
        ),
        "dev-char-symlinks.sh": DEV_CHAR_SYMLINKS,
    }


class ContainerToolkit(Construct):
    """ServiceAccount, scripts ConfigMap ``nvidia-container-toolkit-scripts`` and the
    ``nvidia-container-toolkit-daemonset``.

    The init container waits for ``driver-ready`` (unprivileged, reading one file) or, with a
    preinstalled driver, checks the host driver and writes it (privileged: it runs the host's
    ``nvidia-smi``). The startupProbe links every NVIDIA device node under the host's
    ``/dev/char`` and writes ``toolkit-configured`` once the runtime is configured; the device
    plugin's pod, started through the ``nvidia`` runtime, proves it with ``nvidia-smi`` and only
    then writes ``toolkit-ready``. preStop removes both, and the installer undoes its runtime
    changes on exit.
    RBAC: none and no API token: the installer only touches host files and signals the runtime
    (the operator's Role exists for OpenShift SCCs and its own DaemonSet lookups).
    """

    def __init__(self, scope: Construct, id: str, props: ToolkitProps) -> None:
        super().__init__(scope, id)
        self.props = props
        ds = NodeDaemonSet.of(self, NAME, TOOLKIT_COMPONENT, props)
        scripts = ds.scripts(render_scripts(props))
        host_root = kube.host_path("host-root", "/")
        mounts = self._mounts(ds, scripts, host_root)
        privileged = k8s.SecurityContext(
            privileged=True, se_linux_options=k8s.SeLinuxOptions(level="s0")
        )
        init = _init_container(props, ds, host_root, scripts, privileged)
        ds.add(
            "daemonset",
            DAEMONSET,
            containers=[self._installer(mounts, privileged)],
            init_containers=[init],
            default_container=True,
            host_pid=True,
        )

    def _mounts(
        self, ds: NodeDaemonSet, scripts: k8s.Volume, host_root: k8s.Volume
    ) -> list[k8s.VolumeMount]:
        """The toolkit's own folders, the driver root, the host root, the scripts, then the
        runtime's folders (:func:`~gpustack.constructs.toolkit_mounts.runtime_folders`)."""
        props = self.props
        toolkit_root = kube.host_path("toolkit-root", TOOLKIT_RUN_DIR, "DirectoryOrCreate")
        driver_root = kube.host_path("driver-root", props.driver_root, "DirectoryOrCreate")
        install = kube.host_path("toolkit-install-dir", props.install_dir, "DirectoryOrCreate")
        return [
            ds.mount(toolkit_root, TOOLKIT_RUN_DIR),
            ds.mount(VALIDATIONS, VALIDATIONS_DIR),
            # Writable: with CDI the installer creates the control device nodes under the dev
            # root, which is inside the driver root when the driver container made them.
            ds.mount(driver_root, DRIVER_ROOT_CTR_PATH, propagation="HostToContainer"),
            ds.mount(host_root, HOST_ROOT_CTR_PATH, read_only=True, propagation="HostToContainer"),
            ds.mount(install, props.install_dir),
            ds.mount(scripts, SCRIPTS_DIR, read_only=True),
            *(
                ds.mount(volume, path)
                for volume, path in runtime_folders(
                    props.runtime, props.paths, crio_hooks=props.crio_hooks, cdi=props.cdi
                )
            ),
        ]

    def _installer(
        self, mounts: list[k8s.VolumeMount], privileged: k8s.SecurityContext
    ) -> k8s.Container:
        """``nvidia-container-toolkit-ctr``: installs and configures the runtime; its
        startupProbe says when the runtime is configured, preStop removes the readiness files."""
        props = self.props
        ready = f"{VALIDATIONS_DIR}/{TOOLKIT_CONFIGURED} {VALIDATIONS_DIR}/{TOOLKIT_READY}"
        return kube.main_container(
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
                pre_stop=k8s.LifecycleHandler(exec=kube.exec_action("sh", "-c", f"rm -f {ready}"))
            ),
            volume_mounts=mounts,
        )


def _init_container(
    props: ToolkitProps,
    ds: NodeDaemonSet,
    host_root: k8s.Volume,
    scripts: k8s.Volume,
    privileged: k8s.SecurityContext,
) -> k8s.Container:
    """``driver-validation``: each variant gets only what it uses.

    Waiting for the driver container's ``driver-ready`` reads one file: unprivileged, the
    validations folder read-only, no host root. Checking a preinstalled driver runs the host's
    ``nvidia-smi`` (chroot into the host root, which reaches the GPU device nodes only from a
    privileged container) and writes ``driver-ready``.
    """
    mounts = [ds.mount(scripts, SCRIPTS_DIR, read_only=True)]
    if props.host_driver:
        mounts += [
            ds.mount(VALIDATIONS, VALIDATIONS_DIR),
            ds.mount(host_root, HOST_ROOT_CTR_PATH, read_only=True, propagation="HostToContainer"),
        ]
        security = privileged
    else:
        mounts.append(
            ds.mount(VALIDATIONS, VALIDATIONS_DIR, read_only=True, propagation="HostToContainer")
        )
        security = kube.unprivileged()
    return k8s.Container(
        name=INIT_CONTAINER,
        image=props.container.image,
        image_pull_policy=props.container.image_pull_policy,
        command=["sh", f"{SCRIPTS_DIR}/wait-for-driver.sh"],
        security_context=security,
        volume_mounts=mounts,
    )
