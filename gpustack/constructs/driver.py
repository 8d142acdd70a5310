"""The NVIDIA driver DaemonSet: builds and loads the kernel module in a container on each node.

Shape follows the GPU operator's ``nvidia-driver-daemonset``: privileged, ``hostPID``, one pod per
node, ``OnDelete`` updates (replacing a loaded driver under running GPU jobs is never automatic),
and a startupProbe with a long budget because the first start compiles the module. Omitted when
the driver is preinstalled on the host (``driver.enabled: false``). With GPUDirect RDMA
(``driver.rdma.enabled``) a ``nvidia-peermem-ctr`` sidecar loads ``nvidia-peermem``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Final

from constructs import Construct

from gpustack.constructs import k8s, kube
from gpustack.constructs.driver_manager import (
    DIGEST_ENV,
    DriverManagerProps,
    add_driver_manager,
    config_digest,
)
from gpustack.constructs.kube import VALIDATIONS_DIR
from gpustack.constructs.labels import Identity
from gpustack.constructs.node_daemonset import NodeApp, NodeDaemonSet
from gpustack.constructs.placement import PRE_INSTALLED, ContainerSettings, Placement
from gpustack.constructs.scripts import (
    DRIVER_ROOT_CTR_PATH,
    DRIVER_STARTUP_PROBE,
    HOST_ROOT_CTR_PATH,
    SCRIPTS_DIR,
)
from gpustack.kube.labels import HOSTNAME_LABEL
from gpustack.profile import readiness
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
#: Sidecar that loads nvidia-peermem (GPUDirect RDMA) once the driver is up.
PEERMEM_CONTAINER: Final = "nvidia-peermem-ctr"


@dataclass(frozen=True)
class LivenessProbe:
    """Period, timeout and failure threshold of a livenessProbe (seconds, count)."""

    period_seconds: int = 30
    timeout_seconds: int = 10
    failure_threshold: int = 3


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
      labels are taken to run that OS (see :func:`os_affinity`).
    - ``precompiled_kernel``: the kernel a precompiled image was built for (``None`` when the
      driver builds on the node): the pod runs only where NFD's
      ``feature.node.kubernetes.io/kernel-version.full`` is that kernel, as the GPU Operator's
      ``transformPrecompiledDriverDaemonset`` pins it (``controllers/object_controls.go``,
      ``golden/driver-precompiled.yaml``, v26.7.0). Without it, a node whose kernel was updated
      would load modules built for another kernel.
    - ``driver_toolkit``: on OpenShift, ``driver.driverToolkit`` (all three values set; the
      rule ``openshift-driver-needs-driver-toolkit`` sees to it): the modules are built in an
      ``openshift-driver-toolkit-ctr`` side-car, and the pod runs only on nodes of that RHCOS
      build (see :func:`dtk_container`). ``None`` elsewhere.
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
            driver_toolkit=_driver_toolkit(profile),
        )


def startup_probe(action: k8s.ExecAction, budget: StartupProbe) -> k8s.Probe:
    """A startup probe with the profile's budget (long enough to build the kernel module)."""
    return k8s.Probe(
        exec=action,
        initial_delay_seconds=budget.initial_delay_seconds,
        period_seconds=budget.period_seconds,
        timeout_seconds=budget.timeout_seconds,
        failure_threshold=budget.failure_threshold,
        success_threshold=1,
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

#: Mellanox OFED paths for GPUDirect RDMA, mounted only when it is enabled (same tuple shape).
#: Volume names follow the operator's (run-mellanox-drivers, mlnx-ofed-usr-src).
_MELLANOX_MOUNTS: Final = (
    ("run-mellanox-drivers", "/run/mellanox/drivers", "DirectoryOrCreate",
     "/run/mellanox/drivers", None, "HostToContainer"),
    ("mlnx-ofed-usr-src", "/run/mellanox/drivers/usr/src", "DirectoryOrCreate",
     "/run/mellanox/drivers/usr/src", None, "HostToContainer"),
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
        app = NodeApp(
            Identity(NAME, "driver", props.version, props.placement.labels),
            props.placement,
            deploy_off=(PRE_INSTALLED,),  # the driver manager found a driver on the host
        )
        ds = NodeDaemonSet(self, app, service_account=app.service_account(self))
        digest = config_digest(props) if props.manager else None
        rdma = props.rdma.enabled
        scripts = ds.scripts(render_scripts(rdma=rdma))

        host_mounts = _HOST_MOUNTS + (_MELLANOX_MOUNTS if rdma else ())
        mounts = [
            ds.mount(kube.host_path(v, host, kind), path, read_only=ro, propagation=prop)
            for v, host, kind, path, ro, prop in host_mounts
        ]
        by_volume = {m.name: m for m in mounts}
        mounts.append(ds.mount(scripts, SCRIPTS_DIR, read_only=True))
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

        sp = props.startup_probe
        readiness = f"{VALIDATIONS_DIR}/driver-ready"
        stop = (
            f"rm -f {VALIDATIONS_DIR}/.driver-ctr-ready {readiness}"
            f" {VALIDATIONS_DIR}/.driver-daemons-status"
        )
        rdma_env = (
            [
                ("GPU_DIRECT_RDMA_ENABLED", "true"),
                ("USE_HOST_MOFED", "true" if props.rdma.use_host_mofed else "false"),
            ]
            if rdma
            else []
        )
        dtk = props.driver_toolkit
        if dtk is not None:
            shared = ds.mount(
                k8s.Volume(name=DTK_VOLUME, empty_dir=k8s.EmptyDirVolumeSource()), DTK_SHARED
            )
            mounts.append(shared)
        container = kube.main_container(
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
                    *rdma_env,
                    *([(DIGEST_ENV, digest)] if digest else []),
                    *([("OPENSHIFT_VERSION", dtk.openshift_version or "")] if dtk else []),
                ],
                props.container.env,
                field_refs={"NODE_NAME": "spec.nodeName", "NODE_IP": "status.hostIP"},
            ),
            security_context=k8s.SecurityContext(
                privileged=True, se_linux_options=k8s.SeLinuxOptions(level="s0")
            ),
            startup_probe=startup_probe(
                kube.exec_action("sh", f"{SCRIPTS_DIR}/startup-probe.sh"), sp
            ),
            lifecycle=k8s.Lifecycle(
                pre_stop=k8s.LifecycleHandler(exec=kube.exec_action("sh", "-c", stop))
            ),
            volume_mounts=mounts,
        )
        peermem = [self._peermem_container(props, rdma_env, by_volume)] if rdma else []
        one_per_node = k8s.PodAntiAffinity(
            required_during_scheduling_ignored_during_execution=[
                k8s.PodAffinityTerm(
                    label_selector=k8s.LabelSelector(match_labels=app.ident.selector()),
                    topology_key=HOSTNAME_LABEL,
                )
            ]
        )
        init_containers = (
            *(add_driver_manager(self, ds, app, props) if props.manager else ()),
            *mofed_wait(props, ds),
        )
        for id, name, build in driver_daemonsets(dtk):
            side_car = (
                [dtk_container(props, build, digest, [shared, *by_volume.values()])]
                if build is not None
                else []
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
                    pod_anti_affinity=one_per_node,
                    node_affinity=os_affinity(props.os_release, _pinned(props, build)),
                ),
            )

    @staticmethod
    def _peermem_container(
        props: DriverProps, rdma_env: list[tuple[str, str]], mounts: dict[str, k8s.VolumeMount]
    ) -> k8s.Container:
        """``nvidia-peermem-ctr``: loads nvidia-peermem and keeps checking that it is loaded."""
        sp, lp = props.startup_probe, props.peermem_liveness
        probe = kube.exec_action("nvidia-driver", "probe_nvidia_peermem")
        return k8s.Container(
            name=PEERMEM_CONTAINER,
            image=props.container.image,
            image_pull_policy=props.container.image_pull_policy,
            command=["nvidia-driver"],
            args=["reload_nvidia_peermem"],
            env=kube.env_list(rdma_env),
            security_context=k8s.SecurityContext(privileged=True),
            # peermem loads only after the driver: the same (module build) budget
            startup_probe=startup_probe(probe, sp),
            liveness_probe=k8s.Probe(
                exec=probe,
                period_seconds=lp.period_seconds,
                timeout_seconds=lp.timeout_seconds,
                failure_threshold=lp.failure_threshold,
                success_threshold=1,
            ),
            volume_mounts=[mounts["run-nvidia"], mounts["run-mellanox-drivers"]],
        )


