"""What a backend discovers: physical GPUs and their MIG devices, backend-independent.

Backends (NVML, simulated) produce these; everything after discovery (resources, allocation,
health) works on them alone, which is why the simulated backend exercises the same code paths
as real hardware.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: Control device nodes every CUDA container needs (NVIDIA adds each if it exists).
CONTROL_DEVICE_PATHS: Final = (
    "/dev/nvidiactl",
    "/dev/nvidia-uvm",
    "/dev/nvidia-uvm-tools",
    "/dev/nvidia-modeset",
)
#: NVML's "whole GPU" value for an event's GPU-instance and compute-instance IDs.
WHOLE_GPU_INSTANCE: Final = 0xFFFFFFFF


@dataclass(frozen=True)
class MigDevice:
    """One MIG device (a GPU instance with one compute instance) of a parent GPU."""

    uuid: str
    #: Profile as advertised, e.g. ``1g.10gb``.
    profile: str
    parent_uuid: str
    parent_index: int
    #: NVML's MIG device index on the parent (``nvmlDeviceGetMigDeviceHandleByIndex``), which
    #: the container toolkit resolves ``<parent>:<index>`` with (deviceIDStrategy ``index``).
    position: int
    gpu_instance: int
    compute_instance: int
    #: Parent ``/dev/nvidia<minor>`` plus the MIG capability nodes.
    device_paths: tuple[str, ...]

    @property
    def whole_instance(self) -> bool:
        """Its compute instance spans its whole GPU instance (``1g.10gb``, not ``1c.2g.20gb``).
        Only such devices are advertised, as NVIDIA's plugin does."""
        return not self.profile.split(".", 1)[0].endswith("c")


@dataclass(frozen=True)
class Gpu:
    """One physical GPU."""

    index: int
    uuid: str
    minor: int
    product: str
    memory_mib: int
    compute_capability: str
    numa_node: int | None
    #: UUIDs of GPUs reachable over NVLink.
    nvlink_peers: frozenset[str]
    mig_enabled: bool
    mig_devices: tuple[MigDevice, ...]

    @property
    def device_paths(self) -> tuple[str, ...]:
        return (f"/dev/nvidia{self.minor}",)


@dataclass(frozen=True)
class Unit:
    """A schedulable device before replication: a whole GPU or one MIG device."""

    #: ``GPU-…`` or ``MIG-…``; the advertised ID (before any ``::<replica>`` suffix).
    uuid: str
    #: ``<gpu>`` or ``<gpu>:<mig position>``; used with deviceIDStrategy ``index``.
    index: str
    device_paths: tuple[str, ...]
    numa_node: int | None
    #: The physical GPU this unit lives on (itself for whole GPUs).
    gpu_uuid: str
    #: (GPU instance, compute instance) for MIG devices, ``None`` for whole GPUs.
    mig_instance: tuple[int, int] | None
    nvlink_peers: frozenset[str]

    @classmethod
    def of_gpu(cls, gpu: Gpu) -> Unit:
        return cls(
            uuid=gpu.uuid,
            index=str(gpu.index),
            device_paths=gpu.device_paths,
            numa_node=gpu.numa_node,
            gpu_uuid=gpu.uuid,
            mig_instance=None,
            nvlink_peers=gpu.nvlink_peers,
        )

    @classmethod
    def of_mig(cls, gpu: Gpu, mig: MigDevice) -> Unit:
        return cls(
            uuid=mig.uuid,
            index=f"{gpu.index}:{mig.position}",
            device_paths=mig.device_paths,
            numa_node=gpu.numa_node,
            gpu_uuid=gpu.uuid,
            mig_instance=(mig.gpu_instance, mig.compute_instance),
            nvlink_peers=frozenset(),
        )

    def matches_event(self, gpu_uuid: str, gpu_instance: int, compute_instance: int) -> bool:
        """Whether an XID event on ``gpu_uuid`` (and instance IDs) concerns this unit."""
        if gpu_uuid not in (self.gpu_uuid, self.uuid):
            return False
        if gpu_uuid == self.uuid or self.mig_instance is None:
            return True
        if gpu_instance == WHOLE_GPU_INSTANCE:
            return True
        gi, ci = self.mig_instance
        return gi == gpu_instance and compute_instance in (ci, WHOLE_GPU_INSTANCE)
