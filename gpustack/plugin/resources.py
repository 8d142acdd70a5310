"""Which extended resources a node advertises, and under which device IDs.

Turns discovered GPUs plus the MIG strategy and time-slicing settings into one ``Resource``
per advertised name; each gets its own gRPC server and socket, as the kubelet expects one
plugin endpoint per resource name.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from gpustack.plugin.config import PluginConfig
from gpustack.plugin.devices import Gpu, MigDevice, Unit

log = logging.getLogger("gpustack.plugin")

REPLICA_SEPARATOR = "::"


class ResourceError(ValueError):
    """The discovered devices cannot be advertised with this configuration."""


@dataclass(frozen=True)
class Resource:
    """One advertised resource name and its devices."""

    name: str
    units: tuple[Unit, ...]
    #: Advertised copies of each unit; 1 = exclusive.
    replicas: int = 1
    fail_requests_greater_than_one: bool = False
    #: True when every unit is a whole (non-MIG) GPU: allocation may use NVLink topology.
    whole_gpus: bool = True
    by_id: dict[str, Unit] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_id: dict[str, Unit] = {}
        for unit in self.units:
            if self.replicas == 1:
                by_id[unit.uuid] = unit
            else:
                for n in range(self.replicas):
                    by_id[f"{unit.uuid}{REPLICA_SEPARATOR}{n}"] = unit
        object.__setattr__(self, "by_id", by_id)

    @property
    def device_ids(self) -> list[str]:
        """Advertised IDs in a stable order: unit by unit, replica by replica."""
        return list(self.by_id)

    @property
    def socket_name(self) -> str:
        """``nvidia.com/gpu`` → ``nvidia-gpu.sock`` (NVIDIA's naming)."""
        domain, _, name = self.name.partition("/")
        return f"{domain.split('.')[0]}-{name}.sock"


def mig_resource_name(profile: str) -> str:
    """``1g.10gb+me`` → ``nvidia.com/mig-1g.10gb.me``."""
    return "nvidia.com/mig-" + profile.replace("+", ".")


def _advertised_migs(gpu: Gpu) -> list[MigDevice]:
    """The MIG devices of ``gpu`` that can be advertised: a compute instance smaller than its
    GPU instance (``1c.2g.20gb``) is not a schedulable unit of its own, so it is skipped."""
    migs = []
    for mig in gpu.mig_devices:
        if mig.whole_instance:
            migs.append(mig)
        else:
            log.warning(
                "GPU %d: MIG device %s (%s) is not advertised: its compute instance does not"
                " span its GPU instance",
                gpu.index,
                mig.uuid,
                mig.profile,
            )
    return migs


def build_resources(config: PluginConfig, gpus: Sequence[Gpu]) -> list[Resource]:
    """Advertised resources for ``gpus``; raises ``ResourceError`` for impossible layouts."""
    strategy = config.flags.mig_strategy
    base = config.extensions.resource_name
    groups: dict[str, list[Unit]] = {}

    def add(name: str, unit: Unit) -> None:
        groups.setdefault(name, []).append(unit)

    if strategy == "none":
        for gpu in gpus:
            add(base, Unit.of_gpu(gpu))
    elif strategy == "single":
        _check_single(gpus)
        for gpu in gpus:
            if gpu.mig_enabled:
                for mig in _advertised_migs(gpu):
                    add(base, Unit.of_mig(gpu, mig))
            else:
                add(base, Unit.of_gpu(gpu))
    else:  # mixed
        for gpu in gpus:
            if gpu.mig_enabled:
                for mig in _advertised_migs(gpu):
                    add(mig_resource_name(mig.profile), Unit.of_mig(gpu, mig))
            else:
                add(base, Unit.of_gpu(gpu))

    ts = config.sharing.time_slicing
    resources = []
    claimed: dict[str, str] = {}
    for name, units in groups.items():
        replicas = ts.replicas_for(name) if ts is not None else 1
        # A shared resource's ``rename`` wins over ``renameByDefault`` (``<name>.shared``).
        advertised = ts.advertised_name(name) if ts is not None else name
        if claimed.setdefault(advertised, name) != name:
            raise ResourceError(
                f"{claimed[advertised]} and {name} would both be advertised as {advertised}; "
                "give the time-sliced one another rename"
            )
        resources.append(
            Resource(
                name=advertised,
                units=tuple(units),
                replicas=replicas,
                fail_requests_greater_than_one=bool(
                    replicas > 1 and ts is not None and ts.fail_requests_greater_than_one
                ),
                whole_gpus=all(u.mig_instance is None for u in units),
            )
        )
    return resources


def _check_single(gpus: Sequence[Gpu]) -> None:
    """The single strategy needs every GPU in the same MIG mode with the same layout."""
    modes = {gpu.mig_enabled for gpu in gpus}
    if len(modes) > 1:
        raise ResourceError(
            "migStrategy single needs MIG on all GPUs or on none; "
            "enable MIG everywhere or use migStrategy mixed"
        )
    if any(gpu.mig_enabled and not gpu.mig_devices for gpu in gpus):
        raise ResourceError("MIG is enabled but no MIG devices exist; create MIG instances first")
    # Every MIG device becomes the same resource, so they must all be the same size: a pod
    # asking for one must not get a 1g slice on one node and a 3g slice on another.
    profiles = sorted({m.profile for gpu in gpus for m in gpu.mig_devices if m.whole_instance})
    if len(profiles) > 1:
        raise ResourceError(
            f"migStrategy single needs one MIG profile on every GPU, found {', '.join(profiles)}; "
            "repartition the GPUs with one profile or use migStrategy mixed"
        )