#: Where a MOFED driver container (NVIDIA's network operator) announces its driver is loaded.
MOFED_READY: Final = readiness.MOFED_READY
#: Init container that waits for it (GPUDirect RDMA without a host MOFED).
MOFED_WAIT_CONTAINER: Final = "mofed-validation"
#: Node Feature Discovery's labels for ``/etc/os-release`` ``ID`` and ``VERSION_ID``.
OS_ID_LABEL: Final = "feature.node.kubernetes.io/system-os_release.ID"
OS_VERSION_LABEL: Final = "feature.node.kubernetes.io/system-os_release.VERSION_ID"
#: Node Feature Discovery's label for the running kernel (``uname -r``).
KERNEL_LABEL: Final = "feature.node.kubernetes.io/kernel-version.full"
#: Node Feature Discovery's label for the RHCOS build (``/etc/os-release`` ``OSTREE_VERSION``).
OSTREE_LABEL: Final = "feature.node.kubernetes.io/system-os_release.OSTREE_VERSION"
#: The Driver Toolkit side-car and the folder it shares with the driver container.
DTK_CONTAINER: Final = "openshift-driver-toolkit-ctr"
DTK_VOLUME: Final = "shared-nvidia-driver-toolkit"
DTK_SHARED: Final = "/mnt/shared-nvidia-driver-toolkit"
#: The driver container's mounts the side-car also needs (its build writes the same places).
_DTK_MOUNTS: Final = (
    "var-log", "host-os-release", "firmware-search-path", "nv-firmware", "mlnx-ofed-usr-src",
)  # fmt: skip


