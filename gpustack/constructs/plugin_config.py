"""The device plugin's config file, built from the profile.

The file is NVIDIA's config ``version: v1`` plus, for gpustack's own plugin, a ``gpustack:``
block; NVIDIA's plugin gets the file without that block (it has no such section). The dict is
round-tripped through :class:`gpustack.plugin.config.PluginConfig`, the model the plugin itself
parses with, so a profile can never synthesize a ConfigMap the plugin would reject.

NVIDIA-only keys are added after the round trip, since gpustack's plugin (and so its parser) does
not know them: ``sharing.mps`` and ``flags.mpsRoot``. ``sharing.mps`` has the shape of
``sharing.timeSlicing``, so the parser still checks it, as a time-slicing block.
Pure Python: no cdk8s.
"""

from __future__ import annotations

from typing import Any

import yaml

from gpustack.constructs.runtime import is_simulated
from gpustack.constructs.scripts import DRIVER_ROOT_CTR_PATH
from gpustack.plugin.config import (
    DEFAULT_IGNORED_XIDS,
    PluginConfig,
)
from gpustack.profile.catalog import ARCHITECTURES, PRODUCTS
from gpustack.profile.model import Profile, TimeSlicing

#: Key of the config file in the ConfigMap, and where the plugin container finds it.
CONFIG_KEY = "config.yaml"
CONFIG_DIR = "/etc/gpustack"
CONFIG_PATH = f"{CONFIG_DIR}/{CONFIG_KEY}"
#: Host folder of the MPS control daemon's pipes and shared memory (NVIDIA's default,
#: ``devicePlugin.mps.root`` of the GPU Operator chart), written to ``flags.mpsRoot``.
MPS_ROOT = "/run/nvidia/mps"


def simulated_gpus(profile: Profile) -> list[dict[str, Any]]:
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
    arch_name = product.architecture if product else gpus.architecture
    arch = ARCHITECTURES.get(arch_name) if arch_name else None
    if product is not None:
        shape["product"] = f"NVIDIA {product.name}"
        shape["memoryMiB"] = product.memory_gb * 1024
        nvlink = any(tag in product.name for tag in ("SXM", "NVL")) or product.name[:2] in (
            "GH",
            "GB",
        )
    capability = (product.compute_capability if product else None) or (
        arch.compute_capability if arch else None
    )
    if capability:
        shape["computeCapability"] = capability
    mig = {"enabled": bool(gpus.mig), "devices": dict(gpus.mig)}
    indices = range(gpus.per_node)
    return [
        {
            "index": i,
            **shape,
            "nvlinkPeers": [j for j in indices if j != i] if nvlink else [],
            "mig": mig,
        }
        for i in indices
    ]


def build_config(profile: Profile) -> dict[str, Any]:
    """The plugin config as a plain dict in file order, validated by the plugin's own parser."""
    dp = profile.device_plugin
    simulated = is_simulated(profile)
    config: dict[str, Any] = {
        "version": "v1",
        "flags": {
            "migStrategy": dp.mig_strategy,
            "failOnInitError": dp.fail_on_init_error,
            "nvidiaDriverRoot": "/" if simulated else profile.driver.root,
            "plugin": {
                "passDeviceSpecs": dp.pass_device_specs,
                "deviceListStrategy": list(dp.device_list_strategy),
                "deviceIDStrategy": dp.device_id_strategy,
                "containerDriverRoot": DRIVER_ROOT_CTR_PATH,
                "sharedDevicesAllocationPolicy": dp.shared_devices_allocation_policy,
            },
        },
    }
    ts = dp.time_slicing
    if ts is not None:
        if dp.implementation != "gpustack":
            _no_rename(ts, "timeSlicing")
        config["sharing"] = {"timeSlicing": _replicated(ts)}
    if dp.implementation == "gpustack":
        config["gpustack"] = {
            "resourceName": dp.resource_name,
            "backend": dp.backend,
            "health": {
                "enabled": dp.health_checks.enabled,
                "ignoredXids": list(dp.health_checks.ignored_xids),
            },
            "simulated": {"gpus": simulated_gpus(profile) if simulated else []},
        }
    canonical = PluginConfig.from_dict(config).to_dict()
    if dp.implementation != "gpustack":
        del canonical["gpustack"]
    if dp.mps is not None:
        canonical = _with_mps(canonical, dp.mps, dp.implementation)
    return canonical


def _replicated(sharing: TimeSlicing) -> dict[str, Any]:
    """A ``sharing.timeSlicing`` or ``sharing.mps`` block (the two have one shape)."""
    return {
        "renameByDefault": sharing.rename_by_default,
        "failRequestsGreaterThanOne": sharing.fail_requests_greater_than_one,
        "resources": [
            {"name": r.name, "replicas": r.replicas} | ({"rename": r.rename} if r.rename else {})
            for r in sharing.resources
        ],
    }


def _no_rename(sharing: TimeSlicing, key: str) -> None:
    for i, res in enumerate(sharing.resources):
        if res.rename:
            # The profile rules reject this; NVIDIA's plugin would ignore the name and leave
            # pods requesting a resource nobody offers.
            raise ValueError(
                f"devicePlugin.sharing.{key}.resources[{i}].rename: NVIDIA's device plugin"
                " cannot advertise a custom name; remove rename or use implementation: gpustack"
            )


def _with_mps(canonical: dict[str, Any], mps: TimeSlicing, implementation: str) -> dict[str, Any]:
    """NVIDIA's config with ``sharing.mps`` and ``flags.mpsRoot`` added."""
    if implementation != "nvidia":
        # The profile rules reject this: gpustack's plugin would not share the GPUs at all.
        raise ValueError(
            "devicePlugin.sharing.mps: gpustack's device plugin does not implement MPS; use"
            " implementation: nvidia"
        )
    _no_rename(mps, "mps")
    # Checked by the plugin's own parser in the time-slicing shape it shares with MPS.
    checked = PluginConfig.from_dict(
        {"version": "v1", "sharing": {"timeSlicing": _replicated(mps)}}
    )
    flags = {k: v for k, v in canonical["flags"].items() if k != "plugin"}
    flags["mpsRoot"] = MPS_ROOT
    flags["plugin"] = canonical["flags"]["plugin"]
    sharing = {**canonical["sharing"], "mps": checked.to_dict()["sharing"]["timeSlicing"]}
    return {**canonical, "flags": flags, "sharing": sharing}


def render_config(profile: Profile) -> str:
    """The config file's text (YAML, keys in file order)."""
    return yaml.safe_dump(build_config(profile), sort_keys=False)


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
