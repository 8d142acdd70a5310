"""What a profile means: facts derived from it that validation and synthesis both rely on.

Why a module of its own: the rules check these facts and the constructs render them (the
resource an example job requests, the plugin config each node pool gets). Stated once here, the
two cannot drift apart, and neither has to import the other: rules and constructs both import
this module, which imports only the model and the catalog. Nothing here produces a finding.
"""

from __future__ import annotations

from gpustack import dra_upstream
from gpustack.profile import catalog, cuda_catalog
from gpustack.profile.model import (
    SELF_CONFIGURING,
    Example,
    Profile,
    TimeSlicing,
    TimeSlicingResource,
    node_config_profile,
)

#: Prefix of the resources a mixed MIG strategy advertises, one per MIG profile.
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"


def architecture_of(profile: Profile) -> catalog.Architecture | None:
    """The GPUs' architecture: from the product when given, else ``gpus.architecture``."""
    gpus = profile.gpus
    name = catalog.PRODUCTS[gpus.product].architecture if gpus.product else gpus.architecture
    return catalog.ARCHITECTURES.get(name) if name else None


def sharing(profile: Profile) -> TimeSlicing | None:
    """The sharing the plugin applies: MPS, else time-slicing (NVIDIA's plugin picks MPS when
    both are given; the rule ``mps-excludes-time-slicing`` reports that)."""
    dp = profile.device_plugin
    return dp.mps if dp.mps is not None else dp.time_slicing


def shared_name(profile: Profile, name: str) -> str:
    """The name the plugin advertises resource ``name`` under once sharing applies: its
    ``rename``, else ``<name>.shared`` with ``renameByDefault``, else ``name`` unchanged."""
    shared = sharing(profile)
    if shared is None:
        return name
    for res in shared.resources:
        if res.name == name:
            if res.rename:
                return res.rename
            return f"{name}.shared" if shared.rename_by_default else name
    return name


def unshared_resources(profile: Profile) -> list[str]:
    """Resources the plugin has before sharing: the plugin's name, and with migStrategy mixed
    one per MIG profile of the layout."""
    dp = profile.device_plugin
    names = [dp.resource_name]
    if dp.mig_strategy == "mixed":
        names += [f"{MIG_RESOURCE_PREFIX}{name}" for name, _ in profile.gpus.mig]
    return names


def advertised_resources(profile: Profile) -> tuple[str, ...]:
    """Resource names the device plugin advertises, after MIG and sharing (time-slicing or MPS)
    renames."""
    return tuple(shared_name(profile, name) for name in unshared_resources(profile))


def shared_entry(profile: Profile, wanted: str) -> TimeSlicingResource | None:
    """The sharing (time-slicing or MPS) entry whose shared resource is ``wanted``, if any."""
    shared = sharing(profile)
    for res in shared.resources if shared else ():
        if shared_name(profile, res.name) == wanted:
            return res
    return None


def workload_resource(profile: Profile, example: Example) -> str:
    """The resource an example job requests: its own ``resourceName``, else the plugin's
    (time-slicing or MPS rename applied)."""
    return example.resource_name or shared_name(profile, profile.device_plugin.resource_name)


def workload_cuda(example: Example) -> str | None:
    """CUDA release of an example: ``cudaVersion`` wins over what the image tag says."""
    return example.cuda_version or cuda_catalog.cuda_from_image(example.image)


def plugin_configs(profile: Profile) -> list[tuple[str | None, Profile]]:
    """The top-level plugin config (name ``None``) and each node config, as the profile its
    nodes see (see :func:`gpustack.profile.model.node_config_profile`)."""
    configs: list[tuple[str | None, Profile]] = [(None, profile)]
    for nc in profile.device_plugin.node_configs:
        configs.append((nc.name, node_config_profile(profile, nc)))
    return configs


def advertised_anywhere(profile: Profile) -> list[str]:
    """Resources advertised by the top-level config or any node config, in first-seen order."""
    names: dict[str, None] = {}
    for _, view in plugin_configs(profile):
        names.update(dict.fromkeys(advertised_resources(view)))
    return list(names)


