"""``gpustack lint`` on mutated and random manifests: findings, never a traceback (issue #21).

A linter reads what users wrote, wrong types included: ``tolerations: NoSchedule``,
``resources: {limits: [1]}``, a label key that YAML reads as a number. Each case is a valid
manifest of the lint cases (and the public examples) with one or two values replaced by one from
a pool of plausible and implausible values, or removed; plus pod specs built at random by
hypothesis. Every case is linted as ``gpustack lint`` does (parse, pod templates, every rule,
every report format), with and without a profile; any exception fails with the case that raised
it. Seeded and derandomized, so a failure names a reproducible case; the counts keep the suite
to a few seconds in CI (``GPUSTACK_FUZZ_CASES`` runs more).
"""

from __future__ import annotations

import copy
import os
import random
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpustack.checker import check_paths
from gpustack.lint.check import lint
from gpustack.lint.context import LintContext, from_profile, generic
from gpustack.report import FORMATS
from gpustack.report import render_lint as render
from tests.mutation import paths, set_field

HERE = Path(__file__).parent
SEED = 20261204
CASES = int(os.environ.get("GPUSTACK_FUZZ_CASES", "0")) or 1500

VALUES: list[Any] = [
    None, 0, 1, -1, 8, 1.5, 1e300, True, False, "", "x", "1e0", "1000m", "0.5", "Always",
    "Never", "Memory", "/dev/shm", "NoSchedule", "Exists", "Equal", "In", "NotIn",
    "DoesNotExist", "nvidia.com/gpu", "nvidia.com/gpus", "nvidia.com/mig-1g.10gb",
    "nvcr.io/nvidia/pytorch:24.05-py3", "nvidia/cuda:99.1-base", "cuda12.4", "torchrun",
    [], {}, ["a"], [1], [None], [[1]], [{"a": 1}], {"a": 1}, {"a": [1]}, {"a": {"b": 1}},
    {"nvidia.com/gpu": [1]}, {"nvidia.com/gpu": {"a": 1}}, {"nvidia.com/gpu": True},
    {"key": [1], "operator": {}, "values": 3}, [{"key": [1], "operator": "In", "values": 3}],
    [{"matchExpressions": 3}], [{"matchExpressions": [{"key": {}, "values": [[1]]}]}],
    [{"name": [1], "mountPath": {}}], [{"name": {}, "emptyDir": [1]}], "x" * 300,
]  # fmt: skip

#: Fields the rules read, aimed at (set, whatever was there) relative to a pod spec or its
#: first container; other mutations hit any existing node.
POD_FIELDS = [
    "containers", "initContainers", "volumes", "tolerations", "nodeSelector", "affinity",
    "affinity.nodeAffinity", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
    "Execution", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
    "nodeSelectorTerms", "runtimeClassName", "hostIPC",
]  # fmt: skip
CONTAINER_FIELDS = [
    "name", "image", "command", "args", "env", "volumeMounts", "resources", "resources.limits",
    "resources.requests", "restartPolicy",
]  # fmt: skip
TOP_FIELDS = ["kind", "apiVersion", "metadata", "metadata.annotations", "metadata.name", "spec",
              "items"]  # fmt: skip


@cache
def seeds() -> list[dict[str, Any]]:
    """Every object of the lint cases and the public examples."""
    files = sorted(HERE.glob("cases/*/*.yaml")) + sorted(HERE.glob("public/*.yaml"))
    out = []
    for file in files:
        out += [d for d in yaml.safe_load_all(file.read_text()) if isinstance(d, dict)]
    assert len(out) > 20
    return out


@cache
def contexts() -> tuple[LintContext, ...]:
    result = check_paths([HERE / "profile.yaml"])
    assert result.ok
    return (generic(), from_profile(result.profiles[0].profile, "profile.yaml"))


