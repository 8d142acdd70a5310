"""Synthesis: one cdk8s App, one Chart per component, objects in component order.

Charts never render names with cdk8s' hash suffix (every object sets ``metadata.name``, and
``disable_resource_name_hashes`` is on as a safety net); each chart is rendered with
``to_json()`` (``app.synth()`` would write files and never delete stale ones; the synth writer
owns the files).
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import cdk8s

from gpustack.constructs.body_text import decoded
from gpustack.constructs.memo import CACHE, Manifests, RenderCache
from gpustack.constructs.release import released
from gpustack.constructs.stamp import STAND_IN, Labels, find_places, stamp
from gpustack.profile import components
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
    """The enabled components in registry order (:mod:`gpustack.profile.components`), each as its
    name, its construct reference and its props. All props are resolved here, so bad input fails
    before cdk8s runs."""
    return [
        (c.name, c.construct, load(c.props).from_profile(profile))
        for c in components.enabled(profile)
    ]


def _render(
    todo: Sequence[tuple[str, str, object]],
) -> list[tuple[str, list[dict[str, Any]]]]:
    """Render each ``(component, construct, props)`` in one cdk8s App, as plain dicts."""
    builders = [(name, load(construct), props) for name, construct, props in todo]
    out = []
    with released():  # the jsii objects are not needed once the charts are dicts
        app = cdk8s.App()
        charts: list[tuple[str, cdk8s.Chart]] = []
        for name, build, props in builders:
            chart = cdk8s.Chart(app, name, disable_resource_name_hashes=True)
            build(chart, id=name, props=props)
            charts.append((name, chart))
        for name, chart in charts:
            out.append((name, [decoded(m) for m in chart.to_json()]))
    return out


class _StandIn(list[dict[str, Any]]):
    """A rendering with the stand-in label (:mod:`gpustack.constructs.stamp`): its manifests,
    where the labels go (``None``: nowhere safe, render for real) and its last stamping, so
    clusters with equal labels share the stamped dicts (the layout serializes each once)."""

    def __init__(self, manifests: list[dict[str, Any]]) -> None:
        super().__init__(manifests)
        self.places = find_places(manifests)
        self.last: tuple[Labels, Manifests] | None = None

    def stamped(self, labels: Labels) -> Manifests | None:
        if self.places is None:
            return None
        if self.last is not None and self.last[0] == labels:
            return self.last[1]
        out = stamp(self, self.places, labels)
        if out is not None:
            self.last = (labels, out)
        return out


def synthesize(profile: Profile, cache: RenderCache | None = CACHE) -> list[SynthObject]:
    """Every Kubernetes object of ``profile``'s GPU stack: by component, in creation order.

    File names and install order within a cluster folder are the synth layout's business
    (:mod:`gpustack.synth.layout` sorts by component, kind, namespace and name).

    Props are resolved (and their errors raised) before any cdk8s object exists. Deterministic:
    the same profile gives equal output. A component whose props this process already rendered
    is taken from ``cache`` (:mod:`gpustack.constructs.memo`); ``cache=None`` renders all.

    With a cache, each component is rendered with a stand-in for the profile's
    ``metadata.labels`` and the labels are stamped on afterwards
    (:mod:`gpustack.constructs.stamp`), so clusters that differ only in their labels share the
    rendering; a component where that is not exact is rendered with the real labels.
    """
    if cache is None:
        parts = _components(profile)
        done = dict(_render(parts))
        return [SynthObject(name, m) for name, _, _ in parts for m in done[name]]
    stand_in = replace(profile, metadata=replace(profile.metadata, labels=STAND_IN))
    parts = _components(stand_in)
    found: dict[str, Manifests | None] = {}
    keys = {}
    todo = []
    for name, construct, props in parts:
        keys[name] = cache.key(name, construct, props)
        found[name] = cache.get(keys[name])
        if found[name] is None:
            todo.append((name, construct, props))
    for name, manifests in _render(todo) if todo else ():
        found[name] = _StandIn(manifests)
        cache.put(keys[name], found[name])  # type: ignore[arg-type]
    labels = profile.metadata.labels
    rendered: dict[str, Manifests] = {}
    unstampable = []
    for name, _, _ in parts:
        got = found[name]
        out = got.stamped(labels) if isinstance(got, _StandIn) else got
        if out is None:
            unstampable.append(name)
        else:
            rendered[name] = out
    if unstampable:
        real = [p for p in _components(profile) if p[0] in unstampable]
        todo = []
        for name, construct, props in real:
            keys[name] = cache.key(name, construct, props)
            hit = cache.get(keys[name])
            if hit is None:
                todo.append((name, construct, props))
            else:
                rendered[name] = hit
        for name, manifests in _render(todo) if todo else ():
            rendered[name] = manifests
            cache.put(keys[name], manifests)
    return [SynthObject(name, m) for name, _, _ in parts for m in rendered[name]]
