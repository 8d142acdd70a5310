"""The device plugin's config file, built from the profile.

The file is NVIDIA's config ``version: v1`` plus, for gpustack's own plugin, a ``gpustack:``
block; NVIDIA's plugin gets the file without that block (it has no such section), and with
``sharing.mps`` and ``flags.mpsRoot`` when the profile shares GPUs through MPS. The typed
profile becomes a typed :class:`gpustack.plugin.config.PluginConfig`, the model the plugin
itself parses into, and the file is that model written out; the written document is then parsed
back with the plugin's own checks, so a profile can never synthesize a ConfigMap the plugin
would reject. Pure Python: no cdk8s.
"""

from __future__ import annotations

from typing import Any

from gpustack.constructs.config_text import config_yaml
from gpustack.constructs.runtime import is_simulated
from gpustack.constructs.scripts import DRIVER_ROOT_CTR_PATH
from gpustack.plugin.config import (
    DEFAULT_IGNORED_XIDS,
    Flags,
    GpustackExtensions,
    HealthConfig,
    MigLayout,
    PluginConfig,
    PluginFlags,
    ReplicatedResource,
    ReplicatedResources,
    Sharing,
    SimulatedBackend,
    SimulatedGpu,
)
from gpustack.profile.catalog import PRODUCTS
from gpustack.profile.derive import architecture_of
from gpustack.profile.model import Profile, TimeSlicing

#: Key of the config file in the ConfigMap, and where the plugin container finds it.
CONFIG_KEY = "config.yaml"
CONFIG_DIR = "/etc/gpustack"
CONFIG_PATH = f"{CONFIG_DIR}/{CONFIG_KEY}"
#: Host folder of the MPS control daemon's pipes and shared memory (NVIDIA's default,
#: ``devicePlugin.mps.root`` of the GPU Operator chart), written to ``flags.mpsRoot``.
MPS_ROOT = "/run/nvidia/mps"


def simulated_gpus(profile: Profile) -> tuple[SimulatedGpu, ...]:
    """``gpus.perNode`` simulated GPUs shaped like ``gpus.product`` from the catalog.

    Memory and compute capability come from the catalog (the architecture's capability when the
    product has none of its own); the name is ``NVIDIA <product>``, close to what NVML reports.
    SXM, NVL and superchip (GH/GB) products are NVLink-connected to every other GPU of the node.
    MIG layout is ``gpus.mig``. Without a product, the plugin's defaults (an H100) apply, with the
    architecture's compute capability if one is given.
    """
    gpus = profile.gpus
    shape: dict[str, Any] = {}
    nvlink = False
    product = PRODUCTS.get(gpus.product) if gpus.product else None
    arch = architecture_of(profile)
    if product is not None:
        shape["product"] = f"NVIDIA {product.name}"
        shape["memory_mib"] = product.memory_gb * 1024
        nvlink = any(tag in product.name for tag in ("SXM", "NVL")) or product.name[:2] in (
            "GH",
            "GB",
        )
    capability = (product.compute_capability if product else None) or (
        arch.compute_capability if arch else None
    )
    if capability:
        shape["compute_capability"] = capability
    mig = MigLayout(enabled=bool(gpus.mig), devices=gpus.mig)
    indices = range(gpus.per_node)
    return tuple(
        SimulatedGpu(
            index=i,
            **shape,
            nvlink_peers=tuple(j for j in indices if j != i) if nvlink else (),
            mig=mig,
        )
        for i in indices
    )


