"""The NVIDIA driver DaemonSet: builds and loads the kernel module in a container on each node.

Shape follows the GPU operator's ``nvidia-driver-daemonset``: privileged, ``hostPID``, one pod per
node, ``OnDelete`` updates (replacing a loaded driver under running GPU jobs is never automatic),
and a startupProbe with a long budget because the first start compiles the module. Omitted when
the driver is preinstalled on the host (``driver.enabled: false``). With GPUDirect RDMA
(``driver.rdma.enabled``) a ``nvidia-peermem-ctr`` sidecar loads ``nvidia-peermem``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from constructs import Construct

from gpustack.constructs import k8s, kube
from gpustack.constructs.driver_manager import (
    DIGEST_ENV,
    DriverManagerProps,
    add_driver_manager,
    config_digest,
)
from gpustack.constructs.driver_nodes import one_per_node, os_affinity, pinned
from gpustack.constructs.driver_rdma import (
    MELLANOX_MOUNTS,
    LivenessProbe,
    mofed_wait,
    peermem_container,
    rdma_env,
)
from gpustack.constructs.driver_toolkit import (
    DTK_SHARED,
    driver_daemonsets,
    driver_toolkit,
    dtk_container,
    shared_volume,
)
from gpustack.constructs.kube import VALIDATIONS_DIR
from gpustack.constructs.node_daemonset import NodeDaemonSet
from gpustack.constructs.placement import PRE_INSTALLED, ContainerSettings, Placement
from gpustack.constructs.scripts import (
    DRIVER_ROOT_CTR_PATH,
    DRIVER_STARTUP_PROBE,
    HOST_ROOT_CTR_PATH,
    SCRIPTS_DIR,
)
from gpustack.kube.labels import DRIVER_COMPONENT
from gpustack.profile.model import (
    DRIVER_CONTAINER_ROOT,
    DRIVER_OS_PATHS,
    DriverToolkit,
    KernelModuleType,
    Profile,
    Rdma,
    StartupProbe,
)

NAME: Final = "nvidia-driver"
DAEMONSET: Final = "nvidia-driver-daemonset"
CONTAINER: Final = "nvidia-driver-ctr"


@dataclass(frozen=True)
class DriverProps:
    """Properties for :class:`NvidiaDriver`. The fields up to ``rdma`` come from the profile's
    ``driver`` and ``cluster`` sections (:meth:`from_profile`; the profile model owns their
    defaults); the last two are the construct's own choices.

    - ``container``: image ``<driver.image>:<version>-<osTag>`` (or digest / precompiled tag),
      pull policy, extra env and resources.
    - ``placement``: namespace and scheduling.
    - ``version``: driver version, for the version label.
    - ``kernel_module_type``: ``auto`` lets the container choose open or proprietary modules for
      the GPU.
    - ``startup_probe``: budget to compile and load the module.
    - ``kernel_module_config_map``: ConfigMap with module parameters (``nvidia.conf``...), mounted
      at ``/drivers`` where the driver container reads them; ``None`` for none.
    - ``repo_config``, ``cert_config``: (ConfigMap, folder) of package repository files and
      CA certificates, mounted read-only over the image OS's own folder (see
      :data:`gpustack.profile.model.DRIVER_OS_PATHS`), for nodes that reach packages only
      through a mirror or a TLS-intercepting proxy; ``None`` for none.
    - ``termination_grace_period_seconds``: time to stop GPU daemons and unload the modules on
      delete. Default 300 (unloading waits for the GPU to go idle; the API default 30 s kills the
      container mid-unload).
    - ``rdma``: GPUDirect RDMA. When ``rdma.enabled``, the driver container gets
      ``GPU_DIRECT_RDMA_ENABLED=true`` and ``USE_HOST_MOFED`` and mounts the Mellanox OFED paths
      ``/run/mellanox/drivers`` and ``/run/mellanox/drivers/usr/src`` (hostPath
      ``DirectoryOrCreate``, ``HostToContainer``: a MOFED driver container publishes there);
      a privileged ``nvidia-peermem-ctr`` sidecar (the driver image) runs
      ``nvidia-driver reload_nvidia_peermem`` with ``/run/nvidia`` and ``/run/mellanox/drivers``
      mounted and the same two variables; the startupProbe records
      ``GPU_DIRECT_RDMA_ENABLED=true`` in ``.driver-ctr-ready``.
    - ``os_release``: ``(ID, VERSION_ID)`` of the OS the image is built for (from
      ``driver.osTag``): a node that Node Feature Discovery labels with another OS
      (``feature.node.kubernetes.io/system-os_release.ID``/``.VERSION_ID``) gets no driver pod
      instead of one that pulls an image for another OS and fails to build; nodes without those
      labels are taken to run that OS (see
      :func:`gpustack.constructs.driver_nodes.os_affinity`).
    - ``precompiled_kernel``: the kernel a precompiled image was built for (``None`` when the
      driver builds on the node): the pod runs only where NFD's
      ``feature.node.kubernetes.io/kernel-version.full`` is that kernel, as the GPU Operator's
      ``transformPrecompiledDriverDaemonset`` pins it (``controllers/object_controls.go``,
      ``golden/driver-precompiled.yaml``, v26.7.0). Without it, a node whose kernel was updated
      would load modules built for another kernel.
    - ``driver_toolkit``: on OpenShift, ``driver.driverToolkit`` (all three values set; the
      rule ``openshift-driver-needs-driver-toolkit`` sees to it): the modules are built in an
      ``openshift-driver-toolkit-ctr`` side-car, and the pod runs only on nodes of that RHCOS
      build (see :mod:`gpustack.constructs.driver_toolkit`). ``None`` elsewhere.
    - ``peermem_liveness``: the sidecar's livenessProbe (``nvidia-driver probe_nvidia_peermem``).
      Default every 30 s, 10 s timeout, restart after 3 failures (about 90 s without the module;
      the restarted sidecar loads it again). Its startupProbe runs the same command with the
      ``startup_probe`` budget, because nvidia-peermem can load only after the driver has been
      compiled and loaded.
    """

    container: ContainerSettings
    placement: Placement
    version: str
    kernel_module_type: KernelModuleType
    startup_probe: StartupProbe
    kernel_module_config_map: str | None
    repo_config: tuple[str, str] | None
    cert_config: tuple[str, str] | None
    rdma: Rdma
    os_release: tuple[str, str]
    #: NVIDIA's driver manager (``driver.upgrade``), ``None`` without; see
    #: :mod:`gpustack.constructs.driver_manager`.
    manager: DriverManagerProps | None
    precompiled_kernel: str | None
    driver_toolkit: DriverToolkit | None
    termination_grace_period_seconds: int = 300
    peermem_liveness: LivenessProbe = field(default_factory=LivenessProbe)

    @classmethod
    def from_profile(cls, profile: Profile) -> DriverProps:
        d = profile.driver
        os_paths = DRIVER_OS_PATHS.get(d.os_family)
        if os_paths is None and (d.repo_config_map or d.cert_config_map):
            raise ValueError(  # the rules say so first, with the line
                f"gpustack does not know where a {d.os_tag} driver image reads repositories"
                " and certificates"
            )
        repo_dir, cert_dir = os_paths or ("", "")
        return cls(
            container=ContainerSettings.from_section(d),
            placement=Placement.from_profile(profile),
            version=d.version,
            kernel_module_type=d.kernel_module_type,
            startup_probe=d.startup_probe,
            kernel_module_config_map=d.kernel_module_config_map,
            repo_config=(d.repo_config_map, repo_dir) if d.repo_config_map else None,
            cert_config=(d.cert_config_map, cert_dir) if d.cert_config_map else None,
            rdma=d.rdma,
            os_release=d.os_release,
            manager=DriverManagerProps.from_profile(profile),
            precompiled_kernel=d.kernel_version if d.use_precompiled else None,
            driver_toolkit=driver_toolkit(profile),
        )


def render_scripts(*, rdma: bool = False) -> dict[str, str]:
    """The driver's scripts ConfigMap data."""
    probe = DRIVER_STARTUP_PROBE.render(
        validations=VALIDATIONS_DIR,
        sys_module="/sys/module",
        driver_root=DRIVER_CONTAINER_ROOT,
        driver_root_ctr=DRIVER_ROOT_CTR_PATH,
        host_root_ctr=HOST_ROOT_CTR_PATH,
        rdma=rdma,
    )
    return {"startup-probe.sh": probe}


