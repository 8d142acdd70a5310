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
from gpustack.kube import cel
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
    # Dynamic Resource Allocation: class names, CEL selectors (readable, odd, broken), requests
    "gpu.nvidia.com", "mig.nvidia.com", "compute-domain-default-channel.nvidia.com",
    "gpu.nvidia.co", "single-gpu", "device.attributes['gpu.nvidia.com'].productName == 1",
    "device.attributes[\"gpu.nvidia.com\"][\"productNmae\"] == 'x'",
    "device.capacity['gpu.nvidia.com'].memory >= 1", "device.attributes['gpu.nvidia.com'].x == '",
    "device.attributes['gpu.nvidia.com'].type == 'gpu' && (device.driver == 'gpu.nvidia.com'",
    "((((", "device.attributes[''][''] == semver('')",
    [{"cel": {"expression": 3}}], [{"cel": "x"}], [{"cel": {"expression": "device.driver == 1"}}],
    [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}], [{"resourceClaimName": [1]}],
    [{"name": "gpu", "exactly": {"deviceClassName": ["gpu.nvidia.com"], "selectors": {}}}],
    [{"name": {}, "firstAvailable": [{"deviceClassName": 1}, None, {"selectors": [None]}]}],
    [{"name": 1}], [{"name": "gpu", "request": 2}],
]  # fmt: skip

#: Fields the rules read, aimed at (set, whatever was there) relative to a pod spec or its
#: first container; other mutations hit any existing node.
POD_FIELDS = [
    "containers", "initContainers", "volumes", "tolerations", "nodeSelector", "affinity",
    "affinity.nodeAffinity", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
    "Execution", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
    "nodeSelectorTerms", "runtimeClassName", "hostIPC", "resourceClaims",
]  # fmt: skip
CONTAINER_FIELDS = [
    "name", "image", "command", "args", "env", "volumeMounts", "resources", "resources.limits",
    "resources.requests", "resources.claims", "restartPolicy",
]  # fmt: skip
TOP_FIELDS = ["kind", "apiVersion", "metadata", "metadata.annotations", "metadata.name", "spec",
              "items", "metadata.namespace"]  # fmt: skip
#: Fields of ResourceClaims, templates and DeviceClasses the rules read (relative to the object;
#: ``@`` stands for the first request).
CLAIM_FIELDS = [
    "spec.devices", "spec.devices.requests", "spec.spec", "spec.spec.devices.requests",
    "spec.selectors", "@", "@.name", "@.exactly", "@.exactly.deviceClassName",
    "@.exactly.selectors", "@.exactly.count", "@.firstAvailable", "@.deviceClassName",
]  # fmt: skip
CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass")


def _claim_field(doc: dict[str, Any], dotted: str, value: Any) -> None:
    """Set a claim field; ``@`` is the first request of a claim or template (made if missing)."""
    if not dotted.startswith("@"):
        set_field(doc, dotted, value)
        return
    at = ["spec", "devices"] if doc.get("kind") == "ResourceClaim" else ["spec", "spec", "devices"]
    holder: Any = doc
    for key in at:
        if not isinstance(holder.get(key), dict):
            holder[key] = {}
        holder = holder[key]
    requests = holder.get("requests")
    if not isinstance(requests, list) or not requests or not isinstance(requests[0], dict):
        holder["requests"] = requests = [{"name": "gpu"}]
    if dotted == "@":
        requests[0] = value
    else:
        set_field(requests[0], dotted.removeprefix("@."), value)


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
        if doc.get("kind") in CLAIM_KINDS and roll < 0.6:
            _claim_field(doc, rng.choice(CLAIM_FIELDS), value)
        elif roll < 0.3 and specs:
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


def with_partners(doc: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """``doc`` with, at times, an object of another case linted beside it, so that mutated pods
    meet defined claims and mutated claims meet pods (the rules read across objects)."""
    return [doc, copy.deepcopy(rng.choice(seeds()))] if rng.random() < 0.3 else [doc]


def lint_everything(docs: list[Any]) -> None:
    """Lint ``docs`` as ``gpustack lint -`` does, in every context and format."""
    text = yaml.safe_dump_all(docs, sort_keys=False)
    for ctx in contexts():
        result = lint(["-"], ctx, stdin=text)
        for fmt in FORMATS:
            render(result, fmt)


def cases() -> Iterator[tuple[int, list[dict[str, Any]]]]:
    rng = random.Random(SEED)
    pool = seeds()
    for i in range(CASES):
        yield i, with_partners(mutate(rng.choice(pool), rng), rng)


def test_mutated_manifests_never_raise() -> None:
    for i, docs in cases():
        try:
            lint_everything(docs)
        except Exception as exc:  # noqa: BLE001 - reported with the case that raised it
            raise AssertionError(
                f"case {i} (seed {SEED}) raised {type(exc).__name__}: {exc}\n"
                + yaml.safe_dump_all(docs, sort_keys=False)[:3000]
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


# --- random ResourceClaims, templates, DeviceClasses and CEL ------------------------------------

cel_texts = st.sampled_from([v for v in VALUES if isinstance(v, str) and "device" in v]) | st.text(
    alphabet="device.atribusclp[]'\"()=!<>&|? 0123gpunvidacom_-", max_size=90
)
selector_lists = st.lists(
    st.fixed_dictionaries({"cel": st.fixed_dictionaries({"expression": cel_texts | values})})
    | values,
    max_size=3,
)
class_names = st.sampled_from(["gpu.nvidia.com", "mig.nvidia.com", "gpu.nvidia.co", "x.example"])
exactly = st.fixed_dictionaries(
    {},
    optional={
        "deviceClassName": class_names | values,
        "selectors": selector_lists,
        "count": values,
    },
)
claim_requests = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "name": words | values,
            "exactly": exactly | values,
            "firstAvailable": st.lists(exactly | values, max_size=2) | values,
            "deviceClassName": class_names,
            "selectors": selector_lists,
        },
    )
    | values,
    max_size=3,
)


@settings(
    max_examples=int(os.environ.get("GPUSTACK_FUZZ_EXAMPLES", "0")) or 150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    kind=st.sampled_from(CLAIM_KINDS),
    requests=claim_requests | values,
    selectors=selector_lists | values,
    pod_claims=st.lists(
        st.fixed_dictionaries(
            {"name": words | values},
            optional={"resourceClaimTemplateName": words | values, "resourceClaimName": words},
        )
        | values,
        max_size=3,
    )
    | values,
)
def test_random_claims_never_raise(
    kind: str, requests: Any, selectors: Any, pod_claims: Any
) -> None:
    devices = {"devices": {"requests": requests}}
    spec = {
        "ResourceClaim": devices,
        "ResourceClaimTemplate": {"spec": devices},
        "DeviceClass": {"selectors": selectors},
    }[kind]
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": {"name": "single-gpu"}}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "resourceClaims": pod_claims,
            "containers": [
                {"name": "c", "resources": {"claims": pod_claims, "limits": {"nvidia.com/gpu": 1}}}
            ],
        },
    }
    lint_everything([{**claim, "spec": spec}, pod])


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(expr=cel_texts)
def test_the_cel_reader_never_raises(expr: str) -> None:
    device = {"name": "gpu-0", "attributes": {"type": {"string": "gpu"}, "id": {"int": 0}}}
    cel.refs(expr)
    cel.driver(expr)
    cel.evaluate(expr, device, "gpu.nvidia.com")
