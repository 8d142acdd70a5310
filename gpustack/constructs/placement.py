"""Where and how every component's pods run: the profile's scheduling and pull settings.

Resolved once from the profile (``Placement.from_profile``) and shared by all component props, so
the DaemonSets and Jobs can never disagree about namespace, node selection or pull secrets.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpustack.profile.model import (
    DEFAULT_NODE_SELECTOR,
    DEFAULT_TOLERATIONS,
    EnvVar,
    Profile,
    Resources,
    Toleration,
)


@dataclass(frozen=True)
class Placement:
    """Scheduling settings common to every component.

    - ``namespace``: where namespaced objects go. Default ``gpustack-system``.
    - ``node_selector``: pod nodeSelector as sorted pairs. Default ``nvidia.com/gpu.present=true``.
    - ``tolerations``: pod tolerations. Default: tolerate the ``nvidia.com/gpu:NoSchedule`` taint.
    - ``priority_class_name``: DaemonSet priority. Default ``system-node-critical``, so the GPU
      stack is not evicted under node pressure; ``None`` sets none.
    - ``image_pull_secrets``: secret names for private registries. Default none.
    - ``labels``: the profile's ``metadata.labels``, put on every object and pod template (never
      in selectors). Default none.
    """

    namespace: str = "gpustack-system"
    node_selector: tuple[tuple[str, str], ...] = DEFAULT_NODE_SELECTOR
    tolerations: tuple[Toleration, ...] = DEFAULT_TOLERATIONS
    priority_class_name: str | None = "system-node-critical"
    image_pull_secrets: tuple[str, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()

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
    """The user-tunable parts of a component's main container.

    - ``image``: full image reference. Required.
    - ``image_pull_policy``: Default ``IfNotPresent`` (pinned tags never move).
    - ``env``: extra environment variables; one named like a gpustack variable replaces it in
      place, the others are appended.
      Default none.
    - ``resources``: requests and limits. Default none (the components are node daemons whose
      footprint depends on the driver and GPU count).
    """

    image: str
    image_pull_policy: str = "IfNotPresent"
    env: tuple[EnvVar, ...] = ()
    resources: Resources = Resources()