def _pod_specs(doc: Any) -> Iterator[dict[str, Any]]:
    """Every mapping that holds ``containers`` (the pod specs, wherever the kind keeps them)."""
    if isinstance(doc, dict):
        if isinstance(doc.get("containers"), list):
            yield doc
        for value in doc.values():
            yield from _pod_specs(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from _pod_specs(value)


def mutate(doc: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    for _ in range(1 if rng.random() < 0.6 else 2):
        value = copy.deepcopy(rng.choice(VALUES))
        roll = rng.random()
        specs = list(_pod_specs(doc))
        if roll < 0.3 and specs:
            set_field(rng.choice(specs), rng.choice(POD_FIELDS), value)
        elif roll < 0.6 and specs:
            spec = rng.choice(specs)
            section = rng.choice(["containers", "initContainers"])
            items = spec.get(section)
            if not isinstance(items, list) or not items or not isinstance(items[0], dict):
                spec[section] = items = [{"name": "c"}]
            set_field(items[0], rng.choice(CONTAINER_FIELDS), value)
        elif roll < 0.7:
            set_field(doc, rng.choice(TOP_FIELDS), value)
        else:
            found = list(paths(doc))
            if not found:
                continue
            *parents, last = rng.choice(found)
            parent: Any = doc
            for key in parents:
                parent = parent[key]
            if rng.random() < 0.2 and isinstance(parent, dict):
                del parent[last]
            else:
                parent[last] = value
    return doc


def lint_everything(docs: list[Any]) -> None:
    """Lint ``docs`` as ``gpustack lint -`` does, in every context and format."""
    text = yaml.safe_dump_all(docs, sort_keys=False)
    for ctx in contexts():
        result = lint(["-"], ctx, stdin=text)
        for fmt in FORMATS:
            render(result, fmt)


def cases() -> Iterator[tuple[int, dict[str, Any]]]:
    rng = random.Random(SEED)
    pool = seeds()
    for i in range(CASES):
        yield i, mutate(rng.choice(pool), rng)


def test_mutated_manifests_never_raise() -> None:
    for i, doc in cases():
        try:
            lint_everything([doc])
        except Exception as exc:  # noqa: BLE001 - reported with the case that raised it
            raise AssertionError(
                f"case {i} (seed {SEED}) raised {type(exc).__name__}: {exc}\n"
                + yaml.safe_dump(doc, sort_keys=False)[:3000]
            ) from exc


# --- random pod specs ---------------------------------------------------------------------------

words = st.sampled_from([s for s in VALUES if isinstance(s, str)]) | st.text(max_size=6)
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 70_000), st.floats(allow_nan=False), words
)
keys = st.one_of(words, st.sampled_from(["nvidia.com/gpu", "limits", "requests", "key"]))
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=12,
)
containers = st.lists(
    st.dictionaries(st.sampled_from(CONTAINER_FIELDS), values, max_size=5) | values, max_size=3
)
pod_specs = st.fixed_dictionaries(
    {"containers": containers},
    optional={
        **{f: values for f in POD_FIELDS if "." not in f and f != "containers"},
        "initContainers": containers,
    },
)
KINDS = ["Pod", "Job", "CronJob", "Deployment", "PyTorchJob", "RayCluster", "RayJob", "List"]


@settings(
    max_examples=int(os.environ.get("GPUSTACK_FUZZ_EXAMPLES", "0")) or 150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(kind=st.sampled_from(KINDS), spec=pod_specs, extra=values)
def test_random_pod_specs_never_raise(kind: str, spec: dict[str, Any], extra: Any) -> None:
    template = {"metadata": {"annotations": extra}, "spec": spec}
    placed: dict[str, Any] = {
        "Pod": {"metadata": extra, "spec": spec},
        "Job": {"spec": {"template": template}},
        "CronJob": {"spec": {"jobTemplate": {"spec": {"template": template}}}},
        "Deployment": {"spec": {"template": template}},
        "PyTorchJob": {"spec": {"pytorchReplicaSpecs": {"Worker": {"template": template}}}},
        "RayCluster": {"spec": {"headGroupSpec": {"template": template},
                                "workerGroupSpecs": [{"groupName": extra, "template": template}]}},
        "RayJob": {"spec": {"rayClusterSpec": {"headGroupSpec": {"template": template}},
                            "submitterPodTemplate": template}},
        "List": {"items": [{"kind": "Pod", "spec": spec}, extra]},
    }[kind]  # fmt: skip
    lint_everything([{"apiVersion": "v1", "kind": kind, **placed}])


@pytest.mark.parametrize(
    "text",
    [
        "kind: [Pod]\nspec: {containers: []}\n",
        "kind: {a: 1}\nitems: [1]\n",
        "? [a]\n: 1\nkind: Pod\n",
        "kind: Pod\nspec: {containers: [{resources: {limits: {1: 2}}}]}\n",
        "kind: Pod\nspec:\n  <<: {containers: [{name: a}]}\n",
        "kind: Pod\nspec: {containers: !!set {a, b}}\n",
        "kind: Pod\nspec: {containers: [{name: !custom x, image: 2024-01-01}]}\n",
        "kind: Pod\nspec: &x\n  <<: *x\n  containers: []\n",  # merges itself without end
        "a: &x [*x]\n",  # an alias of its own parent
    ],
)
def test_odd_yaml_is_read_without_a_traceback(text: str) -> None:
    for ctx in contexts():
        result = lint(["-"], ctx, stdin=text)
        for fmt in FORMATS:
            render(result, fmt)