def mig_resources_unknown(profile: Profile) -> bool:
    """Some config is mixed without a layout: its MIG resources are unknown, not wrong."""
    return any(
        v.device_plugin.mig_strategy == "mixed" and not v.gpus.mig
        for _, v in plugin_configs(profile)
    )


def node_capacity(profile: Profile, wanted: str) -> tuple[int, str] | None:
    """How many ``wanted`` one node of this config offers, and what they are; ``None`` when it
    does not advertise ``wanted``. ``validate`` (the example jobs) and ``lint`` (the team's own)
    both ask this one function, so they cannot disagree on what fits a node.

    A MIG layout is applied to every GPU of the node (the MIG manager's config says
    ``devices: all``), so with ``migStrategy: mixed`` a node offers each MIG profile's count per
    GPU times its GPUs, and no whole GPU: the plugin's own resource counts 0. With ``single`` it
    offers the layout's slices under the plugin's resource. Without a layout (mixed, nodes
    partitioned by someone else) the MIG resources are unknown here and whole GPUs are counted as
    ``gpus.perNode``. Sharing multiplies by the entry's replicas."""
    if wanted not in advertised_resources(profile):
        return None
    dp = profile.device_plugin
    per_node = profile.gpus.per_node
    layout = dict(profile.gpus.mig)
    entry = shared_entry(profile, wanted)
    base = entry.name if entry is not None else wanted
    if base.startswith(MIG_RESOURCE_PREFIX) and dp.mig_strategy == "mixed":
        per_gpu = layout.get(base.removeprefix(MIG_RESOURCE_PREFIX))
        if per_gpu is None:
            return None
        count, what = per_gpu * per_node, "MIG devices"
    elif base != dp.resource_name:
        return None
    elif layout and dp.mig_strategy == "mixed":
        count, what = 0, "whole GPUs: the MIG layout splits every GPU"
    elif layout and dp.mig_strategy == "single":
        count, what = sum(layout.values()) * per_node, "MIG devices"
    else:
        count, what = per_node, "GPU" if per_node == 1 else "GPUs"
    if entry is not None:
        kind = "MPS" if dp.mps is not None else "time-sliced"
        return count * entry.replicas, f"{kind} replicas"
    return count, what


#: Handlers the toolkit registers next to the main one (fixed names in nvidia-ctk-installer).
EXTRA_HANDLERS = ("nvidia-cdi", "nvidia-legacy")


def is_simulated(profile: Profile) -> bool:
    """True when the plugin advertises simulated GPUs (gpustack implementation only)."""
    dp = profile.device_plugin
    return dp.implementation == "gpustack" and dp.backend == "simulated"


def gpu_runtime_class(profile: Profile) -> str | None:
    """Name of the RuntimeClass (= handler) for GPU containers; ``None`` for CRI-O hook mode."""
    if profile.cluster.runtime.name == "crio" and not profile.toolkit.cdi.enabled:
        return None
    return profile.toolkit.runtime_class


def runtime_classes(profile: Profile) -> tuple[str, ...]:
    """Every RuntimeClass gpustack declares: the main one, plus the mode-forcing ones with CDI.

    ``nvidia-cdi``/``nvidia-legacy`` are declared only when gpustack runs the toolkit (so the
    handlers are known to exist) with CDI on: ``nvidia-cdi`` needs the CDI specs the toolkit writes
    only then, and without CDI ``nvidia`` already is the legacy mode. Never on k3s/RKE2, whose
    regenerated config has no such handlers. Stated here, not in the constructs, so that
    ``gpustack lint`` checks a workload's ``runtimeClassName`` against the very list ``synth``
    writes.
    """
    main = gpu_runtime_class(profile)
    if main is None or (is_simulated(profile) and not profile.toolkit.enabled):
        # Simulated GPUs on nodes gpustack does not configure: nothing would use the class, and
        # such nodes (kind, k3d) usually have no NVIDIA handler at all.
        return ()
    names = [main]
    self_configuring = profile.cluster.runtime.distribution in SELF_CONFIGURING
    if profile.toolkit.enabled and profile.toolkit.cdi.enabled and not self_configuring:
        names += [h for h in EXTRA_HANDLERS if h != main]
    return tuple(names)


