"""Names, labels and annotations shared by every component.

GitOps tools diff and prune by name, and selectors are immutable once applied, so this module is the
one place that decides them: selectors use only ``app.kubernetes.io/name`` and ``component`` (never
``version``, which changes on every upgrade), and every object carries its Argo CD sync wave.

``app.kubernetes.io/version`` goes only where the version lives: on the workloads that run it
(DaemonSets, Jobs) and their pod templates, whose image changes with it anyway. A version bump
then changes the objects it really changes, and nothing else: no Namespace, ServiceAccount,
ConfigMap or RuntimeClass is rewritten just to carry a new label value.

Pure Python: no cdk8s here, so the rules can be tested without Node.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final, Protocol

from gpustack.kube.labels import (
    COMPONENT_LABEL,
    MANAGED_BY_LABEL,
    NAME_LABEL,
    PART_OF,
    PART_OF_LABEL,
    VERSION_LABEL,
)
from gpustack.profile import components

#: Registered component names in order, and their sync waves: views of
#: :data:`gpustack.profile.components.REGISTRY` taken at import, for callers that want plain values.
#: The annotations themselves are looked up in the registry when an object is built.
COMPONENTS: Final = components.names()
SYNC_WAVES: Final = {c.name: str(c.sync_wave) for c in components.REGISTRY}

MANAGED_BY: Final = "gpustack"
SYNC_WAVE_ANNOTATION: Final = "argocd.argoproj.io/sync-wave"

_LABEL_VALUE_MAX: Final = 63
_BAD_LABEL_CHARS: Final = re.compile(r"[^A-Za-z0-9._-]+")


def label_value(text: str) -> str:
    """Make ``text`` a valid label value (``[A-Za-z0-9._-]``, ≤63, alphanumeric at both ends).

    Versions such as ``575.57.08`` pass unchanged; a digest or a tag with ``+`` is squashed
    rather than rejected, because the label is informational only.
    """
    value = _BAD_LABEL_CHARS.sub("-", text)[:_LABEL_VALUE_MAX]
    return value.strip("-_.")


def selector_labels(name: str, component: str) -> dict[str, str]:
    """The immutable identity of a workload's pods: name and component, nothing that changes."""
    return {NAME_LABEL: name, COMPONENT_LABEL: component}


def object_labels(name: str, component: str, version: str = "") -> dict[str, str]:
    """Kubernetes' recommended labels; the version label only when ``version`` is given (pass
    it for workloads and their pod templates only)."""
    labels = {
        NAME_LABEL: name,
        COMPONENT_LABEL: component,
        PART_OF_LABEL: PART_OF,
        MANAGED_BY_LABEL: MANAGED_BY,
    }
    version_value = label_value(version)
    if version_value:
        labels[VERSION_LABEL] = version_value
    return labels


def wave_annotations(component: str) -> dict[str, str]:
    """Argo CD sync-wave annotation (a string, as Argo CD requires) for a component's objects.

    Raises :class:`KeyError` for a component that is not registered."""
    return {SYNC_WAVE_ANNOTATION: components.sync_wave(component)}


class Labelled(Protocol):
    """Where the profile's labels come from (a component's placement): ``metadata.labels`` for
    every object, ``metadata.podLabels`` for pod templates."""

    @property
    def labels(self) -> tuple[tuple[str, str], ...]: ...

    @property
    def pod_labels(self) -> tuple[tuple[str, str], ...]: ...


class Identity:
    """The label set of one application inside a component (e.g. ``nvidia-driver``/``driver``).

    Every object the application owns gets :meth:`labels` (with the profile's
    ``metadata.labels`` as ``extra``) and :meth:`annotations`; the workloads that run the
    version (a DaemonSet, a Job) get :meth:`workload_labels`, which add the version, and their
    pod templates :meth:`pod_labels`. Its pods are selected by :meth:`selector` only.

    A pod template carries the profile's ``metadata.podLabels`` (``pod_extra``), never its
    ``metadata.labels``: every byte of a template is part of what the workload controller
    compares, so a label there recreates every pod when it changes (the toolkit's restart
    restarts the node's container runtime, an example Job's template cannot change at all),
    while a label on the object itself changes nothing on any node.
    """

    def __init__(
        self,
        name: str,
        component: str,
        version: str,
        extra: Iterable[tuple[str, str]] = (),
        pod_extra: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.name = name
        self.component = component
        self.version = version
        self.extra = tuple(extra)
        self.pod_extra = tuple(pod_extra)

    @classmethod
    def placed(cls, name: str, component: str, version: str, placement: Labelled) -> Identity:
        """The identity of an application placed by ``placement``, with its profile labels."""
        return cls(name, component, version, placement.labels, placement.pod_labels)

    def labels(self) -> dict[str, str]:
        """The profile's ``metadata.labels`` plus the recommended labels (which win on clash),
        without the version: for objects that do not run it."""
        return {**dict(self.extra), **object_labels(self.name, self.component)}

    def workload_labels(self) -> dict[str, str]:
        """:meth:`labels` plus ``app.kubernetes.io/version``: for the workload that runs the
        version, and its pod template."""
        return {**dict(self.extra), **object_labels(self.name, self.component, self.version)}

    def pod_labels(self, versioned: bool = True) -> dict[str, str]:
        """The labels of the application's pod templates: ``metadata.podLabels`` plus the
        recommended labels, with the version unless ``versioned`` is false (they win on clash);
        no ``metadata.labels``."""
        version = self.version if versioned else ""
        return {**dict(self.pod_extra), **object_labels(self.name, self.component, version)}

    def selector(self) -> dict[str, str]:
        return selector_labels(self.name, self.component)

    def annotations(self) -> dict[str, str]:
        return wave_annotations(self.component)
