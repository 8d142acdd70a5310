"""Synthesis: one cdk8s App, one Chart per component, objects in component order.

Charts never render names with cdk8s' hash suffix (every object sets ``metadata.name``, and
``disable_resource_name_hashes`` is on as a safety net); each chart is rendered with
``to_json()`` (``app.synth()`` would write files and never delete stale ones; the synth writer
owns the files).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import cdk8s

from gpustack import components
from gpustack.constructs.memo import CACHE, Manifests, RenderCache
from gpustack.constructs.release import released
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


def _components(profile: Profile) -> list[tuple[str, str, object]]:
    """The enabled components in registry order (:mod:`gpustack.components`), each as its name,
    its construct reference and its props. All props are resolved here, so bad input fails
    before cdk8s runs."""
    return [
        (c.name, c.construct, load(c.props).from_profile(profile))
        for c in components.enabled(profile)
    ]


def synthesize(profile: Profile, cache: RenderCache | None = CACHE) -> list[SynthObject]:
    """Every Kubernetes object of ``profile``'s GPU stack: by component, in creation order.

    File names and install order within a cluster folder are the synth layout's business
    (:mod:`gpustack.synth.layout` sorts by component, kind, namespace and name).

    Props are resolved (and their errors raised) before any cdk8s object exists. Deterministic:
    the same profile gives equal output. A component whose props this process already rendered
    is taken from ``cache`` (:mod:`gpustack.constructs.memo`); ``cache=None`` renders all.
    """
    parts = _components(profile)
    rendered: dict[str, Manifests] = {}
    todo: list[tuple[str, str, object, tuple[str, str, bytes] | None]] = []
    for name, construct, props in parts:
        key = cache.key(name, construct, props) if cache is not None else None
        found = cache.get(key) if cache is not None else None
        if found is not None:
            rendered[name] = found
        else:
            todo.append((name, construct, props, key))
    if todo:
        builders = [(name, load(construct), props, key) for name, construct, props, key in todo]
        with released():  # the jsii objects are not needed once the charts are dicts
            app = cdk8s.App()
            charts: list[tuple[str, tuple[str, str, bytes] | None, cdk8s.Chart]] = []
            for name, build, props, key in builders:
                chart = cdk8s.Chart(app, name, disable_resource_name_hashes=True)
                build(chart, id=name, props=props)
                charts.append((name, key, chart))
            for name, key, chart in charts:
                manifests = list(chart.to_json())
                rendered[name] = manifests
                if cache is not None:
                    cache.put(key, manifests)
    return [SynthObject(name, manifest) for name, _, _ in parts for manifest in rendered[name]]
