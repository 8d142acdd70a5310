"""Where and how every component's pods run: the profile's scheduling and pull settings.

Resolved once from the profile (``Placement.from_profile``) and shared by all component props, so
the DaemonSets and Jobs can never disagree about namespace, node selection or pull secrets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from gpustack.profile.model import EnvVar, Profile, Resources, Toleration


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
    - ``labels``: the profile's ``metadata.labels``, put on every object and pod template (never
      in selectors).
    """

    namespace: str
    node_selector: tuple[tuple[str, str], ...]
    tolerations: tuple[Toleration, ...]
    priority_class_name: str | None
    image_pull_secrets: tuple[str, ...]
    labels: tuple[tuple[str, str], ...]

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
