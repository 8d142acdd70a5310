"""Where and how every component's pods run: the profile's scheduling and pull settings.

Resolved once from the profile (``Placement.from_profile``) and shared by all component props, so
the DaemonSets and Jobs can never disagree about namespace, node selection or pull secrets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

from gpustack.profile import components
from gpustack.profile.model import EnvVar, Profile, Resources, Toleration

#: Node label prefix of the per-component deploy labels (``nvidia.com/gpu.deploy.<component>``),
#: as the GPU Operator's DaemonSets select on them and NVIDIA's driver manager flips them.
DEPLOY_LABEL_PREFIX: Final = "nvidia.com/gpu.deploy."
#: ``nvidia.com/gpu.deploy.operands=false`` keeps every GPU component off a node.
OPERANDS_LABEL: Final = f"{DEPLOY_LABEL_PREFIX}operands"
#: The value NVIDIA's driver manager gives a ``true`` deploy label while it replaces the driver
#: (``k8s-driver-manager`` ``pausedStr``); it sets ``true`` again when done.
PAUSED: Final = "paused-for-driver-upgrade"
#: The value NVIDIA's MIG manager gives a deploy label (any but ``false``) while it repartitions.
PAUSED_MIG: Final = "paused-for-mig-change"
#: The value NVIDIA's driver manager gives ``nvidia.com/gpu.deploy.driver`` when it finds a driver
#: installed on the host: the driver DaemonSet must leave that node.
PRE_INSTALLED: Final = "pre-installed"
#: The components that have a deploy label, under the GPU Operator's label names (which are
#: gpustack's component names): a view of the registry's ``deploy_label`` rows taken at import
#: (:func:`gpustack.profile.components.deploy_components` reads the registry when called).
DEPLOY_COMPONENTS: Final = components.deploy_components()

#: One node selector requirement: (label, operator, values).
Requirement = tuple[str, str, tuple[str, ...]]


def deploy_label(component: str) -> str:
    """The deploy label of ``component`` (a registry row with ``deploy_label``)."""
    if component not in components.deploy_components():
        raise KeyError(f"component {component!r} has no deploy label")
    return f"{DEPLOY_LABEL_PREFIX}{component}"


def deploy_selection(
    component: str, mode: str, off: tuple[str, ...] = ()
) -> tuple[dict[str, str], list[Requirement]]:
    """The node selector entries and node affinity requirements that place ``component``'s
    pods by deploy labels (``mode``: ``cluster.deployLabels``).

    ``required``: the label must be ``true`` (a nodeSelector entry, as in the GPU Operator), so a
    node runs nothing until someone labels it. ``optional``: an absent label places the pods;
    ``false``, the driver manager's :data:`PAUSED`, the MIG manager's :data:`PAUSED_MIG` or
    one of the component's own ``off`` values (the driver's :data:`PRE_INSTALLED`) keeps them
    off. In both modes
    ``operands=false`` keeps every component off the node.
    """
    label = deploy_label(component)
    operands: Requirement = (OPERANDS_LABEL, "NotIn", ("false",))
    if mode == "required":
        return {label: "true"}, [operands]
    return {}, [(label, "NotIn", ("false", PAUSED, PAUSED_MIG, *off)), operands]


@dataclass(frozen=True)
class Placement:
    """Scheduling settings common to every component, all from the profile's ``cluster`` and
    ``metadata`` (:meth:`from_profile`; the profile model owns the defaults).

    - ``namespace``: where namespaced objects go.
    - ``node_selector``: pod nodeSelector as sorted pairs.
    - ``tolerations``: pod tolerations.
    - ``priority_class_name``: DaemonSet priority (by default the profile's keeps the GPU stack
      from being evicted under node pressure); ``None`` sets none.
    - ``image_pull_secrets``: secret names for private registries.
    - ``labels``: the profile's ``metadata.labels``, put on every object but no pod template
      (never in selectors).
    - ``pod_labels``: the profile's ``metadata.podLabels``, put on every pod template.
    - ``deploy_labels``: ``cluster.deployLabels`` (see :func:`deploy_selection`).
    """

    namespace: str
    node_selector: tuple[tuple[str, str], ...]
    tolerations: tuple[Toleration, ...]
    priority_class_name: str | None
    image_pull_secrets: tuple[str, ...]
    labels: tuple[tuple[str, str], ...]
    deploy_labels: str
    pod_labels: tuple[tuple[str, str], ...]

    @classmethod
    def from_profile(cls, profile: Profile) -> Placement:
        c = profile.cluster
        return cls(
            namespace=c.namespace,
            node_selector=c.node_selector,
            tolerations=c.tolerations,
            priority_class_name=c.priority_class_name or None,
            image_pull_secrets=c.image_pull_secrets,
            labels=profile.metadata.labels,
            deploy_labels=c.deploy_labels,
            pod_labels=profile.metadata.pod_labels,
        )


@dataclass(frozen=True)
class ContainerSettings:
    """The user-tunable parts of a component's main container, from that component's profile
    section (the profile model owns the defaults).

    - ``image``: full image reference.
    - ``image_pull_policy``: the image pull policy.
    - ``env``: extra environment variables; one named like a gpustack variable replaces it in
      place, the others are appended.
    - ``resources``: requests and limits (none unless the profile sets them: the components are
      node daemons whose footprint depends on the driver and GPU count).
    """

    image: str
    image_pull_policy: str
    env: tuple[EnvVar, ...]
    resources: Resources

    @classmethod
    def from_section(cls, section: ContainerSection) -> ContainerSettings:
        """The settings of a profile section (``driver``, ``toolkit``, ``devicePlugin``...)."""
        return cls(
            image=section.image_ref(),
            image_pull_policy=section.image_pull_policy,
            env=section.env,
            resources=section.resources,
        )


class ContainerSection(Protocol):
    """A profile section that configures one component's main container."""

    @property
    def image_pull_policy(self) -> str: ...

    @property
    def env(self) -> tuple[EnvVar, ...]: ...

    @property
    def resources(self) -> Resources: ...

    def image_ref(self) -> str: ...