def build_daemonset(rhcos: str) -> str:
    """The driver DaemonSet of a further RHCOS build: ``418.94.202502101302-0`` ->
    ``nvidia-driver-daemonset-418-94-202502101302-0``."""
    return f"{DAEMONSET}-{rhcos.replace('.', '-')}"


def driver_daemonsets(
    dtk: DriverToolkit | None,
) -> list[tuple[str, str, DriverToolkit | None]]:
    """(construct id, name, the Driver Toolkit of its RHCOS build) of each driver DaemonSet.

    One without the Driver Toolkit. On OpenShift one per RHCOS build the profile names, as the
    GPU Operator renders one per ``OSTREE_VERSION`` on the nodes (``ocpDriverToolkitDaemonSets``,
    ``controllers/object_controls.go``, v26.7.0): the first build keeps the name
    ``nvidia-driver-daemonset`` (a renamed DaemonSet is a new one, and pruning the old one would
    stop every running driver), each further build is ``nvidia-driver-daemonset-<build>`` (its dots
    as hyphens: gpustack's names are DNS labels). All
    share the pod selector and the one-driver-per-node anti-affinity; each pod carries its
    DaemonSet's name as ``app``, and its controller reference keeps each DaemonSet to its pods.
    """
    if dtk is None:
        return [("daemonset", DAEMONSET, None)]
    out: list[tuple[str, str, DriverToolkit | None]] = []
    for i, (rhcos, image) in enumerate(dtk.all_builds()):
        one = replace(dtk, rhcos_version=rhcos, image=image, builds=())
        name = DAEMONSET if i == 0 else build_daemonset(rhcos)
        out.append(("daemonset" if i == 0 else f"daemonset-{rhcos}", name, one))
    return out


def _driver_toolkit(profile: Profile) -> DriverToolkit | None:
    d = profile.driver
    dtk = d.driver_toolkit
    on_openshift = profile.cluster.runtime.distribution == "openshift"
    if not on_openshift or not d.enabled or d.use_precompiled or dtk.image is None:
        return None
    return dtk


def dtk_container(
    props: DriverProps, dtk: DriverToolkit, digest: str | None, mounts: list[k8s.VolumeMount]
) -> k8s.Container:
    """``openshift-driver-toolkit-ctr``: waits until the driver container has copied its build
    scripts to the shared folder, then builds the modules with the Driver Toolkit's kernel
    packages (as the GPU Operator's ``transformOpenShiftDriverToolkitContainer``, v26.7.0)."""
    script = (
        f"until [ -f {DTK_SHARED}/dir_prepared ]; do echo waiting for {CONTAINER} to prepare"
        f" the shared directory; sleep 10; done; exec {DTK_SHARED}/ocp_dtk_entrypoint"
        " dtk-build-driver"
    )
    wanted = {DTK_VOLUME, *_DTK_MOUNTS}
    return k8s.Container(
        name=DTK_CONTAINER,
        image=dtk.image,
        image_pull_policy=props.container.image_pull_policy,
        command=["bash", "-xc"],
        args=[script],
        env=kube.env_list(
            [
                ("RHCOS_VERSION", dtk.rhcos_version or ""),
                ("NVIDIA_VISIBLE_DEVICES", "void"),
                *([(DIGEST_ENV, digest)] if digest else []),
            ]
        ),
        security_context=k8s.SecurityContext(
            privileged=True, se_linux_options=k8s.SeLinuxOptions(level="s0")
        ),
        volume_mounts=[m for m in mounts if m.name in wanted],
    )


