"""The steps of adding a component, each as a check that names the step it finds forgotten.

A component is a registry row (:mod:`gpustack.profile.components`), a profile section and a
construct module. Each function here takes the registry (and what it needs of the rest) as
arguments, so ``test_component_steps`` runs it on the real registry and on a registry with a dummy
component that forgets one step at a time. Each returns the problems it found, one message per
problem, each starting with the step: an empty list is a complete component.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import typing
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import ModuleType
from typing import Any

from gpustack.constructs.placement import DEPLOY_LABEL_PREFIX, OPERANDS_LABEL
from gpustack.constructs.stack import SynthObject, load
from gpustack.fields.declare import camel
from gpustack.profile.components import Component
from gpustack.profile.model import Profile

ROW = "registry row"
SECTION = "section mapping"
IMAGES = "image policy"
DEPLOY = "deploy label"

#: Workload kinds whose pod templates run images.
WORKLOADS = ("DaemonSet", "Deployment", "StatefulSet", "Job", "Pod", "ReplicaSet")


def _props_classes(module: ModuleType) -> Iterator[type]:
    for name, value in vars(module).items():
        if (
            name.endswith("Props")
            and inspect.isclass(value)
            and value.__module__ == module.__name__
            and hasattr(value, "from_profile")
        ):
            yield value


def _field_types(cls: type) -> str:
    """The annotations of a props dataclass's fields, as written (``from __future__``)."""
    return " ".join(str(f.type) for f in dataclasses.fields(cls))


def unregistered_props(registry: Sequence[Component], modules: Iterable[ModuleType]) -> list[str]:
    """Props classes no row names: their component would be a silent no-op. A props class
    that is a part of a registered one (named in its fields, as the driver's props name the
    driver manager's) belongs to that component."""
    found = [(m, cls) for m in modules for cls in _props_classes(m)]
    covered = {load(c.props) for c in registry}
    grew = True
    while grew:  # the parts of registered props, and their parts
        text = " ".join(_field_types(cls) for cls in covered)
        parts = {cls for _, cls in found if cls.__name__ in text} - covered
        covered |= parts
        grew = bool(parts)
    return [
        f"{ROW}: {m.__name__}:{cls.__name__} is named by no row of"
        " gpustack.profile.components.REGISTRY, so a profile that turns its component on"
        " synthesizes nothing (add a Component with props= naming it)"
        for m, cls in found
        if cls not in covered
    ]


def _sections_with_switch(profile_type: type) -> Iterator[str]:
    hints = typing.get_type_hints(profile_type)
    for f in dataclasses.fields(profile_type):
        section = hints[f.name]
        if dataclasses.is_dataclass(section) and "enabled" in {
            g.name for g in dataclasses.fields(section)
        }:
            yield f.name


def unmapped_sections(registry: Sequence[Component], profile_type: type = Profile) -> list[str]:
    """Profile sections with an ``enabled`` switch that no row reads, and rows whose section
    is not one of the profile's."""
    mapped = {c.section for c in registry}
    problems = [
        f"{SECTION}: profile section {camel(name)} has an enabled switch, but no row of"
        f" gpustack.profile.components.REGISTRY reads it (set section={name!r} on its row)"
        for name in _sections_with_switch(profile_type)
        if name not in mapped
    ]
    known = {f.name for f in dataclasses.fields(profile_type)}
    problems += [
        f"{SECTION}: row {c.name} reads section {c.section!r}, which the profile has not"
        for c in registry
        if c.section is not None and c.section not in known
    ]
    return problems


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def everything_on(registry: Sequence[Component], base: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with every row's ``turn_on`` fragment merged in: a profile that turns every
    registered component on."""
    doc = dict(base)
    for c in registry:
        doc = merge(doc, c.turn_on)
    return doc


def _pod_specs(manifest: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    kind = manifest.get("kind")
    if kind == "Pod":
        yield manifest["spec"]
    elif kind in WORKLOADS:
        yield manifest["spec"]["template"]["spec"]


def _images(manifest: Mapping[str, Any]) -> set[str]:
    return {
        c["image"]
        for spec in _pod_specs(manifest)
        for key in ("initContainers", "containers")
        for c in spec.get(key, ())
    }


def undeclared_images(
    registry: Sequence[Component], profile: Profile, objects: Iterable[SynthObject]
) -> list[str]:
    """Images the stack runs that no enabled row declares (``cluster.requireImageDigests``
    would pass them unpinned), and images a row declares that its component never runs.
    A component may run another's image (the GPU clients wait for the toolkit in its image):
    the policy checks it once, under the row that declares it."""
    ran: dict[str, set[str]] = {}
    for o in objects:
        ran.setdefault(o.component, set()).update(_images(o.manifest))
    on = [c for c in registry if c.enabled(profile)]
    declared = {c.name: {ref for _, ref in c.images(profile)} for c in on}
    policy = set().union(*declared.values())
    problems = [
        f"{IMAGES}: {component} runs image {image}, which no row's images declare, so"
        " cluster.requireImageDigests passes it unpinned (add it, with the profile field that"
        " pins it, to its row's images=)"
        for component, images in ran.items()
        for image in sorted(images - policy)
    ]
    problems += [
        f"{IMAGES}: {c.name}'s row declares image {image}, which it never runs"
        for c in on
        for image in sorted(declared[c.name] - ran.get(c.name, set()))
    ]
    return problems


def _selects(spec: Mapping[str, Any], label: str) -> bool:
    if label in spec.get("nodeSelector", {}):
        return True
    affinity = spec.get("affinity", {}).get("nodeAffinity", {})
    terms = affinity.get("requiredDuringSchedulingIgnoredDuringExecution", {})
    return any(
        e.get("key") == label
        for t in terms.get("nodeSelectorTerms", [])
        for e in t.get("matchExpressions", [])
    )


def missing_deploy_labels(
    registry: Sequence[Component], profile: Profile, objects: Iterable[SynthObject]
) -> list[str]:
    """DaemonSets on the GPU nodes (their pods select ``cluster.nodeSelector``) whose component
    has no deploy label, or whose pods do not select on it and on the operands label."""
    rows = {c.name: c for c in registry}
    selector = dict(profile.cluster.node_selector)
    problems = []
    for o in objects:
        if o.kind != "DaemonSet" or not selector:
            continue
        spec = o.manifest["spec"]["template"]["spec"]
        if not selector.items() <= spec.get("nodeSelector", {}).items():
            continue  # not a GPU node daemon (NFD's worker runs everywhere)
        row = rows.get(o.component)
        if row is None or not row.deploy_label:
            problems.append(
                f"{DEPLOY}: {o.component} runs DaemonSet {o.name} on the GPU nodes, but its"
                " row has no deploy_label, so nvidia.com/gpu.deploy.operands=false does not"
                " clear it from a node (set deploy_label=True)"
            )
            continue
        for label in (OPERANDS_LABEL, f"{DEPLOY_LABEL_PREFIX}{o.component}"):
            if not _selects(spec, label):
                problems.append(
                    f"{DEPLOY}: DaemonSet {o.name} of {o.component} does not select on {label}"
                )
    return problems


def construct_modules(names: Iterable[str]) -> list[ModuleType]:
    return [importlib.import_module(n) for n in names]
