"""Adding a component takes four steps besides its construct module: its registry row, the row's
profile section, its images for the digest policy, and its deploy label. Each test here fails,
naming the step, when one is forgotten: on the real registry, with one "everything on" profile
generated from the rows (so a component no example profile enables is still rendered, checked
against the strict Kubernetes schema and built by ``kubectl kustomize``), and on the
``persistenced`` exercise of issue 18 (:mod:`tests.constructs.persistenced_component`), which
forgets each step in turn."""

from __future__ import annotations

import dataclasses
import pkgutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

import gpustack.constructs
from gpustack.checker import check_paths
from gpustack.constructs import SynthObject, synthesize
from gpustack.profile import components
from gpustack.profile.components import Component
from gpustack.profile.model import Profile
from gpustack.synth.layout import layout_cluster
from tests.k8s_schema import assert_valid
from tests.tooling import require_tool

from . import persistenced_component, steps
from .persistenced_component import COMPONENT as PERSISTENCED
from .persistenced_component import PersistencedProfile, section, with_persistenced

CONSTRUCT_MODULES = steps.construct_modules(
    f"gpustack.constructs.{m.name}" for m in pkgutil.iter_modules(gpustack.constructs.__path__)
)


def test_every_props_class_is_named_by_a_row() -> None:
    assert steps.unregistered_props(components.REGISTRY, CONSTRUCT_MODULES) == []


def test_every_enabled_switch_maps_to_a_row() -> None:
    assert steps.unmapped_sections(components.REGISTRY, Profile) == []


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> tuple[Profile, list[SynthObject]]:
    """The "everything on" profile, validated as ``gpustack validate`` does, and its stack."""
    doc = steps.everything_on(
        components.REGISTRY,
        {"apiVersion": "gpustack.dev/v1alpha1", "kind": "Profile"}
        | {"metadata": {"name": "everything"}},
    )
    path = tmp_path_factory.mktemp("everything") / "everything.yaml"
    path.write_text(yaml.safe_dump(doc))
    result = check_paths([path])
    assert result.ok, "\n".join(map(str, result.issues))
    (checked,) = result.profiles
    return checked.profile, synthesize(checked.profile, cache=None)


def test_everything_on_renders_every_component(
    everything: tuple[Profile, list[SynthObject]],
) -> None:
    profile, objects = everything
    assert [c.name for c in components.enabled(profile)] == list(components.names())
    rendered = {o.component for o in objects}
    assert [n for n in components.names() if n not in rendered] == []
    assert_valid((o.manifest for o in objects), profile.cluster.kubernetes_version)


def test_everything_on_builds_with_kustomize(
    everything: tuple[Profile, list[SynthObject]], tmp_path: Path
) -> None:
    kubectl = require_tool("kubectl")
    profile, objects = everything
    output = layout_cluster(profile.name, objects)
    for f in output.files:
        (tmp_path / f.path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f.path).write_bytes(f.content)
    done = subprocess.run(
        [kubectl, "kustomize", str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert len([d for d in yaml.safe_load_all(done.stdout) if d]) == len(objects)


def test_every_image_is_under_the_digest_policy(
    everything: tuple[Profile, list[SynthObject]],
) -> None:
    profile, objects = everything
    assert steps.undeclared_images(components.REGISTRY, profile, objects) == []


def test_every_gpu_daemonset_has_its_deploy_label(
    everything: tuple[Profile, list[SynthObject]],
) -> None:
    profile, objects = everything
    assert steps.missing_deploy_labels(components.REGISTRY, profile, objects) == []


# -- the persistenced exercise: each forgotten step fails, naming the step --------------------


def _row(**changes: Any) -> Component:
    complete = Component(
        PERSISTENCED,
        0,
        lambda p: section(p).enabled,
        "tests.constructs.persistenced_component:Persistenced",
        "tests.constructs.persistenced_component:PersistencedProps",
        section=PERSISTENCED,
        turn_on={PERSISTENCED: {"enabled": True}},
        images=lambda p: iter([((PERSISTENCED, "digest"), section(p).image_ref())]),
        deploy_label=True,
        gpu_client=True,
    )
    return dataclasses.replace(complete, **changes)


def _registry(row: Component | None) -> tuple[Component, ...]:
    """The registry with ``row`` (if any) between the toolkit and the device plugin."""
    at = components.names().index("device-plugin")
    added = (row,) if row is not None else ()
    return (*components.REGISTRY[:at], *added, *components.REGISTRY[at:])


FORGOTTEN: dict[str, tuple[Component | None, set[str]]] = {
    "nothing": (_row(), set()),
    steps.ROW: (None, {steps.ROW, steps.SECTION}),
    steps.SECTION: (_row(section=None), {steps.SECTION}),
    steps.IMAGES: (_row(images=components.no_images), {steps.IMAGES}),
    steps.DEPLOY: (_row(deploy_label=False, gpu_client=False), {steps.DEPLOY}),
}


@pytest.mark.parametrize(("row", "failing"), FORGOTTEN.values(), ids=FORGOTTEN.keys())
def test_the_persistenced_exercise_fails_at_each_forgotten_step(
    monkeypatch: pytest.MonkeyPatch, row: Component | None, failing: set[str]
) -> None:
    registry = _registry(row)
    monkeypatch.setattr(components, "REGISTRY", registry)
    profile = with_persistenced(Profile.from_dict({"metadata": {"name": "lab"}}))
    objects = synthesize(profile, cache=None)
    problems = [
        *steps.unregistered_props(registry, [*CONSTRUCT_MODULES, persistenced_component]),
        *steps.unmapped_sections(registry, PersistencedProfile),
        *steps.undeclared_images(registry, profile, objects),
        *steps.missing_deploy_labels(registry, profile, objects),
    ]
    assert {p.split(":")[0] for p in problems} == failing, problems
    assert all(PERSISTENCED in p for p in problems), problems
    if row is not None:  # rendered, and in its place
        assert f"{PERSISTENCED}/daemonset-nvidia-persistenced.yaml" in dict.fromkeys(
            layout_cluster("lab", objects).paths()
        )


def test_only_the_registry_and_its_construct_spell_a_component_name() -> None:
    """A component's name is declared once (its row) and used by its own construct module;
    everything else derives it. Names with a hyphen only: ``driver`` or ``examples`` are also
    profile section keys."""
    package = Path(gpustack.constructs.__file__).parents[1]
    sources = {p: p.read_text(encoding="utf-8") for p in sorted(package.rglob("*.py"))}
    found = []
    for c in components.REGISTRY:
        if "-" not in c.name:
            continue
        allowed = {
            Path(components.__file__),
            package.parent / (c.construct.split(":")[0].replace(".", "/") + ".py"),
        }
        found += [
            f"{path.relative_to(package.parent)} spells {c.name!r}"
            for path, text in sources.items()
            if f'"{c.name}"' in text and path not in allowed
        ]
    assert found == []
