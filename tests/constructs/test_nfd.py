"""Node Feature Discovery as constructs, and the GPU node rule."""

from __future__ import annotations

from typing import Any

import yaml

from gpustack.constructs import nfd
from gpustack.constructs.nfd_crds import GROUP
from gpustack.constructs.rbac import TOKEN_DIR
from tests.k8s_schema import errors

from .conftest import Synth, container, find, kinds, mounts, pod_spec, profile


def test_objects(synth: Synth) -> None:
    got = kinds(synth(profile()), "node-feature-discovery")
    assert ("CustomResourceDefinition", f"nodefeaturerules.{GROUP}") in got
    assert ("CustomResourceDefinition", f"nodefeatures.{GROUP}") in got
    assert ("CustomResourceDefinition", f"nodefeaturegroups.{GROUP}") in got
    for kind, name in [
        ("DaemonSet", "nfd-worker"),
        ("Deployment", "nfd-master"),
        ("Deployment", "nfd-gc"),
        ("Role", nfd.WORKER_ROLE),
        ("ClusterRole", nfd.MASTER_ROLE),
        ("ClusterRole", nfd.GC_ROLE),
    ]:
        assert (kind, name) in got
    # the folder creates no custom resource of a CRD it ships (one kubectl apply pass)
    assert "NodeFeatureRule" not in {kind for kind, _ in got}


def test_cluster_runs_its_own_nfd_only_the_rule(synth: Synth) -> None:
    assert kinds(synth(profile(nodeFeatureDiscovery={"enabled": False})),
                 "node-feature-discovery") == [("NodeFeatureRule", nfd.GPU_RULE)]  # fmt: skip
    off = profile(nodeFeatureDiscovery={"enabled": False, "gpuNodeRule": False})
    assert kinds(synth(off), "node-feature-discovery") == []


OWN_NFD = profile(nodeFeatureDiscovery={"enabled": False})


def worker_rules(objects: list[Any]) -> list[dict[str, Any]]:
    conf = yaml.safe_load(find(objects, "ConfigMap", "nfd-worker-conf")["data"]["nfd-worker.conf"])
    rules: list[dict[str, Any]] = conf["sources"].get("custom", [])
    return rules


def test_with_gpustacks_nfd_the_rule_is_the_workers_custom_rule(synth: Synth) -> None:
    # NFD v0.19.0 source/custom: the worker's custom rules take a NodeFeatureRule's rule syntax
    # and run over every discovered feature; the cluster's own NFD gets the NodeFeatureRule
    rule = find(synth(OWN_NFD), "NodeFeatureRule", nfd.GPU_RULE)
    assert worker_rules(synth(profile())) == rule["spec"]["rules"]
    off = profile(nodeFeatureDiscovery={"gpuNodeRule": False})
    assert worker_rules(synth(off)) == []


def test_rule_labels_nvidia_display_and_3d_controllers(synth: Synth) -> None:
    rule = find(synth(OWN_NFD), "NodeFeatureRule", nfd.GPU_RULE)
    assert errors(rule, "1.33") == []
    (only,) = rule["spec"]["rules"]
    assert only["labels"] == {"nvidia.com/gpu.present": "true"}
    (match,) = only["matchFeatures"]
    assert match["feature"] == "pci.device"
    assert match["matchExpressions"]["vendor"] == {"op": "In", "value": ["10de"]}
    assert match["matchExpressions"]["class"] == {"op": "In", "value": ["0300", "0302"]}


def test_worker_runs_everywhere_with_the_gpu_operator_settings(synth: Synth) -> None:
    objects = synth(profile(cluster={"nodeSelector": {"gpu": "yes"}}))
    worker = find(objects, "DaemonSet", "nfd-worker")
    spec = pod_spec(worker)
    assert "nodeSelector" not in spec and "affinity" not in spec
    assert spec["tolerations"] == [
        {"effect": "NoSchedule", "key": "nvidia.com/gpu", "operator": "Exists"}
    ]
    conf = yaml.safe_load(find(objects, "ConfigMap", "nfd-worker-conf")["data"]["nfd-worker.conf"])
    assert conf["sources"]["pci"] == {
        "deviceClassWhitelist": ["02", "0200", "0207", "0300", "0302"],
        "deviceLabelFields": ["vendor"],
    }
    c = container(worker, "nfd-worker")
    assert mounts(c)[nfd.FEATURES_D]["readOnly"] is True
    assert TOKEN_DIR in mounts(c)
    assert c["securityContext"]["runAsNonRoot"] is True
    master = yaml.safe_load(
        find(objects, "ConfigMap", "nfd-master-conf")["data"]["nfd-master.conf"]
    )
    assert master == {"extraLabelNs": ["nvidia.com"]}


def test_rbac_is_the_documented_tables(synth: Synth) -> None:
    objects = synth(profile())
    for kind, name, rules in [
        ("Role", nfd.WORKER_ROLE, nfd.WORKER_RULES),
        ("ClusterRole", nfd.MASTER_ROLE, nfd.MASTER_RULES),
        ("ClusterRole", nfd.GC_ROLE, nfd.GC_RULES),
    ]:
        assert find(objects, kind, name)["rules"] == [r.as_manifest() for r in rules]


def test_crd_schema_rejects_a_broken_rule(synth: Synth) -> None:
    rule = find(synth(OWN_NFD), "NodeFeatureRule", nfd.GPU_RULE)
    broken = yaml.safe_load(yaml.safe_dump(rule))
    broken["spec"]["rules"][0]["matchFeatures"][0]["matchExpressions"]["vendor"]["op"] = "Equals"
    assert any("'Equals' is not one of" in e for e in errors(broken, "1.33"))