#: Where the MOFED wait reads the host's PCI devices (the host's /sys, read-only: the entries
#: of ``bus/pci/devices`` are links into ``/sys/devices``).
HOST_SYS_CTR: Final = "/host-sys"
#: PCI vendor ID of Mellanox (NVIDIA networking): ConnectX NICs and BlueField DPUs.
MELLANOX_VENDOR: Final = "0x15b3"


def mofed_wait(props: DriverProps, ds: NodeDaemonSet) -> list[k8s.Container]:
    """With GPUDirect RDMA from a MOFED driver container, wait for its ``.driver-ready`` before
    the GPU driver builds: built against the inbox RDMA stack, ``nvidia-peermem`` never loads.
    A host MOFED (``useHostMofed``) is there before any pod: nothing to wait for.

    Only on nodes with a Mellanox device: NVIDIA's validator skips the MOFED check where NFD's
    ``feature.node.kubernetes.io/pci-15b3.present`` is absent (``cmd/nvidia-validator``,
    ``MOFED.validate``, gpu-operator v26.7.0), since no MOFED driver container runs there and the
    wait would never end. gpustack reads the same fact where NFD reads it, the vendor of each PCI
    device in the host's sysfs, so the step needs no API access."""
    rdma = props.rdma
    if not rdma.enabled or rdma.use_host_mofed:
        return []
    devices = f"{HOST_SYS_CTR}/bus/pci/devices"
    script = (
        f"if ! cat {devices}/*/vendor 2>/dev/null | grep -qx {MELLANOX_VENDOR}; then"
        f' echo "no Mellanox device (PCI vendor {MELLANOX_VENDOR}): no MOFED driver to wait for";'
        " exit 0; fi; "
        f'until [ -f "{MOFED_READY}" ]; do echo "waiting for the MOFED driver ({MOFED_READY})";'
        " sleep 5; done"
    )
    sys = ds.mount(kube.host_path("host-sys", "/sys", "Directory"), HOST_SYS_CTR, read_only=True)
    volume = kube.host_path("run-mellanox-drivers", "/run/mellanox/drivers", "DirectoryOrCreate")
    container = k8s.Container(
        name=MOFED_WAIT_CONTAINER,
        image=props.container.image,
        image_pull_policy=props.container.image_pull_policy,
        command=["sh", "-c", script],
        security_context=kube.unprivileged(),
        volume_mounts=[
            ds.mount(
                volume, "/run/mellanox/drivers", read_only=True, propagation="HostToContainer"
            ),
            sys,
        ],
    )
    return [container]


def _pinned(props: DriverProps, build: DriverToolkit | None) -> tuple[tuple[str, str], ...]:
    """NFD labels a node must carry this value of: the precompiled kernel, the RHCOS build of
    the DaemonSet's Driver Toolkit."""
    pins: list[tuple[str, str]] = []
    if props.precompiled_kernel:
        pins.append((KERNEL_LABEL, props.precompiled_kernel))
    if build is not None and build.rhcos_version:
        pins.append((OSTREE_LABEL, build.rhcos_version))
    return tuple(pins)


def os_affinity(
    os_release: tuple[str, str], pinned: tuple[tuple[str, str], ...] = ()
) -> k8s.NodeAffinity:
    """Keep the driver off nodes that Node Feature Discovery says run another OS.

    One image serves one OS release (``driver.osTag``); the GPU Operator picks the tag per node
    from these labels. gpustack's profile names one OS (a fleet's GPU nodes normally share an
    image): a node labelled with another OS is left without a driver pod rather than given one
    that cannot build, and a node without the labels (no NFD) is taken to run that OS.

    ``pinned`` labels (a precompiled kernel's ``kernel-version.full``, a Driver Toolkit's RHCOS
    ``OSTREE_VERSION``) are required by both terms: a node without the label gets no pod (as
    with the GPU Operator's nodeSelector), since modules built for another kernel do not load.
    """
    os_id, version = os_release
    required = [
        k8s.NodeSelectorRequirement(key=key, operator="In", values=[value]) for key, value in pinned
    ]
    match = k8s.NodeSelectorTerm(
        match_expressions=[
            k8s.NodeSelectorRequirement(key=OS_ID_LABEL, operator="In", values=[os_id]),
            k8s.NodeSelectorRequirement(key=OS_VERSION_LABEL, operator="In", values=[version]),
            *required,
        ]
    )
    unlabelled = k8s.NodeSelectorTerm(
        match_expressions=[
            k8s.NodeSelectorRequirement(key=OS_ID_LABEL, operator="DoesNotExist"),
            *required,
        ]
    )
    return k8s.NodeAffinity(
        required_during_scheduling_ignored_during_execution=k8s.NodeSelector(
            node_selector_terms=[match, unlabelled]
        )
    )
