"""What the profile tells the linter about the cluster: resources, capacity, taints, driver.

Every fact comes from :mod:`gpustack.profile.derive` (the same derivations ``validate`` and
``synth`` use), so lint can never disagree with the stack gpustack writes. One :class:`Pool` per
plugin config (the top-level one and each ``devicePlugin.nodeConfigs`` entry): what its nodes
advertise, how many of each per node, and the labels they are known to carry. Without a profile
(:func:`generic`) only NVIDIA's well-known resource names are known, and the rules that need the
profile do not run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpustack.kube.claims import NVIDIA_CLASSES, Defined
from gpustack.profile import catalog, derive
from gpustack.profile.model import Profile, Taint

#: Resource names NVIDIA's and gpustack's plugins advertise by default (whole GPUs, shared with
#: renameByDefault, and each MIG profile of a mixed strategy).
GENERIC_RESOURCES = frozenset(
    {"nvidia.com/gpu", "nvidia.com/gpu.shared"}
    | {
        f"{derive.MIG_RESOURCE_PREFIX}{mig}"
        for product in catalog.PRODUCTS.values()
        for mig in product.mig
    }
)


@dataclass(frozen=True)
class Pool:
    """The nodes of one plugin config.

    - ``name``: the node config's name; ``None`` for the top-level config.
    - ``labels``: labels every node of the pool carries (the stack's node selector, and the node
      config label with a node config).
    - ``capacity``: resource -> (how many one node offers, what they are).
    - ``refuses_many``: shared resources whose sharing has ``failRequestsGreaterThanOne``.
    - ``per_node``: GPUs per node (``gpus.perNode`` or the node config's).
    """

    name: str | None
    labels: tuple[tuple[str, str], ...]
    capacity: tuple[tuple[str, int, str], ...]
    refuses_many: frozenset[str]
    per_node: int

    def offers(self, resource: str) -> tuple[int, str] | None:
        """How many ``resource`` one node offers, and what they are (0: advertised, but a MIG
        layout leaves none); ``None`` when the pool does not advertise it."""
        for name, count, what in self.capacity:
            if name == resource:
                return count, what
        return None

    def has(self, resource: str) -> bool:
        """Whether one node of the pool has at least one ``resource`` to give a pod."""
        found = self.offers(resource)
        return found is not None and found[0] > 0


@dataclass(frozen=True)
class LintContext:
    """What the rules know. ``source`` names the profile file (``None``: no profile)."""

    source: str | None
    known: frozenset[str]
    pools: tuple[Pool, ...] = ()
    taints: tuple[Taint, ...] = ()
    extended_resource_toleration: bool = False
    driver: str | None = None
    runtime_classes: tuple[str, ...] = ()
    #: DeviceClasses the cluster has without the linted manifests: the profile's DRA driver's
    #: (:func:`~gpustack.profile.derive.dra_device_classes`), or every class NVIDIA's driver can
    #: create when gpustack does not deploy it (another installation may).
    device_classes: tuple[str, ...] = NVIDIA_CLASSES
    #: The profile deploys NVIDIA's DRA driver (``dra.enabled``).
    dra_driver: bool = False
    #: The profile's DRA driver hands out GPUs, and whether ``nvidia.com/gpu`` limits are met
    #: from DRA too (``dra.extendedResourceName``).
    dra_gpus: bool = False
    dra_extended_resource: bool = False
    #: What the linted manifests define (every file of the run); :func:`gpustack.lint.check.lint`
    #: fills it before the rules run.
    defined: Defined = field(default_factory=Defined)

    @property
    def has_profile(self) -> bool:
        return self.source is not None


def generic() -> LintContext:
    """What holds on any cluster with NVIDIA's device plugin defaults."""
    return LintContext(source=None, known=GENERIC_RESOURCES)


def _capacity(view: Profile) -> tuple[tuple[str, int, str], ...]:
    out = []
    for resource in derive.advertised_resources(view):
        found = derive.node_capacity(view, resource)
        if found is not None:
            out.append((resource, *found))
    return tuple(out)


def _refuses_many(view: Profile) -> frozenset[str]:
    shared = derive.sharing(view)
    if shared is None or not shared.fail_requests_greater_than_one:
        return frozenset()
    return frozenset(derive.shared_name(view, r.name) for r in shared.resources)


def from_profile(profile: Profile, source: str) -> LintContext:
    """The context of a validated profile (``source``: its file, as messages name it)."""
    dp = profile.device_plugin
    selector = profile.cluster.node_selector
    pools = []
    for name, view in derive.plugin_configs(profile):
        labels = selector if name is None else (*selector, (dp.node_config_label, name))
        pools.append(
            Pool(
                name=name,
                labels=tuple(labels),
                capacity=_capacity(view) if dp.enabled else (),
                refuses_many=_refuses_many(view) if dp.enabled else frozenset(),
                per_node=view.gpus.per_node,
            )
        )
    # With the plugin off, another plugin advertises what it likes: only well-known names.
    known = frozenset(derive.advertised_anywhere(profile)) if dp.enabled else GENERIC_RESOURCES
    if dp.enabled and derive.mig_resources_unknown(profile):
        known |= {n for n in GENERIC_RESOURCES if n.startswith(derive.MIG_RESOURCE_PREFIX)}
    return LintContext(
        source=source,
        known=known,
        pools=tuple(pools),
        taints=profile.cluster.node_taints,
        extended_resource_toleration=profile.cluster.extended_resource_toleration,
        driver=profile.driver.version,
        runtime_classes=derive.runtime_classes(profile),
        device_classes=derive.dra_device_classes(profile)
        if profile.dra.enabled
        else NVIDIA_CLASSES,
        dra_driver=profile.dra.enabled,
        dra_gpus=derive.dra_allocates_gpus(profile),
        dra_extended_resource=derive.dra_allocates_gpus(profile)
        and profile.dra.extended_resource_name,
    )
