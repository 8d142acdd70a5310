"""Synthesis: one cdk8s App, one Chart per component, objects in component order.

Charts never render names with cdk8s' hash suffix (every object sets ``metadata.name``, and
``disable_resource_name_hashes`` is on as a safety net); each chart is rendered with
``to_json()`` (``app.synth()`` would write files and never delete stale ones; the synth writer
owns the files).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import cdk8s
from constructs import Construct

from gpustack import components
from gpustack.profile.model import Profile


@dataclass(frozen=True)
class SynthObject:
    """One synthesized Kubernetes object.

    ``component`` is its output folder (a registered component's name); ``manifest`` is the object
    exactly as cdk8s rendered it (keys in cdk8s order: apiVersion, kind, metadata, then sorted).
    """

    component: str
    manifest: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.manifest["kind"])

    @property
    def name(self) -> str:
        return str(self.manifest["metadata"]["name"])


def load(ref: str) -> Any:
    """The object a ``"module:attribute"`` reference of the registry names."""
    module, sep, attr = ref.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"{ref!r} is not a 'module:attribute' reference")
    return getattr(importlib.import_module(module), attr)


def _components(profile: Profile) -> list[tuple[str, Callable[[Construct], object]]]:
    """The enabled components in registry order (:mod:`gpustack.components`), each as a
    function that adds its construct to a chart. All props are resolved here, so bad input fails
    before cdk8s runs."""
    parts: list[tuple[str, Callable[[Construct], object]]] = []
    for component in components.enabled(profile):
        props = load(component.props).from_profile(profile)
        construct = load(component.construct)
        parts.append((component.name, partial(construct, id=component.name, props=props)))
    return parts


def synthesize(profile: Profile) -> list[SynthObject]:
    """Every Kubernetes object of ``profile``'s GPU stack: by component, in creation order.

    File names and install order within a cluster folder are the synth layout's business
    (:mod:`gpustack.synth.layout` sorts by component, kind, namespace and name).

    Props are resolved (and their errors raised) before any cdk8s object exists. Deterministic:
    the same profile gives equal output.
    """
    components = _components(profile)
    app = cdk8s.App()
    charts: list[tuple[str, cdk8s.Chart]] = []
    for component, build in components:
        chart = cdk8s.Chart(app, component, disable_resource_name_hashes=True)
        build(chart)
        charts.append((component, chart))
    return [
        SynthObject(component, manifest)
        for component, chart in charts
        for manifest in chart.to_json()
    ]
