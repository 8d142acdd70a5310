"""GPUDirect RDMA in the driver pod (``driver.rdma.enabled``): the driver container's variables
and Mellanox OFED mounts, the ``nvidia-peermem-ctr`` side-car that loads ``nvidia-peermem``, and
the init container that waits for a MOFED driver container.

``nvidia-peermem`` links the GPU driver to the RDMA stack of the node's network driver: it must
be built against that stack, so the GPU driver waits for the MOFED driver, and it can load only
once the GPU driver is loaded, so the side-car gets the driver's startup budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from gpustack.constructs import k8s, kube
from gpustack.constructs.placement import ContainerSettings
from gpustack.constructs.waits import WaitFor
from gpustack.profile import readiness
from gpustack.profile.model import Rdma, StartupProbe

if TYPE_CHECKING:  # a construct: importing it starts cdk8s
    from gpustack.constructs.node_daemonset import NodeDaemonSet

#: Sidecar that loads nvidia-peermem (GPUDirect RDMA) once the driver is up.
PEERMEM_CONTAINER: Final = "nvidia-peermem-ctr"
#: Where a MOFED driver container (NVIDIA's network operator) announces its driver is loaded.
MOFED_READY: Final = readiness.MOFED_READY
#: Init container that waits for it (GPUDirect RDMA without a host MOFED).
MOFED_WAIT_CONTAINER: Final = "mofed-validation"
#: Where the MOFED wait reads the host's PCI devices (the host's /sys, read-only: the entries
#: of ``bus/pci/devices`` are links into ``/sys/devices``).
HOST_SYS_CTR: Final = "/host-sys"
#: PCI vendor ID of Mellanox (NVIDIA networking): ConnectX NICs and BlueField DPUs.
MELLANOX_VENDOR: Final = "0x15b3"

#: Mellanox OFED paths for GPUDirect RDMA, mounted only when it is enabled (volume, host path,
#: hostPath type, container path, read-only, propagation). Volume names follow the operator's
#: (run-mellanox-drivers, mlnx-ofed-usr-src).
MELLANOX_MOUNTS: Final = (
    ("run-mellanox-drivers", "/run/mellanox/drivers", "DirectoryOrCreate",
     "/run/mellanox/drivers", None, "HostToContainer"),
    ("mlnx-ofed-usr-src", "/run/mellanox/drivers/usr/src", "DirectoryOrCreate",
     "/run/mellanox/drivers/usr/src", None, "HostToContainer"),
)  # fmt: skip


@dataclass(frozen=True)
class LivenessProbe:
    """Period, timeout and failure threshold of a livenessProbe (seconds, count)."""

    period_seconds: int = 30
    timeout_seconds: int = 10
    failure_threshold: int = 3


def rdma_env(rdma: Rdma) -> list[tuple[str, str]]:
    """The variables the driver container and the side-car read; none without RDMA."""
    if not rdma.enabled:
        return []
    return [
        ("GPU_DIRECT_RDMA_ENABLED", "true"),
        ("USE_HOST_MOFED", "true" if rdma.use_host_mofed else "false"),
    ]


def peermem_container(
    container: ContainerSettings,
    rdma: Rdma,
    budget: StartupProbe,
    liveness: LivenessProbe,
    mounts: dict[str, k8s.VolumeMount],
) -> k8s.Container:
    """``nvidia-peermem-ctr``: loads nvidia-peermem and keeps checking that it is loaded."""
    probe = kube.exec_action("nvidia-driver", "probe_nvidia_peermem")
    return k8s.Container(
        name=PEERMEM_CONTAINER,
        image=container.image,
        image_pull_policy=container.image_pull_policy,
        command=["nvidia-driver"],
        args=["reload_nvidia_peermem"],
        env=kube.env_list(rdma_env(rdma)),
        security_context=k8s.SecurityContext(privileged=True),
        # peermem loads only after the driver: the same (module build) budget
        startup_probe=kube.startup_probe(probe, budget),
        liveness_probe=k8s.Probe(
            exec=probe,
            period_seconds=liveness.period_seconds,
            timeout_seconds=liveness.timeout_seconds,
            failure_threshold=liveness.failure_threshold,
            success_threshold=1,
        ),
        volume_mounts=[mounts["run-nvidia"], mounts["run-mellanox-drivers"]],
    )


def mofed_wait(rdma: Rdma, container: ContainerSettings, ds: NodeDaemonSet) -> list[k8s.Container]:
    """With GPUDirect RDMA from a MOFED driver container, wait for its ``.driver-ready`` before
    the GPU driver builds: built against the inbox RDMA stack, ``nvidia-peermem`` never loads.
    A host MOFED (``useHostMofed``) is there before any pod: nothing to wait for.

    Only on nodes with a Mellanox device: NVIDIA's validator skips the MOFED check where NFD's
    ``feature.node.kubernetes.io/pci-15b3.present`` is absent (``cmd/nvidia-validator``,
    ``MOFED.validate``, gpu-operator v26.7.0), since no MOFED driver container runs there and the
    wait would never end. gpustack reads the same fact where NFD reads it, the vendor of each PCI
    device in the host's sysfs, so the step needs no API access."""
    if not rdma.enabled or rdma.use_host_mofed:
        return []
    devices = f"{HOST_SYS_CTR}/bus/pci/devices"
    wait = WaitFor(MOFED_READY, container.image, container.image_pull_policy)
    script = (
        f"if ! cat {devices}/*/vendor 2>/dev/null | grep -qx {MELLANOX_VENDOR}; then"
        f' echo "no Mellanox device (PCI vendor {MELLANOX_VENDOR}): no MOFED driver to wait for";'
        " exit 0; fi; "
    ) + wait.script(f"the MOFED driver ({MOFED_READY})")
    sys = ds.mount(kube.host_path("host-sys", "/sys", "Directory"), HOST_SYS_CTR, read_only=True)
    volume = kube.host_path("run-mellanox-drivers", "/run/mellanox/drivers", "DirectoryOrCreate")
    drivers = ds.mount(
        volume, "/run/mellanox/drivers", read_only=True, propagation="HostToContainer"
    )
    return [ds.wait_container(wait, MOFED_WAIT_CONTAINER, script, [drivers, sys])]
