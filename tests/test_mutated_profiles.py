"""Mutated profiles: validation never crashes, and what it accepts synthesizes into valid objects.

Each case takes a valid profile (profiles/ and the valid test cases) and changes one or two
fields to a value from a pool of plausible and implausible ones. Validation must answer with
findings (never an exception); a profile it accepts must synthesize, and every object must pass
the strict Kubernetes schema. Seeded, so a failure names a reproducible case.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.checker import check_paths
from gpustack.scan import discover
from tests.k8s_schema import assert_valid
from tests.mutation import paths, set_field

REPO = Path(__file__).resolve().parents[1]
SEED = 20261203
CASES = 600

VALUES: list[Any] = [
    None, 0, 1, -1, 2, 7, 8, 1000, 1.5, True, False, "", "x", "none", "mixed", "single",
    "nvidia", "gpustack", "simulated", "cdi-cri", "cdi-annotations", "envvar", "volume-mounts",
    "nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb", "1.33", "1.28", "2.0",
    "A100-SXM4-80GB", "T4", "B200-SXM-180GB", "H100-SXM5-80GB", "open", "proprietary", "auto",
    "535.54.03", "580.105.08", "570.133.20", [], {}, ["a"], {"a": 1}, "k3s", "crio", "signal",
    {"1g.10gb": 7}, {"3g.40gb": 2}, {"7g.80gb": 1}, "ubuntu22.04", "sles15", "rhel9.4",
    {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}},
    {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 3}]}},
    [{"name": "pool", "sharing": {}}], [{"name": "pool", "migStrategy": "mixed"}],
    {"enabled": True}, {"enabled": True, "useHostMofed": True},
]  # fmt: skip

#: Fields worth aiming at (set, whatever was there); other mutations hit any existing node.
FIELDS = [
    "cluster.runtime.name", "cluster.runtime.distribution", "cluster.runtime.version",
    "cluster.runtime.restartMode", "cluster.kubeletRootDir", "cluster.namespace",
    "cluster.kubernetesVersion", "driver.enabled", "driver.version", "driver.kernelModuleType",
    "driver.osTag", "driver.repoConfigMap", "driver.rdma", "driver.usePrecompiled",
    "toolkit.enabled", "toolkit.cdi.enabled", "devicePlugin.enabled", "devicePlugin.implementation",
    "devicePlugin.backend", "devicePlugin.migStrategy", "devicePlugin.deviceListStrategy",
    "devicePlugin.sharing", "devicePlugin.nodeConfigs", "devicePlugin.passDeviceSpecs",
    "devicePlugin.resourceName", "gpus.product", "gpus.perNode", "gpus.mig", "gpus.architecture",
]  # fmt: skip


def _mutate(doc: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    for _ in range(1 if rng.random() < 0.7 else 2):
        if rng.random() < 0.6:
            set_field(doc, rng.choice(FIELDS), copy.deepcopy(rng.choice(VALUES)))
            continue
        path = rng.choice(list(paths(doc)))
        parent: Any = doc
        for key in path[:-1]:
            parent = parent[key]
        if rng.random() < 0.5:
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(VALUES))
    return doc


def _cases() -> list[tuple[str, str]]:
    sources = discover([REPO / "profiles", REPO / "tests" / "profile" / "cases" / "valid"])
    docs = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sources]
    docs = [d for d in docs if "extends" not in d]  # bases resolve relative to their folder
    rng = random.Random(SEED)
    cases = []
    for i in range(CASES):
        doc = _mutate(rng.choice(docs), rng)
        if isinstance(doc.get("metadata"), dict):
            doc["metadata"]["name"] = f"m{i}"
        cases.append((f"m{i}", yaml.safe_dump(doc, sort_keys=False)))
    return cases


def test_mutated_profiles(tmp_path: Path) -> None:
    from gpustack.constructs import synthesize  # starts Node: only here

    accepted = 0
    for name, text in _cases():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        result = check_paths([path])  # must not raise
        if not result.ok:
            assert result.issues, f"{name}: invalid without a finding\n{text}"
            continue
        accepted += 1
        profile = result.profiles[0].profile
        try:
            objects = synthesize(profile)
            assert_valid([o.manifest for o in objects], profile.cluster.kubernetes_version)
        except Exception as exc:  # report the case, not just the exception
            pytest.fail(f"{name}: accepted by validate, but synthesis failed: {exc}\n{text}")
    # the pool must keep producing both kinds, or this test checks little
    assert 40 <= accepted <= CASES - 200, accepted
