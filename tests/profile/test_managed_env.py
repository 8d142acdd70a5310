"""The managed-variable tables (issue #11, item 12) list every variable gpustack's containers
carry, so ``env-not-managed`` refuses each override the constructs would have to refuse."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.constructs import kube
from gpustack.profile import managed_env
from gpustack.profile.model import EnvVar

DIST = Path(__file__).parents[2] / "dist" / "clusters"
#: Component folder -> the profile section whose env goes into its containers.
SECTIONS = {
    "driver": managed_env.DRIVER,
    "container-toolkit": managed_env.TOOLKIT,
    "device-plugin": managed_env.DEVICE_PLUGIN,
}


def env_names(manifest: dict[str, Any]) -> Iterator[str]:
    """The variables of the containers a section's ``env`` joins (the running containers; init
    containers such as the driver manager take their settings from other profile fields)."""
    pod = manifest["spec"]["template"]["spec"]
    for container in pod["containers"]:
        for var in container.get("env") or []:
            yield var["name"]


def synthesized() -> Iterator[tuple[str, str, set[str]]]:
    for path in sorted(DIST.glob("*/*/daemonset-*.yaml")):
        if path.parent.name in SECTIONS:
            manifest = yaml.safe_load(path.read_text())
            yield path.parent.name, str(path.relative_to(DIST)), set(env_names(manifest))


@pytest.mark.parametrize(("component", "path", "names"), list(synthesized()))
def test_every_variable_a_container_carries_is_managed(
    component: str, path: str, names: set[str]
) -> None:
    # the committed profiles set no env of their own: everything here is gpustack's
    assert names <= set(SECTIONS[component]), path


def test_every_component_with_env_is_covered() -> None:
    assert {c for c, _, names in synthesized() if names} == set(SECTIONS)


def test_the_constructs_refuse_an_override_validation_missed() -> None:
    assert [v.name for v in kube.env_list([("A", "1")], [EnvVar("B", "2")])] == ["A", "B"]
    with pytest.raises(ValueError, match="env A is set by gpustack"):
        kube.env_list([("A", "1")], [EnvVar("A", "2")])
    with pytest.raises(ValueError, match="env NODE_NAME is set by gpustack"):
        kube.env_list([], [EnvVar("NODE_NAME", "x")], field_refs={"NODE_NAME": "spec.nodeName"})