#: mig-parted config names gpustack always generates, or for ``gpus.mig``.
MIG_ALL_DISABLED = "all-disabled"
MIG_DEFAULT = "default"
#: The node label whose value names the MIG config the MIG manager applies, and the one it
#: reports its progress in (``success``, ``failed``, ``pending``, ``rebooting``).
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
MIG_STATE_LABEL = "nvidia.com/mig.config.state"


def mig_layouts(profile: Profile) -> dict[str, tuple[tuple[str, int], ...]]:
    """The MIG layouts the MIG manager's config offers, by config name (the value of a node's
    ``nvidia.com/mig.config`` label): ``all-disabled`` (empty layout), ``default`` for
    ``gpus.mig``, and each node config whose view has a layout, under its own name."""
    layouts: dict[str, tuple[tuple[str, int], ...]] = {MIG_ALL_DISABLED: ()}
    if profile.gpus.mig:
        layouts[MIG_DEFAULT] = profile.gpus.mig
    for name, view in plugin_configs(profile):
        if name is not None and view.gpus.mig:
            if name in layouts:
                raise ValueError(f"node config {name!r} takes a MIG config name gpustack reserves")
            layouts[name] = view.gpus.mig
    return layouts


def mig_manager_enabled(profile: Profile) -> bool:
    """``migManager.enabled``, or when unset: some config (top level or node config) has a
    MIG layout and the GPUs are real (the simulated backend has none to partition)."""
    if profile.mig_manager.enabled is not None:
        return profile.mig_manager.enabled
    dp = profile.device_plugin
    simulated = dp.implementation == "gpustack" and dp.backend == "simulated"
    return len(mig_layouts(profile)) > 1 and not simulated


def dra_device_classes(profile: Profile) -> tuple[str, ...]:
    """The DeviceClasses the profile's DRA driver creates (``dra``), in NVIDIA's chart order:
    ``gpu.nvidia.com`` and ``mig.nvidia.com`` for GPU allocation, the two ComputeDomain classes
    for ComputeDomains (with host-managed IMEX, the default channel's alone: the chart's
    ``deviceclass-compute-domain-daemon.yaml``); none when the driver is off.
    (``vfio.gpu.nvidia.com`` needs the driver's PassthroughSupport gate, which gpustack does not
    turn on.)"""
    dra = profile.dra
    if not dra.enabled:
        return ()
    wanted: list[str] = []
    if dra.gpus:
        wanted += [dra_upstream.GPU_DEVICE_CLASS, dra_upstream.MIG_DEVICE_CLASS]
    if dra.compute_domains:
        wanted += list(dra_upstream.COMPUTE_DOMAIN_DEVICE_CLASSES)
        if dra.imex_mode == "hostManaged":
            wanted.remove(dra_upstream.COMPUTE_DOMAIN_DEVICE_CLASSES[0])
    return tuple(c.name for c in dra_upstream.DEVICE_CLASSES if c.name in wanted)


def dra_allocates_gpus(profile: Profile) -> bool:
    """Whether NVIDIA's DRA driver hands out GPUs (``dra.enabled`` and ``dra.gpus``)."""
    return profile.dra.enabled and profile.dra.gpus


def device_plugin_avoids(profile: Profile) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """Node affinity requirements that keep the device plugin off the nodes whose GPUs DRA
    allocates (``dra.nodeSelector``): one ``NotIn`` per label, so a node that carries any of
    them is DRA's. Without a DRA node pool there is nothing to avoid (the rule
    ``dra-device-plugin-same-gpus`` refuses the plugin and DRA on the same GPUs)."""
    if not dra_allocates_gpus(profile):
        return ()
    return tuple((key, "NotIn", (value,)) for key, value in profile.dra.node_selector)


def claims_gpus(example: Example) -> bool:
    """Whether an example gets its GPUs by a ResourceClaim (``dra.gpus``), not by requesting an
    extended resource of the device plugin."""
    return example.dra is not None and example.dra.gpus
