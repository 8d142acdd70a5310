"""The component registry: the one list of what the GPU stack is made of.

Each :class:`Component` is one output folder under ``dist/clusters/<cluster>/`` and one cdk8s
chart. Everything that used to restate the component list reads it from here instead:

- :mod:`gpustack.constructs.stack` synthesizes the enabled components, in registry order;
- :mod:`gpustack.constructs.labels` takes each object's Argo CD sync wave from its component;
- :mod:`gpustack.synth.layout` sorts files by the registry order and refuses a component that is
  not registered (it can no longer sort last by accident).

So a new component is one :class:`Component` entry here plus its construct module. Pure Python:
no cdk8s is imported (the construct is named by a ``"module:Class"`` string that
:mod:`gpustack.constructs.stack` imports), so the profile, validation and layout code can use the
registry without starting Node.js. Lookups read :data:`REGISTRY` when called, never a copy, so a
test that swaps the registry sees its entries everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpustack.profile.model import Profile


@dataclass(frozen=True)
class Component:
    """One component of the stack.

    - ``name``: the output folder and the ``app.kubernetes.io/component`` label value (also the
      cdk8s chart and construct id).
    - ``sync_wave``: Argo CD sync wave of all its objects. Waves never decrease along the
      registry order, so Argo CD applies components in the order they come up.
    - ``enabled``: whether a profile synthesizes this component at all.
    - ``construct``: ``"module:Class"`` of the cdk8s construct, called as
      ``Class(scope, name, props)``. A string, so this module imports no cdk8s.
    - ``props``: ``"module:Class"`` of its props, built with ``Class.from_profile(profile)``
      before any cdk8s object exists (bad input fails before Node.js does any work).

    The order (file order in a cluster folder and synthesis order) is the entry's position in
    :data:`REGISTRY`: stated once, by where it is written.
    """

    name: str
    sync_wave: int
    enabled: Callable[[Profile], bool]
    construct: str
    props: str


def _always(profile: Profile) -> bool:
    return True


def _gfd_enabled(profile: Profile) -> bool:
    # GFD labels what NVML reports: the simulated backend has no GPUs for it to find
    dp = profile.device_plugin
    simulated = dp.implementation == "gpustack" and dp.backend == "simulated"
    return profile.gpu_feature_discovery.enabled and not simulated


def _mig_manager_enabled(profile: Profile) -> bool:
    from gpustack.profile.derive import mig_manager_enabled  # the model imports this module

    return mig_manager_enabled(profile)


#: Every component, in the order the stack comes up on a node.
REGISTRY: tuple[Component, ...] = (
    # The namespace and runtime classes everything else lives in or names.
    Component(
        "common",
        -2,
        _always,
        "gpustack.constructs.common:Common",
        "gpustack.constructs.common:CommonProps",
    ),
    # Node labels first: the default node selector is a label the GPU node rule sets.
    Component(
        "node-feature-discovery",
        -1,
        lambda p: p.node_feature_discovery.enabled or p.node_feature_discovery.gpu_node_rule,
        "gpustack.constructs.nfd:NodeFeatureDiscovery",
        "gpustack.constructs.nfd:NfdProps",
    ),
    Component(
        "driver",
        -1,
        lambda p: p.driver.enabled,
        "gpustack.constructs.driver:NvidiaDriver",
        "gpustack.constructs.driver:DriverProps",
    ),
    Component(
        "container-toolkit",
        0,
        lambda p: p.toolkit.enabled,
        "gpustack.constructs.toolkit:ContainerToolkit",
        "gpustack.constructs.toolkit:ToolkitProps",
    ),
    Component(
        "device-plugin",
        1,
        lambda p: p.device_plugin.enabled,
        "gpustack.constructs.device_plugin:DevicePlugin",
        "gpustack.constructs.device_plugin:DevicePluginProps",
    ),
    Component(
        "gpu-feature-discovery",
        1,
        _gfd_enabled,
        "gpustack.constructs.gfd:GpuFeatureDiscovery",
        "gpustack.constructs.gfd:GfdProps",
    ),
    Component(
        "mig-manager",
        1,
        _mig_manager_enabled,
        "gpustack.constructs.mig_manager:MigManager",
        "gpustack.constructs.mig_manager:MigManagerProps",
    ),
    Component(
        "dcgm-exporter",
        1,
        lambda p: p.dcgm_exporter.enabled,
        "gpustack.constructs.dcgm_exporter:DcgmExporter",
        "gpustack.constructs.dcgm_exporter:DcgmExporterProps",
    ),
    Component(
        "examples",
        2,
        lambda p: bool(p.workloads.examples),
        "gpustack.constructs.examples:Examples",
        "gpustack.constructs.examples:ExamplesProps",
    ),
)


def names() -> tuple[str, ...]:
    """Registered component names, in order."""
    return tuple(c.name for c in REGISTRY)


def get(name: str) -> Component:
    """The registered component ``name``; :class:`KeyError` naming the registry otherwise."""
    for component in REGISTRY:
        if component.name == name:
            return component
    raise KeyError(f"component {name!r} is not registered in gpustack.components.REGISTRY")


def order(name: str) -> int:
    """Position of ``name`` in the registry (its folder's place in a cluster's file order)."""
    return names().index(get(name).name)


def sync_wave(name: str) -> str:
    """Argo CD sync wave of component ``name``, as the string Argo CD requires."""
    return str(get(name).sync_wave)


def enabled(profile: Profile) -> tuple[Component, ...]:
    """The components ``profile`` synthesizes, in registry order."""
    return tuple(c for c in REGISTRY if c.enabled(profile))