# (volume, host path, hostPath type, container path, read-only, propagation)
_HOST_MOUNTS: Final = (
    # The driver exposes its root (DRIVER_CONTAINER_ROOT) under /run/nvidia; the toolkit and the
    # plugin see it there.
    ("run-nvidia", "/run/nvidia", "DirectoryOrCreate", "/run/nvidia", None, "Bidirectional"),
    ("var-log", "/var/log", None, "/var/log", None, None),
    ("dev-log", "/dev/log", None, "/dev/log", None, None),
    ("host-os-release", "/etc/os-release", None, "/host-etc/os-release", True, None),
    ("run-nvidia-fabricmanager", "/run/nvidia-fabricmanager", "DirectoryOrCreate",
     "/run/nvidia-fabricmanager", None, None),
    ("run-nvidia-topologyd", "/run/nvidia-topologyd", "DirectoryOrCreate",
     "/run/nvidia-topologyd", None, None),
    ("host-sys-devices-system", "/sys/devices/system", "Directory", "/sys/devices/system",
     None, None),
    # GSP firmware: the kernel looks for it on the host, so point its search path at the driver.
    ("firmware-search-path", "/sys/module/firmware_class/parameters/path", None,
     "/sys/module/firmware_class/parameters/path", None, None),
    ("nv-firmware", f"{DRIVER_CONTAINER_ROOT}/lib/firmware", "DirectoryOrCreate", "/lib/firmware",
     None, None),
)  # fmt: skip


