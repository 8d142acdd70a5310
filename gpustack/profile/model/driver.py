"""``driver``: the NVIDIA driver, installed by gpustack's DaemonSet or already on the host."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from gpustack.fields import key
from gpustack.profile.model import upstream
from gpustack.profile.model.common import (
    ABS_PATH,
    DNS_SUBDOMAIN,
    DRIVER_VERSION,
    DRIVER_VERSION_HINT,
    IMAGE,
    IMAGE_REF,
    IMAGE_TAG,
    EnvVar,
    PullPolicy,
    Resources,
    digest,
    enabled,
    env,
    image_ref,
    pull_policy,
    resources,
)
from gpustack.profile.model.driver_toolkit import DriverToolkit

KernelModuleType = Literal["auto", "open", "proprietary"]

#: Where NVIDIA's driver container exposes its root filesystem on the host (fixed by the driver
#: image: the toolkit, the device plugin and the CDI specs all find the driver there).
DRIVER_CONTAINER_ROOT = "/run/nvidia/driver"

#: Where each driver image OS keeps package repository definitions and the CA certificates its
#: package manager trusts: driver.repoConfigMap and driver.certConfigMap are mounted there (the
#: driver container installs kernel headers from these repositories when it builds the module).
DRIVER_OS_PATHS: dict[str, tuple[str, str]] = {
    "ubuntu": ("/etc/apt/sources.list.d", "/usr/local/share/ca-certificates"),
    "rhel": ("/etc/yum.repos.d", "/etc/pki/ca-trust/extracted/pem"),
    "rhcos": ("/etc/yum.repos.d", "/etc/pki/ca-trust/extracted/pem"),
    "centos": ("/etc/yum.repos.d", "/etc/pki/ca-trust/extracted/pem"),
}


@dataclass(frozen=True)
class StartupProbe:
    """Budget for the driver container to compile and load the kernel module (~20 min)."""

    initial_delay_seconds: int = key(
        "Initial delay", "Seconds before the first probe.", default=60, minimum=0
    )
    period_seconds: int = key("Period", "Seconds between probes.", default=10, minimum=1)
    timeout_seconds: int = key(
        "Timeout", "Seconds before one probe times out.", default=60, minimum=1
    )
    failure_threshold: int = key(
        "Failure threshold", "Failed probes before a restart.", default=120, minimum=1
    )


@dataclass(frozen=True)
class Rdma:
    """GPUDirect RDMA: the driver pod loads ``nvidia-peermem`` so NICs read and write GPU memory.

    ``use_host_mofed``: the Mellanox OFED driver is installed on the host, not by a driver
    container (the NVIDIA network operator's) that publishes it under ``/run/mellanox/drivers``.
    """

    enabled: bool = enabled(
        "Run the nvidia-peermem sidecar in the driver pod (needs enabled driver).", default=False
    )
    use_host_mofed: bool = key(
        "Host MOFED",
        "The Mellanox OFED driver is installed on the host, not by a driver"
        " container that publishes it under /run/mellanox/drivers.",
        default=False,
        examples=[True],
    )


#: NVIDIA's driver manager, the driver pod's init container.
DRIVER_MANAGER_IMAGE = upstream.DRIVER_MANAGER.ref
#: The GPU Operator v25.10.1 image, used only for the ``kubectl`` it ships (NVIDIA's Helm chart
#: ran its CRD hooks with it): the driver pod's ``deploy-labels`` step. No operator runs. It stays
#: at v25.10.1: from v26.x the operator image has no kubectl (``docker/Dockerfile`` at v26.7.0
#: copies only the operator's own binaries; the chart's hooks use ``manage-crds``).
KUBECTL_IMAGE = upstream.KUBECTL.ref


@dataclass(frozen=True)
class DriverUpgrade:
    """How a driver pod replaces a loaded driver: NVIDIA's driver manager (``k8s-driver-manager``)
    runs first in the pod, pauses the node's GPU clients through their deploy labels, evicts GPU
    pods and unloads the old modules. Its settings, as the GPU Operator's ``driver.upgradePolicy``
    and ``driver.manager.env`` name them."""

    driver_manager: bool = key(
        "Driver manager",
        "Run NVIDIA's driver manager as the driver pod's init container (needs API access:"
        " node labels, GPU pod eviction).",
        default=True,
    )
    image: str = key(
        "Driver manager image",
        "Image repository of NVIDIA's driver manager, without a tag.",
        default=DRIVER_MANAGER_IMAGE[0],
        pattern=IMAGE,
    )
    version: str = key(
        "Driver manager version",
        "Image tag of the driver manager.",
        default=DRIVER_MANAGER_IMAGE[1],
        pattern=IMAGE_TAG,
        examples=[DRIVER_MANAGER_IMAGE[1]],
    )
    digest: str | None = digest("driver manager")
    kubectl_image: str = key(
        "kubectl image",
        "Image whose kubectl seeds a node's missing deploy labels before the driver manager"
        " runs (cluster.deployLabels: optional); by default the GPU Operator v25.10.1 image,"
        " the last NVIDIA image that ships kubectl, used only for its kubectl. Pin it as"
        " <image>:<tag>@<digest>.",
        default=":".join(KUBECTL_IMAGE),
        pattern=IMAGE_REF,
        examples=[":".join(KUBECTL_IMAGE)],
    )
    gpu_pod_eviction: bool = key(
        "GPU pod eviction",
        "Evict the pods that use GPUs on the node before unloading the driver.",
        default=True,
    )
    auto_drain: bool = key(
        "Auto drain",
        "Drain the whole node when evicting GPU pods is not enough to unload the driver.",
        default=False,
    )
    drain_timeout_seconds: int = key(
        "Drain timeout",
        "Seconds to wait for evictions and the drain; 0 waits forever.",
        default=0,
        minimum=0,
        examples=[300],
    )
    pod_selector: str = key(
        "Drain pod selector",
        "Label selector of the pods a drain removes (empty: all).",
        default="",
        examples=["gpu-workload=true"],
    )
    force: bool = key(
        "Force",
        "Also remove pods that no controller manages (they are not recreated).",
        default=False,
    )
    delete_empty_dir_data: bool = key(
        "Delete emptyDir data",
        "Also remove pods with emptyDir volumes (their data is lost).",
        default=False,
    )

    def image_ref(self) -> str:
        """The driver manager's image reference."""
        return image_ref(self.image, self.version, self.digest)


@dataclass(frozen=True)
class Driver:
    """The NVIDIA driver: installed by gpustack's DaemonSet (``enabled``) or already on the host.

    ``version`` is required in both cases: compatibility rules check it against workloads and GPUs.
    The image tag is ``<version>-<osTag>`` (or ``<branch>-<kernel>-<osTag>`` when precompiled,
    as NVIDIA publishes them: ``580-6.8.0-60-generic-ubuntu24.04``).
    """

    enabled: bool = enabled("Install the driver with a DaemonSet; false: it is on the host.")
    version: str = key(
        "Driver version",
        "Driver version (also when preinstalled): compatibility rules check it.",
        default=upstream.DRIVER.tag,
        pattern=DRIVER_VERSION,
        hint=DRIVER_VERSION_HINT,
        examples=["595.91.07", "580.105.08"],
    )
    image: str = key(
        "Driver image",
        "Driver image repository, without a tag.",
        default=upstream.DRIVER.image,
        pattern=IMAGE,
    )
    os_tag: str = key(
        "OS tag",
        "Node OS suffix of the driver image tag (<version>-<osTag>).",
        default="ubuntu24.04",
        pattern=r"^[a-z0-9][a-z0-9.]*$",
        examples=["ubuntu22.04", "rhel9.6"],
    )
    digest: str | None = key(
        "Image digest",
        "Pin the driver image by digest; wins over the tag.",
        default=None,
        pattern=r"^sha256:[a-f0-9]{64}$",
    )
    kernel_module_type: KernelModuleType = key(
        "Kernel module type",
        "open or proprietary kernel modules; auto lets the driver pick.",
        default="auto",
    )
    use_precompiled: bool = key(
        "Precompiled",
        "Use a precompiled driver image tagged by kernel version (needs kernelVersion).",
        default=False,
    )
    kernel_version: str | None = key(
        "Kernel version",
        "Node kernel version for precompiled images, which NVIDIA tags "
        "<branch>-<kernelVersion>-<osTag> (as uname -r prints it).",
        default=None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$",
        hint="a kernel release as `uname -r` prints it (letters, digits, '.', '_', '-')",
        examples=["6.8.0-60-generic"],
    )
    host_driver_root: str = key(
        "Host driver root",
        "Where a preinstalled driver (enabled: false) lives on the host: its bin/nvidia-smi "
        "and libraries are under this folder. The toolkit's driver check, the device "
        "plugin and the CDI specs all use it; device nodes stay in the host's /dev.",
        default="/",
        pattern=ABS_PATH,
        examples=["/", "/home/kubernetes/bin/nvidia"],
    )
    image_pull_policy: PullPolicy = pull_policy()
    startup_probe: StartupProbe = key(
        "Startup probe",
        "Time budget for building and loading the kernel module.",
        factory=StartupProbe,
    )
    env: tuple[EnvVar, ...] = env()
    resources: Resources = resources()
    kernel_module_config_map: str | None = key(
        "Kernel module ConfigMap",
        "Existing ConfigMap with kernel module parameters (e.g. nvidia.conf).",
        default=None,
        pattern=DNS_SUBDOMAIN,
    )
    repo_config_map: str | None = key(
        "Package repository ConfigMap",
        "Existing ConfigMap of package repository files (e.g. a mirror's .list or .repo)"
        " that replace the driver image's own, where the driver container fetches kernel"
        " headers; for clusters without access to the distribution's repositories.",
        default=None,
        pattern=DNS_SUBDOMAIN,
        examples=["apt-mirror"],
    )
    cert_config_map: str | None = key(
        "CA certificate ConfigMap",
        "Existing ConfigMap of CA certificates (PEM) the driver container trusts when it"
        " fetches packages, e.g. through a TLS-intercepting proxy or from an internal"
        " mirror.",
        default=None,
        pattern=DNS_SUBDOMAIN,
        examples=["corporate-ca"],
    )
    rdma: Rdma = key(
        "GPUDirect RDMA",
        "Load nvidia-peermem in the driver pod so RDMA NICs (InfiniBand, RoCE) read and"
        " write GPU memory directly; needs the Mellanox OFED driver on the nodes.",
        factory=Rdma,
        examples=[{"enabled": True}, {"enabled": True, "useHostMofed": True}],
    )
    driver_toolkit: DriverToolkit = key(
        "OpenShift Driver Toolkit",
        "On OpenShift (RHCOS), the Driver Toolkit side-car that builds the kernel modules.",
        factory=DriverToolkit,
    )
    upgrade: DriverUpgrade = key(
        "Upgrade",
        "How a new driver pod replaces a loaded driver (NVIDIA's driver manager).",
        factory=DriverUpgrade,
        examples=[{"autoDrain": True, "drainTimeoutSeconds": 600}],
    )

    @property
    def os_family(self) -> str:
        """The OS family of ``os_tag`` (``ubuntu22.04`` -> ``ubuntu``)."""
        return re.sub(r"[0-9.]+$", "", self.os_tag)

    @property
    def os_release(self) -> tuple[str, str]:
        """``(ID, VERSION_ID)`` of ``/etc/os-release`` on the nodes ``os_tag`` is built for
        (``ubuntu24.04`` -> ``("ubuntu", "24.04")``), as Node Feature Discovery labels them."""
        return self.os_family, self.os_tag[len(self.os_family) :]

    @property
    def root(self) -> str:
        """Host path of the driver's root filesystem: the driver container's, or the host
        driver's (``hostDriverRoot``, ``/`` unless the driver lives elsewhere, as on GKE)."""
        return DRIVER_CONTAINER_ROOT if self.enabled else self.host_driver_root

    @property
    def root_is_not_dev_root(self) -> bool:
        """A host driver under its own folder (GKE) keeps its device nodes in the host's /dev."""
        return not self.enabled and self.host_driver_root != "/"

    @property
    def branch(self) -> str:
        """The driver branch (``580.105.08`` -> ``580``)."""
        return self.version.split(".")[0]

    def image_ref(self) -> str:
        """Full image reference: digest wins; precompiled images are tagged
        ``<branch>-<kernel>-<osTag>`` (NVIDIA builds one per branch, kernel and OS)."""
        if self.digest:
            return f"{self.image}@{self.digest}"
        if self.use_precompiled:
            return f"{self.image}:{self.branch}-{self.kernel_version}-{self.os_tag}"
        return f"{self.image}:{self.version}-{self.os_tag}"
