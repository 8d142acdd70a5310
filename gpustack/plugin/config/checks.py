"""The config rules a JSON schema cannot state, and the error every config problem raises.

The schema (derived from :mod:`gpustack.plugin.config.model`) checks each value on its own;
these rules relate values: simulated GPUs to each other, shared resources to the resources the
plugin advertises, renames to every other advertised name. :func:`check_config` applies to both
plugins' files (synthesis runs it on NVIDIA's too); :func:`check_gpustack_plugin` adds what only
gpustack's plugin refuses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Protocol

from gpustack.plugin.config.extensions import GpustackExtensions

MAX_MIG_SLICES: Final = 7


# The parts of :class:`gpustack.plugin.config.model.PluginConfig` the rules read, as protocols:
# the model runs these checks when it parses a file, so the checks do not import the model.
class _Resource(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def rename(self) -> str | None: ...


class SharedBlock(Protocol):
    """A ``sharing.timeSlicing`` or ``sharing.mps`` block."""

    @property
    def resources(self) -> Sequence[_Resource]: ...

    def advertised_name(self, resource: str) -> str: ...


class _Sharing(Protocol):
    @property
    def time_slicing(self) -> SharedBlock | None: ...

    @property
    def mps(self) -> SharedBlock | None: ...


class CheckedConfig(Protocol):
    """A parsed config file (the model's ``PluginConfig``)."""

    @property
    def sharing(self) -> _Sharing: ...

    @property
    def extensions(self) -> GpustackExtensions: ...


class ConfigError(ValueError):
    """A configuration value is wrong; ``path`` is a JSON path, ``message`` says how to fix it."""

    def __init__(self, path: str, message: str, source: str | None = None) -> None:
        self.path = path
        self.message = message
        self.source = source
        where = f"{source}: {path}" if source else path
        super().__init__(f"{where}: {message}")


def mig_slices(profile: str) -> int:
    """GPU slices a MIG profile occupies (the ``<n>g`` part)."""
    match = re.search(r"([1-7])g\.", profile)
    return int(match.group(1)) if match else 0


def check_config(config: CheckedConfig) -> None:
    """Rules a JSON schema cannot state: references between GPUs and between sections."""
    _check_simulated_gpus(config)
    for key, block in (
        ("timeSlicing", config.sharing.time_slicing),
        ("mps", config.sharing.mps),
    ):
        if block is not None:
            _check_shared(config, block, f"$.sharing.{key}.resources")


def check_gpustack_plugin(config: CheckedConfig) -> None:
    """What gpustack's own plugin cannot run, though NVIDIA's plugin could."""
    if config.sharing.mps is not None:
        raise ConfigError(
            "$.sharing.mps",
            "gpustack's device plugin does not implement MPS; remove sharing.mps (use "
            "sharing.timeSlicing to share GPUs without MPS) or deploy NVIDIA's device plugin "
            "(profile: devicePlugin.implementation: nvidia)",
        )


def _check_simulated_gpus(config: CheckedConfig) -> None:
    gpus = config.extensions.simulated.gpus
    base = "$.gpustack.simulated.gpus"
    indices = [g.index for g in gpus]
    uuids = [g.uuid for g in gpus]
    for i, gpu in enumerate(gpus):
        if indices.index(gpu.index) != i:
            raise ConfigError(
                f"{base}[{i}].index", f"duplicate index {gpu.index}; indices must be unique"
            )
        if uuids.index(gpu.uuid) != i:
            raise ConfigError(
                f"{base}[{i}].uuid", f"duplicate uuid {gpu.uuid}; UUIDs must be unique"
            )
        for j, peer in enumerate(gpu.nvlink_peers):
            if peer == gpu.index or peer not in indices:
                raise ConfigError(
                    f"{base}[{i}].nvlinkPeers[{j}]",
                    f"{peer} is not another simulated GPU's index; list only other GPUs' indices",
                )
        slices = sum(mig_slices(p) * n for p, n in gpu.mig.devices)
        if slices > MAX_MIG_SLICES:
            raise ConfigError(
                f"{base}[{i}].mig.devices",
                f"uses {slices} GPU slices; a GPU has {MAX_MIG_SLICES}, remove some instances",
            )
        if gpu.mig.devices and not gpu.mig.enabled:
            raise ConfigError(
                f"{base}[{i}].mig.enabled", "MIG devices listed but MIG is off; set enabled: true"
            )


def _check_shared(config: CheckedConfig, block: SharedBlock, path: str) -> None:
    """Each resource named once, advertised by this plugin, and renamed to a free name."""
    names = [r.name for r in block.resources]
    resource_name = config.extensions.resource_name
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise ConfigError(f"{path}[{i}]", f"duplicate value {name!r}; list it once")
        if name != resource_name and not name.startswith("nvidia.com/mig-"):
            raise ConfigError(
                f"{path}[{i}].name",
                f"{name!r} is not advertised by this plugin; use "
                f"{resource_name!r} or a nvidia.com/mig-<profile> name",
            )
    _check_renames(resource_name, block, path)


def _check_renames(base: str, block: SharedBlock, path: str) -> None:
    """Two resources advertised under one name would fight over one kubelet socket.

    Unshared MIG resources are only known once GPUs are discovered; ``build_resources`` checks
    those.
    """
    # Names taken without any rename: whole GPUs (unless shared) and the unrenamed shares.
    taken: dict[str, str] = {} if base in (r.name for r in block.resources) else {base: base}
    for res in block.resources:
        if res.rename is None:
            taken[block.advertised_name(res.name)] = res.name
    for i, res in enumerate(block.resources):
        if res.rename is None:
            continue
        owner = taken.setdefault(res.rename, res.name)
        if owner != res.name:
            whose = "" if owner == res.rename else f" for {owner}"
            raise ConfigError(
                f"{path}[{i}].rename",
                f"{res.rename!r} is already advertised{whose}; choose a name no other resource"
                " uses",
            )