class NvidiaDriver(Construct):
    """ServiceAccount, scripts ConfigMap ``nvidia-driver-scripts`` and the
    ``nvidia-driver-daemonset``.

    The startupProbe runs ``startup-probe.sh`` from the scripts ConfigMap: it checks the module
    and ``nvidia-smi``, then writes ``.driver-ctr-ready`` and ``driver-ready`` under
    ``/run/nvidia/validations`` (gpustack has no validator pod, so the driver announces itself).
    preStop removes them. RBAC: none, and no API token: the operator's driver-manager init
    container (which evicts GPU pods through the API) is not used.
    """

    def __init__(self, scope: Construct, id: str, props: DriverProps) -> None:
        super().__init__(scope, id)
        self.props = props
        # deploy_off: the driver manager found a driver on the host
        ds = NodeDaemonSet.of(self, NAME, DRIVER_COMPONENT, props, deploy_off=(PRE_INSTALLED,))
        app = ds.app
        digest = config_digest(props) if props.manager else None
        digest_env = [(DIGEST_ENV, digest)] if digest else []
        host_mounts = self._host_mounts(ds)
        mounts = [*host_mounts.values(), *self._config_mounts(ds)]
        shared = [ds.mount(shared_volume(), DTK_SHARED)] if props.driver_toolkit else []
        container = self._driver_container(digest_env, [*mounts, *shared])
        peermem = [self._peermem(host_mounts)] if props.rdma.enabled else []
        init_containers = (
            *(add_driver_manager(self, ds, app, props) if props.manager else ()),
            *mofed_wait(props.rdma, props.container, ds),
        )
        pull = props.container.image_pull_policy
        for id, name, build in driver_daemonsets(props.driver_toolkit, DAEMONSET):
            side_car = (
                []
                if build is None
                else [dtk_container(CONTAINER, pull, build, digest_env, [*shared, *mounts])]
            )
            ds.add(
                id,
                name,
                containers=[container, *side_car, *peermem],
                init_containers=init_containers,
                default_container=True,
                update_strategy=k8s.DaemonSetUpdateStrategy(type="OnDelete"),
                host_pid=True,
                termination_grace_period_seconds=props.termination_grace_period_seconds,
                affinity=k8s.Affinity(
                    pod_anti_affinity=one_per_node(app.ident.selector()),
                    node_affinity=os_affinity(
                        props.os_release, pinned(props.precompiled_kernel, build)
                    ),
                ),
            )

    def _peermem(self, host_mounts: dict[str, k8s.VolumeMount]) -> k8s.Container:
        """The GPUDirect RDMA side-car (see :mod:`gpustack.constructs.driver_rdma`)."""
        props = self.props
        return peermem_container(
            props.container, props.rdma, props.startup_probe, props.peermem_liveness, host_mounts
        )

    def _host_mounts(self, ds: NodeDaemonSet) -> dict[str, k8s.VolumeMount]:
        """The host folders the driver container mounts (with RDMA, the Mellanox OFED ones),
        by volume name: the side-cars mount some of the same."""
        host_mounts = _HOST_MOUNTS + (MELLANOX_MOUNTS if self.props.rdma.enabled else ())
        mounts = [
            ds.mount(kube.host_path(v, host, kind), path, read_only=ro, propagation=prop)
            for v, host, kind, path, ro, prop in host_mounts
        ]
        return {m.name: m for m in mounts}

    def _config_mounts(self, ds: NodeDaemonSet) -> list[k8s.VolumeMount]:
        """The scripts ConfigMap, and the profile's module parameters, package repositories and
        CA certificates where it names them."""
        props = self.props
        scripts = ds.scripts(render_scripts(rdma=props.rdma.enabled))
        mounts = [ds.mount(scripts, SCRIPTS_DIR, read_only=True)]
        if props.kernel_module_config_map:
            volume = kube.config_map_volume("kernel-module-config", props.kernel_module_config_map)
            mounts.append(ds.mount(volume, "/drivers", read_only=True))
        for name, config in (
            ("repo-config", props.repo_config),
            ("cert-config", props.cert_config),
        ):
            if config is not None:
                volume = kube.config_map_volume(name, config[0])
                mounts.append(ds.mount(volume, config[1], read_only=True))
        return mounts

    def _driver_container(
        self, digest_env: list[tuple[str, str]], mounts: list[k8s.VolumeMount]
    ) -> k8s.Container:
        """``nvidia-driver-ctr``: builds and loads the modules, announces them in the readiness
        files (startupProbe) and removes those files before it stops (preStop)."""
        props = self.props
        dtk = props.driver_toolkit
        readiness = f"{VALIDATIONS_DIR}/driver-ready"
        stop = (
            f"rm -f {VALIDATIONS_DIR}/.driver-ctr-ready {readiness}"
            f" {VALIDATIONS_DIR}/.driver-daemons-status"
        )
        return kube.main_container(
            CONTAINER,
            props.container,
            # with the Driver Toolkit the driver image prepares the shared folder and waits for
            # the side-car's build (the GPU Operator's golden driver-openshift-drivertoolkit.yaml)
            command=["ocp_dtk_entrypoint"] if dtk else ["nvidia-driver"],
            args=["nv-ctr-run-with-dtk"] if dtk else ["init"],
            env=kube.env_list(
                [
                    # no GPU injection even where the NVIDIA runtime is the default handler
                    # (the GPU Operator sets it too: golden/driver-minimal.yaml, v26.7.0)
                    ("NVIDIA_VISIBLE_DEVICES", "void"),
                    ("KERNEL_MODULE_TYPE", props.kernel_module_type),
                    *rdma_env(props.rdma),
                    *digest_env,
                    *([("OPENSHIFT_VERSION", dtk.openshift_version or "")] if dtk else []),
                ],
                props.container.env,
                field_refs={"NODE_NAME": "spec.nodeName", "NODE_IP": "status.hostIP"},
            ),
            security_context=k8s.SecurityContext(
                privileged=True, se_linux_options=k8s.SeLinuxOptions(level="s0")
            ),
            startup_probe=kube.startup_probe(
                kube.exec_action("sh", f"{SCRIPTS_DIR}/startup-probe.sh"), props.startup_probe
            ),
            lifecycle=k8s.Lifecycle(
                pre_stop=k8s.LifecycleHandler(exec=kube.exec_action("sh", "-c", stop))
            ),
            volume_mounts=mounts,
        )
