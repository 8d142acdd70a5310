"""A cluster rendered in this run carries each object's head (apiVersion, kind, name,
namespace) from rendering, so the GitOps objects do not parse its YAML back
(gpustack/synth/layout.py ``Head``); a cluster read from disk has none and is parsed. Both
must give the same GitOps output."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from gpustack.checker import check_paths
from gpustack.gitops.objects import health_checks
from gpustack.synth.layout import KUSTOMIZATION_FILE, ClusterOutput, Head
from gpustack.synth.worker import synthesize_one

REPO = Path(__file__).resolve().parents[2]
PROFILES = sorted((REPO / "profiles").glob("*.yaml"))


@pytest.fixture(scope="module")
def outputs() -> list[ClusterOutput]:
    result = check_paths(PROFILES)
    assert result.ok
    return [synthesize_one(p.path, p.profile) for p in result.profiles]


def test_every_rendered_object_carries_its_head(outputs: list[ClusterOutput]) -> None:
    for output in outputs:
        for f in output.files:
            if f.path == KUSTOMIZATION_FILE:
                assert f.head is None
                continue
            assert f.head == Head.of(yaml.safe_load(f.content)), f"{output.name}/{f.path}"


def test_heads_are_not_part_of_a_files_equality(outputs: list[ClusterOutput]) -> None:
    f = outputs[0].files[0]
    assert replace(f, head=None) == f


def test_gitops_objects_are_the_same_with_heads_or_parsed(outputs: list[ClusterOutput]) -> None:
    checks = 0
    for output in outputs:
        from_disk = ClusterOutput(output.name, tuple(replace(f, head=None) for f in output.files))
        assert health_checks(output) == health_checks(from_disk)
        checks += len(health_checks(output))
    assert checks > 0, "some example has a DaemonSet that rolls out by itself"
