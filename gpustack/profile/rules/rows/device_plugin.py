"""A data table, and reads as one: the registry's rows for ``devicePlugin`` (sharing, node
configs and the MIG layouts of its GPUs), each the whole declaration of one rule."""

from __future__ import annotations

from gpustack.profile.rules import (
    device_plugin,
    gpus,
    node_configs,
    sharing,
)
from gpustack.profile.rules.rule import Rule

RULES: tuple[Rule, ...] = (
    Rule(
        id="simulated-needs-gpustack",
        check=device_plugin.simulated_needs_gpustack,
        section="devicePlugin",
        summary="the simulated backend only with gpustack's device plugin",
        fix="set `implementation: gpustack`, or `backend: nvml`",
    ),
    Rule(
        id="nvidia-plugin-resource-name",
        check=device_plugin.nvidia_plugin_resource_name,
        section="devicePlugin",
        summary="NVIDIA's plugin only with `resourceName: nvidia.com/gpu`",
        fix="remove `resourceName`, or use `implementation: gpustack`",
    ),
    Rule(
        id="nvidia-plugin-ignores-rename",
        check=sharing.nvidia_plugin_ignores_rename,
        section="devicePlugin.sharing",
        summary="no sharing `rename` with NVIDIA's plugin, which drops it",
        fix="remove `rename`, or use `implementation: gpustack`",
        per_node_config=True,
    ),
    Rule(
        id="resource-names-well-formed",
        check=device_plugin.resource_names_well_formed,
        section="devicePlugin",
        summary="every resource name is `nvidia.com/<name>`, at most 63 characters",
        fix="use lowercase letters, digits, `-` and `.` after `nvidia.com/`",
        per_node_config=True,
    ),
    Rule(
        id="resource-name-near-miss",
        check=device_plugin.resource_name_near_miss,
        section="devicePlugin",
        summary="`resourceName` is no slip of `nvidia.com/gpu` or `nvidia.com/gpu.shared` "
        "(e.g. `nvidia.com/gpus`), which no workload would request",
        fix="use the well-known name it misspells, or a name of your own that differs by more",
        per_node_config=True,
    ),
    Rule(
        id="sharing-needs-two-replicas",
        check=sharing.sharing_needs_two_replicas,
        section="devicePlugin.sharing",
        summary="time-slicing and MPS replicas are 2 or more",
        fix="set `replicas` to 2 or more, or remove the sharing",
        per_node_config=True,
    ),
    Rule(
        id="time-slicing-resources-unique",
        check=sharing.time_slicing_resources_unique,
        section="devicePlugin.sharing",
        summary="each resource is time-sliced once, and no rename is advertised twice",
        fix="keep one entry per resource, and a rename of its own",
        per_node_config=True,
    ),
    Rule(
        id="time-slicing-resources-exist",
        check=sharing.time_slicing_resources_exist,
        section="devicePlugin.sharing",
        summary="time-slicing shares only resources the plugin has",
        fix="share one of the resources listed",
        per_node_config=True,
    ),
    Rule(
        id="mps-needs-nvidia-plugin",
        check=sharing.mps_needs_nvidia_plugin,
        section="devicePlugin.sharing",
        summary="MPS only with NVIDIA's plugin",
        fix="set `implementation: nvidia`, or share with `timeSlicing`",
        per_node_config=True,
    ),
    Rule(
        id="mps-excludes-time-slicing",
        check=sharing.mps_excludes_time_slicing,
        section="devicePlugin.sharing",
        summary="MPS and time-slicing are not both given",
        fix="keep either `sharing.mps` or `sharing.timeSlicing`",
        per_node_config=True,
    ),
    Rule(
        id="mps-not-with-mig-devices",
        check=sharing.mps_not_with_mig_devices,
        section="devicePlugin.sharing",
        summary="MPS shares whole GPUs, never MIG devices",
        fix="set `migStrategy: none`, or remove `sharing.mps`",
        per_node_config=True,
    ),
    Rule(
        id="mps-shares-whole-gpus",
        check=sharing.mps_shares_whole_gpus,
        section="devicePlugin.sharing",
        summary="MPS shares the plugin's whole-GPU resource, once",
        fix="set `name` to the plugin's `resourceName`; one entry",
        per_node_config=True,
    ),
    Rule(
        id="mig-needs-capable-gpu",
        check=gpus.mig_needs_capable_gpu,
        section="gpus",
        summary="MIG only on a MIG-capable product, and a MIG layout only with `gpus.product`",
        fix="remove the MIG settings, or set a MIG-capable product",
        per_node_config=True,
    ),
    Rule(
        id="mig-layout-fits",
        check=gpus.mig_layout_fits,
        section="gpus",
        summary="the MIG layout uses the product's MIG profiles and fits its slices",
        fix="use the product's profiles; fewer or smaller instances",
        per_node_config=True,
    ),
    Rule(
        id="mig-strategy-matches-layout",
        check=gpus.mig_strategy_matches_layout,
        section="gpus",
        summary="a MIG layout with a MIG strategy; `single` with one MIG profile only",
        fix="set `migStrategy: mixed` (or `single` for a uniform layout)",
        per_node_config=True,
    ),
    Rule(
        id="node-configs-need-plugin",
        check=node_configs.node_configs_need_plugin,
        section="devicePlugin.nodeConfigs",
        summary="node configs only with gpustack's device plugin DaemonSets enabled",
        fix="remove `nodeConfigs`, or set `devicePlugin.enabled: true`",
    ),
    Rule(
        id="node-config-names-unique",
        check=node_configs.node_config_names_unique,
        section="devicePlugin.nodeConfigs",
        summary="node config names are unique and take no other DaemonSet's name",
        fix="give each node config its own name",
    ),
)
