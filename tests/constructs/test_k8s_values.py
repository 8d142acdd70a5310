"""gpustack's own Kubernetes API values (gpustack/constructs/k8s.py), which replaced cdk8s-plus'
generated structs (issue #23): they must render exactly the JSON cdk8s rendered for those.

The bytes of every example cluster are held by ``gpustack synth --check --full`` (dist/ was
written by the structs, and stayed identical); these tests hold the rules that make it so."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from gpustack.constructs import k8s
from gpustack.constructs.body_text import decoded
from gpustack.constructs.kube import kube_object

#: (value, its JSON): camelCase names, the API's own irregular spellings, ``None`` left out,
#: every mapping's keys sorted (as cdk8s sorts every object it renders), lists kept in order.
CASES: list[tuple[Any, Any]] = [
    (k8s.EnvVar(name="A", value="1"), {"name": "A", "value": "1"}),
    (k8s.EnvVar(name="A", value=None), {"name": "A"}),
    (
        k8s.EnvVar(
            name="NODE",
            value_from=k8s.EnvVarSource(
                field_ref=k8s.ObjectFieldSelector(field_path="spec.nodeName")
            ),
        ),
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
    ),
    (
        k8s.PodSpec(containers=[], host_pid=True, host_ipc=False, host_network=True),
        {"containers": [], "hostIPC": False, "hostNetwork": True, "hostPID": True},
    ),
    (k8s.ContainerPort(container_port=80, name="http"), {"containerPort": 80, "name": "http"}),
    (k8s.ServiceSpec(cluster_ip="None"), {"clusterIP": "None"}),
    (
        k8s.PolicyRule(verbs=["get"], api_groups=[""], resource_names=["n"]),
        {"apiGroups": [""], "resourceNames": ["n"], "verbs": ["get"]},
    ),
    (
        k8s.NetworkPolicyIngressRule(
            from_=[k8s.NetworkPolicyPeer(pod_selector=k8s.LabelSelector())]
        ),
        {"from": [{"podSelector": {}}]},
    ),
    (
        k8s.VolumeProjection(downward_api=k8s.DownwardApiProjection(items=[])),
        {"downwardAPI": {"items": []}},
    ),
    (
        k8s.LabelSelector(match_labels={"z": "1", "a": "2", "M": "3"}),
        {"matchLabels": {"M": "3", "a": "2", "z": "1"}},
    ),
    (
        k8s.ResourceRequirements(limits={"nvidia.com/gpu": 1, "cpu": "500m"}),
        {"limits": {"cpu": "500m", "nvidia.com/gpu": 1}},
    ),
    (k8s.ExecAction(command=["b", "a"]), {"command": ["b", "a"]}),
    ({"b": None, "a": (1, 2)}, {"a": [1, 2]}),
]


@pytest.mark.parametrize(("value", "expected"), CASES, ids=lambda v: type(v).__name__)
def test_a_value_renders_as_the_api_spells_it(value: Any, expected: Any) -> None:
    rendered = k8s.to_json(value)
    assert rendered == expected
    assert list(rendered) == list(expected), "keys in cdk8s' (sorted) order"


def test_json_keys_follow_sorted_order_of_api_names() -> None:
    """``hostIPC`` < ``hostNetwork`` < ``hostPID``: sorted by the JSON name, not the Python one."""
    spec = k8s.PodSpec(containers=[], host_pid=True, host_network=True, host_ipc=True)
    assert list(k8s.to_json(spec)) == ["containers", "hostIPC", "hostNetwork", "hostPID"]


def test_fields_are_checked_when_a_value_is_made() -> None:
    with pytest.raises(TypeError, match="has no field vaule"):
        k8s.EnvVar(name="A", vaule="1")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="needs name"):
        k8s.EnvVar(value="1")  # type: ignore[call-arg]


def test_values_are_immutable_comparable_and_picklable() -> None:
    """Props that hold values are render-cache keys (pickled) and compared by tests."""
    a = k8s.Toleration(key="nvidia.com/gpu", operator="Exists")
    with pytest.raises(AttributeError):
        a.key = "other"  # type: ignore[misc]
    assert a == k8s.Toleration(key="nvidia.com/gpu", operator="Exists")
    assert a != k8s.Toleration(key="nvidia.com/gpu", operator="Equal")
    assert pickle.loads(pickle.dumps(a)) == a
    assert hash(a) == hash(k8s.Toleration(key="nvidia.com/gpu", operator="Exists"))
    assert repr(a) == "Toleration(key='nvidia.com/gpu', operator='Exists')"


def test_every_value_class_knows_the_json_name_of_each_field() -> None:
    """No field name that camelCase would misspell is missing from ``JSON_NAMES``: the API's
    capitalized acronyms (IP, IPC, PID, URLs, API) never come out of a plain conversion."""
    acronyms = ("_ip", "_ipc", "_pid", "_urls", "_api")
    for cls in k8s.Value.__subclasses__():
        for field in cls._fields:
            if any(field.endswith(a) or f"{a}_" in field for a in acronyms):
                assert field in k8s.JSON_NAMES, f"{cls.__name__}.{field}"


def test_an_object_is_one_api_object_with_its_fields_in_cdk8s_order() -> None:
    import cdk8s

    app = cdk8s.App()
    chart = cdk8s.Chart(app, "c")
    kube_object(
        chart,
        "cm",
        "v1",
        "ConfigMap",
        k8s.ObjectMeta(name="x", namespace="ns", labels={"b": "1", "a": "2"}),
        data={"z": "1", "a": "2"},
        immutable=None,
    )
    (raw,) = chart.to_json()
    assert raw["data"] == '{"a":"2","z":"1"}', "the body crosses jsii as its JSON text"
    rendered = decoded(raw)
    assert rendered == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"labels": {"a": "2", "b": "1"}, "name": "x", "namespace": "ns"},
        "data": {"a": "2", "z": "1"},
    }
    assert list(rendered) == ["apiVersion", "kind", "metadata", "data"]
    assert list(rendered["data"]) == ["a", "z"]
