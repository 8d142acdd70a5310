"""``lint`` and ``validate`` agree on what fits a node, MIG layouts included.

For every example profile (and the lint cases' profile), every resource it advertises anywhere
and a range of counts, the same request is made twice: as an example job in the profile
(``validate``'s rule ``workload-fits-node``) and as a Job linted against the profile (``lint``'s
rule ``gpu-fits-node``). Either both refuse it or neither does. Both ask
:func:`gpustack.profile.derive.node_capacity`; with ``migStrategy: mixed`` and a layout, every
GPU is split (the MIG manager's config says ``devices: all``), so a node offers 0 whole GPUs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.lint.check import lint
from gpustack.lint.context import from_profile
from gpustack.profile import derive
from gpustack.profile.loader import ProfileLoader, profiles_root
from gpustack.profile.model import Profile
from gpustack.profile.rules import rule_findings

REPO = Path(__file__).resolve().parents[2]
PROFILES = [*sorted((REPO / "profiles").glob("*.yaml")), REPO / "tests" / "lint" / "profile.yaml"]
IMAGE = "docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"


def _job(resource: str, count: int) -> dict[str, Any]:
    container = {
        "name": "main",
        "image": IMAGE,
        "resources": {"limits": {resource: count}, "requests": {resource: count}},
    }
    pod = {"restartPolicy": "Never", "containers": [container]}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "probe"},
        "spec": {"template": {"spec": pod}},
    }


def _cases(path: Path) -> list[tuple[str, int]]:
    data = ProfileLoader().load(path, str(path), profiles_root(path)).data
    profile = Profile.from_dict(data)
    if not profile.device_plugin.enabled:
        return []
    most = max(v.gpus.per_node for _, v in derive.plugin_configs(profile))
    counts = sorted({1, 2, most, most + 1, 8, 9})
    return [(r, n) for r in derive.advertised_anywhere(profile) for n in counts]


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_lint_and_validate_agree_on_what_fits_a_node(path: Path, tmp_path: Path) -> None:
    data = ProfileLoader().load(path, str(path), profiles_root(path)).data
    context = from_profile(Profile.from_dict(data), str(path))
    cases = _cases(path)
    if not cases:
        pytest.skip(f"{path.name}: another device plugin, capacity unknown to both")
    disagree = []
    refused = 0
    for resource, count in cases:
        example = {"name": "probe", "image": IMAGE, "resourceName": resource, "gpus": count}
        with_example = {**data, "workloads": {"examples": [example]}}
        rules = {f.rule for f in rule_findings(Profile.from_dict(with_example))}
        manifest = tmp_path / "job.yaml"
        manifest.write_text(yaml.safe_dump(_job(resource, count)))
        linted = {i.rule for i in lint([str(manifest)], context).issues}
        by_validate = "workload-fits-node" in rules
        by_lint = "gpu-fits-node" in linted
        refused += by_validate
        if by_validate != by_lint:
            disagree.append((resource, count, f"validate {by_validate}, lint {by_lint}"))
    assert disagree == []
    assert refused, "no request was too large: the test proves nothing"


def test_mixed_mig_offers_no_whole_gpu(tmp_path: Path) -> None:
    """The case the issue found: 8 x nvidia.com/gpu on a100-mig-mixed (8 GPUs, each split)."""
    path = REPO / "profiles" / "a100-mig-mixed.yaml"
    data = ProfileLoader().load(path, str(path), profiles_root(path)).data
    profile = Profile.from_dict(data)
    assert derive.node_capacity(profile, "nvidia.com/gpu") == (
        0,
        "whole GPUs: the MIG layout splits every GPU",
    )
    assert derive.node_capacity(profile, "nvidia.com/mig-1g.10gb") == (16, "MIG devices")
    manifest = tmp_path / "job.yaml"
    manifest.write_text(yaml.safe_dump(_job("nvidia.com/gpu", 8)))
    issues = [i for i in lint([str(manifest)], from_profile(profile, str(path))).issues]
    fits = [i for i in issues if i.rule == "gpu-fits-node"]
    assert len(fits) == 1
    assert "offers 0 whole GPUs" in fits[0].message
    assert fits[0].hint is not None and "nvidia.com/mig-3g.40gb" in fits[0].hint