def plugin_config(profile: Profile) -> PluginConfig:
    """The typed plugin config of ``profile`` (``gpustack`` block only for gpustack's plugin)."""
    dp = profile.device_plugin
    ours = dp.implementation == "gpustack"
    if dp.mps is not None and ours:
        # The profile rules reject this: gpustack's plugin would not share the GPUs at all.
        raise ValueError(
            "devicePlugin.sharing.mps: gpustack's device plugin does not implement MPS; use"
            " implementation: nvidia"
        )
    if not ours:
        for key, sharing in (("timeSlicing", dp.time_slicing), ("mps", dp.mps)):
            if sharing is not None:
                _no_rename(sharing, key)
    simulated = is_simulated(profile)
    return PluginConfig(
        flags=Flags(
            mig_strategy=dp.mig_strategy,
            fail_on_init_error=dp.fail_on_init_error,
            nvidia_driver_root="/" if simulated else profile.driver.root,
            # A host driver kept outside / (GKE) has its device nodes in the host's /dev.
            nvidia_dev_root="/" if not simulated and profile.driver.root_is_not_dev_root else None,
            mps_root=MPS_ROOT if dp.mps is not None else None,
            plugin=PluginFlags(
                pass_device_specs=dp.pass_device_specs,
                device_list_strategy=dp.device_list_strategy,
                device_id_strategy=dp.device_id_strategy,
                container_driver_root=DRIVER_ROOT_CTR_PATH,
                shared_devices_allocation_policy=dp.shared_devices_allocation_policy,
            ),
        ),
        sharing=Sharing(time_slicing=_replicated(dp.time_slicing), mps=_replicated(dp.mps)),
        gpustack=GpustackExtensions(
            resource_name=dp.resource_name,
            backend=dp.backend,
            health=HealthConfig(
                enabled=dp.health_checks.enabled, ignored_xids=dp.health_checks.ignored_xids
            ),
            simulated=SimulatedBackend(gpus=simulated_gpus(profile) if simulated else ()),
        )
        if ours
        else None,
    )


def build_config(profile: Profile) -> dict[str, Any]:
    """The plugin config file as a plain dict in file order, checked by the plugin's parser
    (raises :class:`gpustack.plugin.config.ConfigError`, a ``ValueError``, on what the plugin
    would refuse)."""
    doc = plugin_config(profile).to_dict()
    PluginConfig.from_dict(doc)
    return doc


def _replicated(sharing: TimeSlicing | None) -> ReplicatedResources | None:
    """A ``sharing.timeSlicing`` or ``sharing.mps`` block (the two have one shape)."""
    if sharing is None:
        return None
    return ReplicatedResources(
        rename_by_default=sharing.rename_by_default,
        fail_requests_greater_than_one=sharing.fail_requests_greater_than_one,
        resources=tuple(
            ReplicatedResource(name=r.name, replicas=r.replicas, rename=r.rename or None)
            for r in sharing.resources
        ),
    )


def _no_rename(sharing: TimeSlicing, key: str) -> None:
    for i, res in enumerate(sharing.resources):
        if res.rename:
            # The profile rules reject this; NVIDIA's plugin would ignore the name and leave
            # pods requesting a resource nobody offers.
            raise ValueError(
                f"devicePlugin.sharing.{key}.resources[{i}].rename: NVIDIA's device plugin"
                " cannot advertise a custom name; remove rename or use implementation: gpustack"
            )


def render_config(profile: Profile) -> str:
    """The config file's text (YAML, keys in file order)."""
    return config_yaml(build_config(profile))


def nvidia_health_env(profile: Profile) -> list[tuple[str, str]]:
    """NVIDIA's plugin takes health settings from env, not from its config file.

    ``DP_DISABLE_HEALTHCHECKS`` adds XIDs to its built-in ignore list (or ``all``);
    ``DP_ENABLE_HEALTHCHECKS`` takes XIDs off it, so any ``ignoredXids`` list can be expressed.
    """
    hc = profile.device_plugin.health_checks
    if not hc.enabled:
        return [("DP_DISABLE_HEALTHCHECKS", "all")]
    env: list[tuple[str, str]] = []
    extra = [x for x in hc.ignored_xids if x not in DEFAULT_IGNORED_XIDS]
    enabled = [x for x in DEFAULT_IGNORED_XIDS if x not in hc.ignored_xids]
    if extra:
        env.append(("DP_DISABLE_HEALTHCHECKS", ",".join(map(str, extra))))
    if enabled:
        env.append(("DP_ENABLE_HEALTHCHECKS", ",".join(map(str, enabled))))
    return env
