"""Whole-stack properties of every synthesized object, over representative profiles.

Includes every profile in the repository's ``profiles/`` (loaded and checked the way
``gpustack validate`` does), so a new example profile is covered without touching this file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from gpustack import dra_upstream
from gpustack.checker import check_paths
from gpustack.constructs import COMPONENTS, SYNC_WAVES, SynthObject, synthesize
from gpustack.profile import components
from gpustack.profile.model import SUPPORTED_KUBERNETES, Profile
from tests.k8s_schema import assert_valid, errors

from .conftest import find, kinds, profile
from .test_rbac import DOCUMENTED

REPO = Path(__file__).resolve().parents[2]

#: Hand-written profiles covering what the repository's examples might not.
CASES: dict[str, dict[str, Any]] = {
    "defaults": profile(
        metadata={
            "labels": {"team": "ml-platform", "app.kubernetes.io/name": "mine"},
            "podLabels": {"cost-center": "gpu", "app.kubernetes.io/name": "mine"},
        },
        workloads={"examples": [{"name": "smoke"}]},
    ),
    "nvidia-plugin-cdi-off": profile(
        toolkit={"cdi": {"enabled": False}},
        devicePlugin={"implementation": "nvidia", "passDeviceSpecs": True},
        workloads={"examples": [{"name": "smoke", "gpus": 2}]},
    ),
    "crio-hooks": profile(
        cluster={"runtime": {"name": "crio"}, "namespace": "kube-system"},
        toolkit={"cdi": {"enabled": False}},
    ),
    "k3s-host-driver": profile(
        cluster={"kubernetesVersion": "1.29", "runtime": {"distribution": "rke2"}},
        driver={"enabled": False, "resources": {"limits": {"memory": "1Gi"}}},
        toolkit={"env": [{"name": "X", "value": "y"}], "resources": {"requests": {"cpu": "50m"}}},
    ),
    "simulated-mig": profile(
        cluster={"kubernetesVersion": "1.37", "imagePullSecrets": ["regcred"]},
        driver={"enabled": False},
        toolkit={"enabled": False},
        devicePlugin={"backend": "simulated", "migStrategy": "mixed"},
        gpus={"product": "A100-SXM4-40GB", "perNode": 4, "mig": {"1g.5gb": 7}},
        workloads={"examples": [{"name": "mig", "resourceName": "nvidia.com/mig-1g.5gb"}]},
    ),
    "nvidia-plugin-node-configs": profile(
        metadata={"labels": {"team": "ml-platform"}},
        devicePlugin={
            "implementation": "nvidia",
            "nodeConfigs": [
                {"name": "a-name-of-the-longest-length-35-chr", "migStrategy": "mixed"},
                {"name": "whole", "gpus": {"perNode": 4}},
            ],
        },
        gpus={"product": "A100-SXM4-80GB", "mig": {}},
    ),
}


def _repo_profiles() -> dict[str, Profile]:
    result = check_paths([REPO / "profiles"])
    assert result.ok, "\n".join(map(str, result.issues))
    return {f"profiles/{p.path.name}": p.profile for p in result.profiles}


PROFILES: dict[str, Profile] = {
    **{name: Profile.from_dict(data) for name, data in CASES.items()},
    **_repo_profiles(),
}


@pytest.fixture(scope="module")
def stacks() -> dict[str, list[SynthObject]]:
    return {name: synthesize(p) for name, p in PROFILES.items()}


def test_repository_profiles_are_included() -> None:
    assert any(name.startswith("profiles/") for name in PROFILES)


@pytest.mark.parametrize("name", list(PROFILES))
def test_strict_kubernetes_schema(stacks: dict[str, list[SynthObject]], name: str) -> None:
    version = PROFILES[name].cluster.kubernetes_version
    assert_valid([o.manifest for o in stacks[name]], version)


@pytest.mark.parametrize("version", SUPPORTED_KUBERNETES)
def test_defaults_valid_on_every_supported_kubernetes(
    stacks: dict[str, list[SynthObject]], version: str
) -> None:
    assert_valid([o.manifest for o in stacks["nvidia-plugin-cdi-off"]], version)


def test_schema_validator_catches_mistakes(stacks: dict[str, list[SynthObject]]) -> None:
    ds = json.loads(json.dumps(find(stacks["defaults"], "DaemonSet", "nvidia-driver-daemonset")))
    ds["spec"]["template"]["spec"]["hostPid"] = True  # wrong case: unknown field in strict mode
    del ds["spec"]["selector"]
    found = errors(ds, "1.33")
    assert any("hostPid" in e for e in found)
    assert any("'selector' is a required property" in e for e in found)


HASH_SUFFIX = re.compile(r"-[0-9a-f]{8}$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def _all(stacks: dict[str, list[SynthObject]]) -> list[tuple[str, SynthObject]]:
    return [(name, o) for name, objects in stacks.items() for o in objects]


def _crd_name(o: SynthObject) -> bool:
    """A CRD is named ``<plural>.<group>``, as the API requires; a DeviceClass is named like
    NVIDIA's (``gpu.nvidia.com``: a DNS subdomain the driver's users and docs name)."""
    if o.kind == "DeviceClass":
        return o.name in {c.name for c in dra_upstream.DEVICE_CLASSES}
    if o.kind != "CustomResourceDefinition":
        return False
    spec = o.manifest["spec"]
    return bool(o.name == f"{spec['names']['plural']}.{spec['group']}")


def test_names_are_explicit_and_stable(stacks: dict[str, list[SynthObject]]) -> None:
    bad = [
        f"{name}: {o.kind}/{o.name}"
        for name, o in _all(stacks)
        if HASH_SUFFIX.search(o.name)
        or not (DNS_LABEL.match(o.name) or _crd_name(o))
        or len(o.name) > 63
    ]
    assert not bad


def _pod_templates(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    template = manifest.get("spec", {}).get("template")
    return [template] if template else []


def _selectors(manifest: dict[str, Any]) -> list[dict[str, str]]:
    """Every label selector in a workload: its own and those in (anti-)affinity terms."""
    found: list[dict[str, str]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("selector", "labelSelector") and isinstance(value, dict):
                    # a Service's selector is the labels themselves
                    plain = not ({"matchLabels", "matchExpressions"} & set(value))
                    found.append(value if plain else value.get("matchLabels", {}))
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(manifest.get("spec", {}))
    return found


def test_recommended_labels_everywhere(stacks: dict[str, list[SynthObject]]) -> None:
    required = {
        "app.kubernetes.io/name",
        "app.kubernetes.io/component",
        "app.kubernetes.io/part-of",
        "app.kubernetes.io/managed-by",
    }
    for name, o in _all(stacks):
        # The version label only where the version lives: workloads and their pod templates.
        workload = o.kind in ("DaemonSet", "Job")
        for meta in [o.manifest["metadata"], *(t["metadata"] for t in _pod_templates(o.manifest))]:
            labels = meta.get("labels", {})
            assert required <= set(labels), f"{name}: {o.kind}/{o.name}: {labels}"
            assert ("app.kubernetes.io/version" in labels) is workload, f"{o.kind}/{o.name}"
            assert labels["app.kubernetes.io/part-of"] == "gpustack"
            assert labels["app.kubernetes.io/managed-by"] == "gpustack"


def test_profile_labels_on_every_object_pod_labels_on_every_pod_never_in_selectors(
    stacks: dict[str, list[SynthObject]],
) -> None:
    """``metadata.labels`` go on every object and on no pod template (a change of them must
    recreate no pod), ``metadata.podLabels`` on every pod template; neither in a selector."""
    templates = 0
    for o in stacks["defaults"]:
        meta = o.manifest["metadata"]
        assert meta["labels"]["team"] == "ml-platform", f"{o.kind}/{o.name}"
        assert "cost-center" not in meta["labels"], f"{o.kind}/{o.name}"
        assert meta["labels"]["app.kubernetes.io/name"] != "mine"  # ours win
        for template in _pod_templates(o.manifest):
            templates += 1
            labels = template["metadata"]["labels"]
            assert "team" not in labels, f"{o.kind}/{o.name}"
            assert labels["cost-center"] == "gpu", f"{o.kind}/{o.name}"
            assert labels["app.kubernetes.io/name"] != "mine"
        for selector in _selectors(o.manifest):
            assert "team" not in selector and "cost-center" not in selector
    assert templates > 0


def test_version_never_in_selectors(stacks: dict[str, list[SynthObject]]) -> None:
    seen = 0
    for name, o in _all(stacks):
        for selector in _selectors(o.manifest):
            seen += 1
            assert set(selector) == {"app.kubernetes.io/name", "app.kubernetes.io/component"}, (
                f"{name}: {o.kind}/{o.name}: {selector}"
            )
            owner: dict[str, Any] | None = o.manifest
            if "template" not in o.manifest.get("spec", {}):
                # a Service selects the pods of the workload of its name (a multinode example's
                # Job); a Service with no such workload (the DCGM exporter's) is checked in its
                # own tests
                owner = next(
                    (
                        x.manifest
                        for n, x in _all(stacks)
                        if n == name
                        and x.name == o.name
                        and "template" in x.manifest.get("spec", {})
                    ),
                    None,
                )
            if owner is not None:
                labels = owner["spec"]["template"]["metadata"]["labels"]
                assert selector.items() <= labels.items()
    assert seen > 0


def test_sync_waves(stacks: dict[str, list[SynthObject]]) -> None:
    """Every object carries its component's wave, as the registry row declares it."""
    waves = {c.name: str(c.sync_wave) for c in components.REGISTRY}
    assert waves == SYNC_WAVES
    for _, o in _all(stacks):
        wave = o.manifest["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]
        assert wave == waves[o.component], (o.component, o.kind, o.name)


CLUSTER_SCOPED = {
    "Namespace",
    "RuntimeClass",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "NodeFeatureRule",
    "DeviceClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
}


def test_namespaces(stacks: dict[str, list[SynthObject]]) -> None:
    for name, o in _all(stacks):
        namespace = o.manifest["metadata"].get("namespace")
        if o.kind in CLUSTER_SCOPED:
            assert namespace is None
        else:
            assert namespace == PROFILES[name].cluster.namespace


def _token_volumes(spec: dict[str, Any]) -> list[str]:
    return [
        v["name"]
        for v in spec.get("volumes", [])
        if any("serviceAccountToken" in s for s in v.get("projected", {}).get("sources", []))
    ]


def test_api_access_only_as_documented(stacks: dict[str, list[SynthObject]]) -> None:
    """Every Role/ClusterRole has exactly its documented rules (see test_rbac), and only a
    ServiceAccount bound to one gets a token: by automount or a projected token volume."""
    for name, objects in stacks.items():
        accounts = {o.name: o.manifest for o in objects if o.kind == "ServiceAccount"}
        roles = {o.name: o.manifest for o in objects if o.kind in ("ClusterRole", "Role")}
        for role, manifest in roles.items():
            assert role in DOCUMENTED, f"{name}: {role} has no documented rules"
            assert manifest["rules"] == [r.as_manifest() for r in DOCUMENTED[role]], role
        with_api = set()
        for o in objects:
            if o.kind in ("ClusterRoleBinding", "RoleBinding"):
                assert o.manifest["roleRef"]["name"] in roles
                with_api |= {s["name"] for s in o.manifest["subjects"]}
        for account, manifest in accounts.items():
            if manifest["automountServiceAccountToken"] is not False:
                assert account in with_api, f"{name}: {account} gets a token without RBAC"
        for o in objects:
            for t in _pod_templates(o.manifest):
                spec = t["spec"]
                assert spec["serviceAccountName"] in accounts
                if spec.get("automountServiceAccountToken") is not False or _token_volumes(spec):
                    assert spec["serviceAccountName"] in with_api, f"{name}: {o.kind}/{o.name}"


def test_order_and_components(stacks: dict[str, list[SynthObject]]) -> None:
    for objects in stacks.values():
        assert [o.component for o in objects] == sorted(
            (o.component for o in objects), key=COMPONENTS.index
        )
        for o in objects:
            assert list(o.manifest)[:3] == ["apiVersion", "kind", "metadata"]


def test_deterministic() -> None:
    for p in PROFILES.values():
        first, second = synthesize(p), synthesize(p)
        assert first == second
        assert json.dumps([o.manifest for o in first]) == json.dumps([o.manifest for o in second])


@pytest.mark.parametrize(
    ("sections", "expected"),
    [
        ({}, ["nvidia", "nvidia-cdi", "nvidia-legacy"]),
        ({"toolkit": {"cdi": {"enabled": False}}}, ["nvidia"]),
        ({"toolkit": {"enabled": False}}, ["nvidia"]),
        ({"toolkit": {"runtimeClass": "nvidia-cdi"}}, ["nvidia-cdi", "nvidia-legacy"]),
        ({"cluster": {"runtime": {"name": "crio"}}, "toolkit": {"cdi": {"enabled": False}}}, []),
        ({"toolkit": {"enabled": False}, "devicePlugin": {"backend": "simulated"}}, []),
        (
            {"devicePlugin": {"backend": "simulated"}},
            ["nvidia", "nvidia-cdi", "nvidia-legacy"],
        ),
    ],
)
def test_runtime_classes(sections: dict[str, Any], expected: list[str]) -> None:
    objects = synthesize(Profile.from_dict(profile(**sections)))
    classes = [o.manifest for o in objects if o.kind == "RuntimeClass"]
    assert sorted(c["metadata"]["name"] for c in classes) == expected
    assert all(c["handler"] == c["metadata"]["name"] for c in classes)


def test_privileged_namespace(stacks: dict[str, list[SynthObject]]) -> None:
    ns = find(stacks["defaults"], "Namespace", "gpustack-system")
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"
    # kube-system is not ours to declare; only the stack's own NetworkPolicy goes there
    assert kinds(stacks["crio-hooks"], "common") == [
        ("ConfigMap", "gpustack-prerequisites"),
        ("NetworkPolicy", "gpustack-deny-ingress"),
    ]


def test_no_ingress_to_any_pod(stacks: dict[str, list[SynthObject]]) -> None:
    """One NetworkPolicy per stack denies all ingress, and it selects every pod gpustack runs
    (and, since the namespace may be shared, nothing else). The only other policies are a
    multinode example's: its pods may reach each other, and nothing else reaches them."""
    for objects in stacks.values():
        policies = [o.manifest for o in objects if o.kind == "NetworkPolicy"]
        deny = [p for p in policies if p["metadata"]["name"] == "gpustack-deny-ingress"]
        assert len(deny) == 1
        # the other exceptions: the DCGM exporter's metrics port (test_dcgm_exporter) and a
        # multinode example's peers
        others = [
            p
            for p in policies
            if p not in deny and p["metadata"]["name"] != "gpustack-allow-gpu-metrics"
        ]
        for peers in (p["spec"] for p in others):
            assert peers["ingress"] == [{"from": [{"podSelector": peers["podSelector"]}]}]
            assert set(peers["podSelector"]["matchLabels"]) == {
                "app.kubernetes.io/name",
                "app.kubernetes.io/component",
            }
        spec = deny[0]["spec"]
        assert spec["policyTypes"] == ["Ingress"] and "ingress" not in spec
        selector = spec["podSelector"]["matchLabels"]
        assert selector == {"app.kubernetes.io/part-of": "gpustack"}
        pods = [t for o in objects for t in _pod_templates(o.manifest)]
        assert pods
        for t in pods:
            assert selector.items() <= t["metadata"]["labels"].items()
            assert t["spec"]["securityContext"] == {"seccompProfile": {"type": "RuntimeDefault"}}


def test_common_placement_on_every_daemonset(stacks: dict[str, list[SynthObject]]) -> None:
    p = PROFILES["simulated-mig"]
    for o in stacks["simulated-mig"]:
        # NFD's worker runs on every node: it is what finds the GPU nodes (test_nfd)
        if o.kind != "DaemonSet" or o.name == "nfd-worker":
            continue
        spec = o.manifest["spec"]["template"]["spec"]
        assert spec["nodeSelector"] == dict(p.cluster.node_selector)
        assert spec["priorityClassName"] == "system-node-critical"
        assert spec["imagePullSecrets"] == [{"name": "regcred"}]
        assert spec["tolerations"] == [
            {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}
        ]
