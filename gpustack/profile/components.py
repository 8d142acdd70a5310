"""The component registry: the one list of what the GPU stack is made of.

Each :class:`Component` is one output folder under ``dist/clusters/<cluster>/`` and one cdk8s
chart, and its row is the whole declaration of it: every table that used to restate the
component list is derived from here.

- :mod:`gpustack.constructs.stack` synthesizes the enabled components, in registry order;
- :mod:`gpustack.constructs.labels` takes each object's Argo CD sync wave from its component;
- :mod:`gpustack.synth.layout` sorts files by the registry order and refuses a component that is
  not registered (it can no longer sort last by accident);
- :mod:`gpustack.constructs.placement` gives a deploy label to the rows with ``deploy_label``,
  and the driver manager seeds the labels of every ``gpu_client`` row, on or off;
- ``cluster.requireImageDigests`` (:mod:`gpustack.profile.rules.cluster`) checks the ``images``
  of every enabled row;
- ``gpustack doctor`` (:mod:`gpustack.doctor.nodes`) walks the ``readiness`` stages in order;
- :mod:`gpustack.profile.graph` (``gpustack validate``) reads ``waits_for``, ``writes_files``,
  ``writes_labels`` and ``placement``: every readiness file a pod waits for has a writer on its
  nodes, and no pod is placed by a label only a pod placed the same way writes.

So a new component is one :class:`Component` entry here plus its construct module; the tests in
``tests/constructs/test_component_steps.py`` fail, naming the step, when a part is forgotten.
Pure Python: no cdk8s is imported (the construct is named by a ``"module:Class"`` string that
:mod:`gpustack.constructs.stack` imports), so the profile, validation and layout code can use the
registry without starting Node.js. Lookups read :data:`REGISTRY` when called, never a copy, so a
test that swaps the registry sees its entries everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpustack.fields.declare import camel
from gpustack.profile import node_label_catalog as catalog
from gpustack.profile import readiness as decisions
from gpustack.profile.derive import mig_manager_enabled
from gpustack.profile.document import JsonPath
from gpustack.profile.model import Profile

#: The images a component runs under a profile, each with the profile field that pins it.
Images = Callable[[Profile], Iterator[tuple[JsonPath, str]]]
#: Host paths of the readiness files its pods wait for, or write, under a profile.
Files = Callable[[Profile], frozenset[str]]
#: The node labellers (:mod:`gpustack.profile.node_label_catalog` sources) its pods are.
Labels = Callable[[Profile], frozenset[str]]

#: Its pods are placed by ``cluster.nodeSelector`` (and its own deploy label, if it has one).
GPU_NODES = "gpu-nodes"
#: Its pods run on every node, whatever ``cluster.nodeSelector`` says (NFD's worker).
EVERY_NODE = "every-node"


@dataclass(frozen=True)
class Readiness:
    """What ``gpustack doctor`` checks of a component's pod on each GPU node.

    - ``check``: the check ID reported when its pod is missing or not Ready.
    - ``what``: how a message names it ("container toolkit").
    - ``plugin``: the device plugin's stage (missing, crash-looping, not ready: three IDs, see
      :mod:`gpustack.doctor.nodes`) rather than the plain one.
    """

    check: str
    what: str
    plugin: bool = False


def no_images(profile: Profile) -> Iterator[tuple[JsonPath, str]]:
    return iter(())


def nothing(profile: Profile) -> frozenset[str]:
    return frozenset()


@dataclass(frozen=True)
class Component:
    """One component of the stack, declared completely.

    - ``name``: the output folder and the ``app.kubernetes.io/component`` label value (also the
      cdk8s chart and construct id); NVIDIA's deploy label name where it has one.
    - ``sync_wave``: Argo CD sync wave of all its objects. Waves never decrease along the
      registry order, so Argo CD applies components in the order they come up.
    - ``enabled``: whether a profile synthesizes this component at all.
    - ``construct``: ``"module:Class"`` of the cdk8s construct, called as
      ``Class(scope, name, props)``. A string, so this module imports no cdk8s.
    - ``props``: ``"module:Class"`` of its props, built with ``Class.from_profile(profile)``
      before any cdk8s object exists (bad input fails before Node.js does any work).
    - ``section``: the profile section (a :class:`~gpustack.profile.model.Profile` attribute)
      that configures it and whose ``enabled`` switch, if it has one, turns it on; ``None`` for
      none of its own.
    - ``turn_on``: a profile document fragment that turns it on (the tests' "everything on"
      profile is every row's fragment merged).
    - ``images``: every image it runs under a profile, with the profile field that pins it
      (a ``digest`` field, or the full reference): the digest policy reads these.
    - ``deploy_label``: its pods are placed by ``nvidia.com/gpu.deploy.<name>`` (the GPU
      Operator's label names are gpustack's component names).
    - ``gpu_client``: its pods hold the GPU or the driver's files, so NVIDIA's driver manager
      pauses it (its deploy label is seeded) before it unloads the driver.
    - ``readiness``: its stage in ``gpustack doctor``'s per-node walk, if it has one.
    - ``waits_for`` / ``writes_files``: host paths of the readiness files its pods wait for /
      write under a profile (decided in :mod:`gpustack.profile.readiness`, which the constructs
      build their scripts from; a test reads them back out of the synthesized scripts).
    - ``writes_labels``: the node labellers its pods are, as
      :mod:`gpustack.profile.node_label_catalog` names them (GFD writes the ``GFD`` labels).
    - ``placement``: :data:`GPU_NODES` or :data:`EVERY_NODE`.

    The order (file order in a cluster folder, synthesis order, doctor's stage order) is the
    entry's position in :data:`REGISTRY`: stated once, by where it is written.
    """

    name: str
    sync_wave: int
    enabled: Callable[[Profile], bool]
    construct: str
    props: str
    section: str | None = None
    turn_on: Mapping[str, Any] = field(default_factory=dict)
    images: Images = no_images
    deploy_label: bool = False
    gpu_client: bool = False
    readiness: Readiness | None = None
    waits_for: Files = nothing
    writes_files: Files = nothing
    writes_labels: Labels = nothing
    placement: str = GPU_NODES

    @property
    def folder(self) -> str:
        """Its folder under ``dist/clusters/<cluster>/``: its name."""
        return self.name


def _always(profile: Profile) -> bool:
    return True


def _gfd_enabled(profile: Profile) -> bool:
    # GFD labels what NVML reports: the simulated backend has no GPUs for it to find
    dp = profile.device_plugin
    simulated = dp.implementation == "gpustack" and dp.backend == "simulated"
    return profile.gpu_feature_discovery.enabled and not simulated


def _readiness(decision: str) -> Files:
    """The :mod:`gpustack.profile.readiness` function ``decision``, looked up when called (so a
    test that swaps one sees it here too)."""

    def files(p: Profile) -> frozenset[str]:
        found: frozenset[str] = getattr(decisions, decision)(p)
        return found

    files.__name__ = decision
    return files


def _nfd_labels(p: Profile) -> frozenset[str]:
    rule = {catalog.GPU_NODE_RULE} if p.node_feature_discovery.gpu_node_rule else set()
    return frozenset(rule | ({catalog.NFD} if p.node_feature_discovery.enabled else set()))


def _gfd_labels(p: Profile) -> frozenset[str]:
    return frozenset({catalog.GFD})


def _manager_labels(p: Profile) -> frozenset[str]:
    # the driver pod's deploy-labels step, the MIG manager's mig.config.state: labels
    # administrators set too, so never the only writer
    return frozenset({catalog.MANAGERS})


def _driver_labels(p: Profile) -> frozenset[str]:
    seeds = p.driver.upgrade.driver_manager and p.cluster.deploy_labels == "optional"
    return _manager_labels(p) if seeds else frozenset()


def _section_image(section: str) -> Images:
    """The image of profile section ``section`` (its ``image_ref()``), pinned by the section's
    ``digest`` field."""

    def images(p: Profile) -> Iterator[tuple[JsonPath, str]]:
        yield (camel(section), "digest"), getattr(p, section).image_ref()

    return images


def _driver_images(p: Profile) -> Iterator[tuple[JsonPath, str]]:
    # the driver pod also runs NVIDIA's driver manager, and its deploy-labels step's kubectl
    yield ("driver", "digest"), p.driver.image_ref()
    upgrade = p.driver.upgrade
    if upgrade.driver_manager:
        yield ("driver", "upgrade", "digest"), upgrade.image_ref()
        if p.cluster.deploy_labels == "optional":
            yield ("driver", "upgrade", "kubectlImage"), upgrade.kubectl_image


def _example_images(p: Profile) -> Iterator[tuple[JsonPath, str]]:
    for i, example in enumerate(p.workloads.examples):
        yield ("workloads", "examples", i, "image"), example.image


def _gpu_client(
    name: str,
    enabled: Callable[[Profile], bool],
    construct: str,
    section: str,
    *,
    wave: int = 1,
    turn_on: Mapping[str, Any] | None = None,
    readiness: Readiness | None = None,
    waits_for: Files = nothing,
    writes_files: Files = nothing,
    writes_labels: Labels = nothing,
) -> Component:
    """A GPU client, placed by its deploy label (the driver manager pauses it), turned on and its
    image pinned by profile ``section``; ``construct``: ``"module:Class:Props"`` in constructs."""
    module, cls, props = construct.split(":")
    return Component(
        name,
        wave,
        enabled,
        f"gpustack.constructs.{module}:{cls}",
        f"gpustack.constructs.{module}:{props}",
        section=section,
        turn_on={camel(section): {"enabled": True}} if turn_on is None else turn_on,
        images=_section_image(section),
        deploy_label=True,
        gpu_client=True,
        readiness=readiness,
        waits_for=waits_for,
        writes_files=writes_files,
        writes_labels=writes_labels,
    )


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
        section="node_feature_discovery",
        turn_on={"nodeFeatureDiscovery": {"enabled": True}},
        images=_section_image("node_feature_discovery"),
        writes_labels=_nfd_labels,
        placement=EVERY_NODE,
    ),
    Component(
        "driver",
        -1,
        lambda p: p.driver.enabled,
        "gpustack.constructs.driver:NvidiaDriver",
        "gpustack.constructs.driver:DriverProps",
        section="driver",
        turn_on={"driver": {"enabled": True}},
        images=_driver_images,
        deploy_label=True,
        readiness=Readiness("driver-not-ready", "driver"),
        waits_for=_readiness("driver_waits"),
        writes_files=_readiness("driver_writes"),
        writes_labels=_driver_labels,
    ),
    _gpu_client(
        "container-toolkit",
        lambda p: p.toolkit.enabled,
        "toolkit:ContainerToolkit:ToolkitProps",
        "toolkit",
        wave=0,
        readiness=Readiness("toolkit-not-ready", "container toolkit"),
        waits_for=_readiness("toolkit_waits"),
        writes_files=_readiness("toolkit_writes"),
    ),
    _gpu_client(
        "device-plugin",
        lambda p: p.device_plugin.enabled,
        "device_plugin:DevicePlugin:DevicePluginProps",
        "device_plugin",
        readiness=Readiness("device-plugin-missing", "device plugin", plugin=True),
        waits_for=_readiness("plugin_waits"),
        writes_files=_readiness("plugin_writes"),
    ),
    _gpu_client(
        "gpu-feature-discovery",
        _gfd_enabled,
        "gfd:GpuFeatureDiscovery:GfdProps",
        "gpu_feature_discovery",
        waits_for=_readiness("gpu_client_waits"),
        writes_labels=_gfd_labels,
    ),
    _gpu_client(
        "mig-manager",
        mig_manager_enabled,
        "mig_manager:MigManager:MigManagerProps",
        "mig_manager",
        waits_for=_readiness("mig_manager_waits"),
        writes_labels=_manager_labels,
    ),
    _gpu_client(
        "dcgm-exporter",
        lambda p: p.dcgm_exporter.enabled,
        "dcgm_exporter:DcgmExporter:DcgmExporterProps",
        "dcgm_exporter",
        waits_for=_readiness("gpu_client_waits"),
    ),
    # NVIDIA's DRA driver: GPUs by ResourceClaims on its node pool, and ComputeDomains.
    _gpu_client(
        "dra-driver",
        lambda p: p.dra.enabled,
        "dra_driver:DraDriver:DraDriverProps",
        "dra",
        turn_on={
            "dra": {
                "enabled": True,
                "computeDomains": True,
                "nodeSelector": {"nvidia.com/gpu.allocation": "dra"},
            },
            "cluster": {"kubernetesVersion": "1.34"},
        },
        waits_for=_readiness("dra_plugin_waits"),
    ),
    Component(
        "examples",
        2,
        lambda p: bool(p.workloads.examples),
        "gpustack.constructs.examples:Examples",
        "gpustack.constructs.examples:ExamplesProps",
        section="workloads",
        turn_on={"workloads": {"examples": [{"name": "smoke"}]}},
        images=_example_images,
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
    raise KeyError(f"component {name!r} is not registered in gpustack.profile.components.REGISTRY")


def for_section(section: str) -> Component:
    """The registered component that reads profile section ``section`` (a
    :class:`~gpustack.profile.model.Profile` attribute); :class:`KeyError` otherwise."""
    for component in REGISTRY:
        if component.section == section:
            return component
    raise KeyError(
        f"no component of gpustack.profile.components.REGISTRY reads section {section!r}"
    )


def order(name: str) -> int:
    """Position of ``name`` in the registry (its folder's place in a cluster's file order)."""
    return names().index(get(name).name)


def sync_wave(name: str) -> str:
    """Argo CD sync wave of component ``name``, as the string Argo CD requires."""
    return str(get(name).sync_wave)


def enabled(profile: Profile) -> tuple[Component, ...]:
    """The components ``profile`` synthesizes, in registry order."""
    return tuple(c for c in REGISTRY if c.enabled(profile))


def deploy_components() -> tuple[str, ...]:
    """The components that have a deploy label, in registry order."""
    return tuple(c.name for c in REGISTRY if c.deploy_label)


def images(profile: Profile) -> Iterator[tuple[JsonPath, str]]:
    """Every image ``profile``'s stack runs, with the profile field that pins it: each enabled
    component's, in registry order."""
    for component in enabled(profile):
        yield from component.images(profile)


def readiness_stages() -> tuple[tuple[Component, Readiness], ...]:
    """The components ``gpustack doctor`` checks on a node, in the order they come up."""
    return tuple((c, c.readiness) for c in REGISTRY if c.readiness is not None)
