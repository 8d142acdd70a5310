"""The acceptance objects of every example profile: strictly valid, one pod per node, the
stack's runtime class and placement, every device a node advertises requested."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpustack.accept.expect import DEFAULT_TOLERANCE, MAX_CONTAINERS
from gpustack.accept.plan import NothingToAccept, node_hosts, plan
from gpustack.accept.report import expected_counts
from gpustack.cli import main
from gpustack.kube import state
from gpustack.profile import catalog, derive
from tests.accept.conftest import EVERY_PROFILE, PROFILES, REPO, job, load, objects
from tests.k8s_schema import assert_valid


@pytest.mark.parametrize(("nodes", "named"), [(1, False), (3, False), (3, True)])
@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_objects_are_strictly_valid(path: Path, nodes: int, named: bool) -> None:
    profile = load(path)
    objs = objects(path, nodes, named)
    assert_valid(objs, profile.cluster.kubernetes_version)
    names = [(o["kind"], o["metadata"]["name"]) for o in objs]
    assert len(names) == len(set(names))
    for o in objs:
        assert o["metadata"]["namespace"] == profile.cluster.namespace
        assert o["metadata"]["labels"]["app.kubernetes.io/component"] == "acceptance"


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_one_pod_per_node_under_the_stack_runtime_class(path: Path) -> None:
    profile = load(path)
    for o in objects(path, 3):
        if o["kind"] != "Job":
            continue
        spec, pod = o["spec"], o["spec"]["template"]["spec"]
        assert spec["completionMode"] == "Indexed" and spec["backoffLimit"] == 0
        name = o["metadata"]["name"]
        assert o["spec"]["template"]["metadata"]["labels"]["gpustack.dev/accept-job"] == name
        (term,) = pod["affinity"]["podAntiAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"
        ]
        assert term == {
            "labelSelector": {"matchLabels": {"gpustack.dev/accept-job": name}},
            "topologyKey": "kubernetes.io/hostname",
        }
        assert dict(profile.cluster.node_selector).items() <= pod["nodeSelector"].items()
        classes = derive.runtime_classes(profile)
        assert pod.get("runtimeClassName") == (classes[0] if classes else None)
        assert pod["automountServiceAccountToken"] is False
        assert pod["securityContext"]["runAsNonRoot"] is True


# (profile, job, container count, limits of each container, GPUSTACK_EXPECT)
REQUESTS = [
    ("h100-training", "gpustack-accept-devices", 1, {"nvidia.com/gpu": "8"},
     {"gpus": 8, "product": "NVIDIA H100 80GB HBM3"}),
    ("a100-mig-mixed", "gpustack-accept-devices", 1,
     {"nvidia.com/mig-1g.10gb": "16", "nvidia.com/mig-2g.20gb": "8", "nvidia.com/mig-3g.40gb": "8"},
     {"gpus": 8, "product": "NVIDIA A100-SXM4-80GB",
      "mig": {"1g.10gb": 16, "2g.20gb": 8, "3g.40gb": 8}}),
    ("l4-inference-timeslicing", "gpustack-accept-devices", 8, {"nvidia.com/gpu.shared": "1"},
     {"gpus": 1, "product": "NVIDIA L4"}),
    ("l4-inference-timeslicing", "gpustack-accept-devices-whole-gpu", 1, {"nvidia.com/gpu": "2"},
     {"gpus": 2, "product": "NVIDIA L4"}),
    ("a10-mps-inference", "gpustack-accept-devices", 8, {"nvidia.com/gpu.shared": "1"},
     {"gpus": 1, "product": "NVIDIA A10"}),
    ("gpu-sim-ci", "gpustack-accept-devices", 1, {"nvidia.com/gpu": "2"}, {"simulated": True}),
]  # fmt: skip


@pytest.mark.parametrize(("stem", "name", "count", "limits", "expect"), REQUESTS)
def test_devices_job_requests_every_device(
    stem: str, name: str, count: int, limits: dict[str, str], expect: dict[str, object]
) -> None:
    containers = job(objects(Path("profiles") / f"{stem}.yaml"), name)["spec"]["template"]["spec"][
        "containers"
    ]
    assert len(containers) == count <= MAX_CONTAINERS
    for c in containers:
        assert c["resources"]["limits"] == limits
        env = {e["name"]: e.get("value") for e in c["env"]}
        assert json.loads(env["GPUSTACK_EXPECT"]) == expect


def test_node_config_jobs_select_their_nodes() -> None:
    objs = objects(Path("profiles/l4-inference-timeslicing.yaml"))
    top = job(objs, "gpustack-accept-devices")["spec"]["template"]["spec"]
    own = job(objs, "gpustack-accept-devices-whole-gpu")["spec"]["template"]["spec"]
    label = load(Path("profiles/l4-inference-timeslicing.yaml")).device_plugin.node_config_label
    assert own["nodeSelector"][label] == "whole-gpu"
    (term,) = top["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert term["matchExpressions"] == [
        {"key": label, "operator": "NotIn", "values": ["whole-gpu"]}
    ]


# product -> interconnect, expected bus bandwidth (GB/s), threshold at the default tolerance
THRESHOLDS = [
    ("H100-SXM5-80GB", "nvlink4", 360.0, 288.0),
    ("A100-SXM4-80GB", "nvlink3", 240.0, 192.0),
    ("B200-SXM-180GB", "nvlink5", 720.0, 576.0),
    ("L40S", "pcie4", 19.2, 15.36),
    ("T4", "pcie3", 9.6, 7.68),
]


@pytest.mark.parametrize(("product", "link", "expected", "threshold"), THRESHOLDS)
def test_thresholds_come_from_the_interconnect(
    product: str, link: str, expected: float, threshold: float
) -> None:
    found = catalog.expected_busbw(product)
    assert found is not None
    assert (found[0].name, found[1]) == (link, expected)
    assert round(expected * (1 - DEFAULT_TOLERANCE), 2) == threshold


def test_every_product_has_an_interconnect() -> None:
    assert sorted(catalog.PRODUCT_INTERCONNECT) == sorted(catalog.PRODUCTS)


@pytest.mark.parametrize(
    ("stem", "nodes", "jobs"),
    [
        ("h100-training", 1, ["gpustack-accept-devices", "gpustack-accept-allreduce"]),
        ("h100-training", 2, ["gpustack-accept-devices", "gpustack-accept-allreduce",
                              "gpustack-accept-allreduce-nodes"]),
        ("lab-1gpu", 1, ["gpustack-accept-devices"]),
        ("lab-1gpu", 2, ["gpustack-accept-devices", "gpustack-accept-allreduce-nodes"]),
        ("a100-mig-mixed", 2, ["gpustack-accept-devices"]),
        ("gpu-sim-ci", 2, ["gpustack-accept-devices"]),
    ],
)  # fmt: skip
def test_bandwidth_only_over_whole_gpus(stem: str, nodes: int, jobs: list[str]) -> None:
    objs = objects(Path("profiles") / f"{stem}.yaml", nodes)
    assert [o["metadata"]["name"] for o in objs if o["kind"] == "Job"] == jobs
    if "gpustack-accept-allreduce-nodes" in jobs:
        svc = next(o for o in objs if o["kind"] == "Service")
        pod = job(objs, "gpustack-accept-allreduce-nodes")["spec"]["template"]["spec"]
        assert pod["subdomain"] == svc["metadata"]["name"]
        labels = job(objs, "gpustack-accept-allreduce-nodes")["spec"]["template"]["metadata"]
        assert svc["spec"]["selector"].items() <= labels["labels"].items()


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_gpustack_lint_finds_nothing_in_them(path: Path, tmp_path: Path) -> None:
    """The acceptance pods pass the GPU pitfall rules with their own profile (resources it
    advertises, capacity, taints, runtime classes, /dev/shm for NCCL)."""
    out = CliRunner().invoke(main, ["accept", "manifests", str(path), "--nodes", "2"])
    assert out.exit_code == 0, out.output
    (tmp_path / "accept.yaml").write_text(out.stdout)
    found = CliRunner().invoke(
        main, ["lint", "--profile", str(path), str(tmp_path / "accept.yaml")]
    )
    assert found.exit_code == 0, found.output


@pytest.mark.parametrize(("nodes", "named"), [(1, False), (2, False), (2, True)])
@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_the_report_expects_every_result_the_jobs_print(
    path: Path, nodes: int, named: bool
) -> None:
    """The check names the pods print (GPUSTACK_CHECK, --check) and how many: what the report
    counts, so a run that printed them all is complete and one short of a pod is not."""
    printed: dict[str, int] = {}
    for o in objects(path, nodes, named):
        if o["kind"] != "Job":
            continue
        pods = o["spec"]["completions"]
        for c in o["spec"]["template"]["spec"]["containers"]:
            env = {e["name"]: e.get("value") for e in c["env"]}
            flags = [w.split("=", 1)[1] for w in c["command"] if w.startswith("--check=")]
            name = env.get("GPUSTACK_CHECK") or flags[0]
            assert o["spec"]["template"]["metadata"]["labels"]["gpustack.dev/accept-check"] == name
            # the per-node devices pods print once per container, torchrun's rank 0 once per group
            per_job = pods if not name.startswith("allreduce-nodes") else 1
            printed[name] = printed.get(name, 0) + per_job
    assert printed == expected_counts(plan(load(path), None, nodes))


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_named_nodes_get_one_pinned_job_per_check(path: Path) -> None:
    """With the nodes named (``--state``), each per-node check is one Job per node, pinned by
    its hostname, so a single apply of the stream cannot check a node twice; only the gang
    (the multi-node all-reduce) is one Indexed Job, over exactly the named nodes."""
    profile = load(path)
    label = profile.device_plugin.node_config_label
    pinned: dict[tuple[str, str | None], list[str]] = {}
    for o in objects(path, 3, named=True):
        if o["kind"] != "Job":
            continue
        pod = o["spec"]["template"]["spec"]
        check = o["spec"]["template"]["metadata"]["labels"]["gpustack.dev/accept-check"]
        config = pod["nodeSelector"].get(label)
        prefix = config or "gpu"
        host = pod["nodeSelector"].get("kubernetes.io/hostname")
        if check.startswith("allreduce-nodes"):
            assert host is None and o["spec"]["completions"] == 3
            (term,) = pod["affinity"]["nodeAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"
            ]["nodeSelectorTerms"]
            assert term["matchExpressions"][-1] == {
                "key": "kubernetes.io/hostname",
                "operator": "In",
                "values": [f"{prefix}-{i}" for i in range(3)],
            }
            continue
        assert o["spec"]["completions"] == o["spec"]["parallelism"] == 1
        assert "podAntiAffinity" not in pod.get("affinity", {})
        assert o["metadata"]["annotations"]["gpustack.dev/accept-node"] == f"{host}.node"
        assert o["metadata"]["name"].endswith(f"-{host.rsplit('-', 1)[1]}")
        pinned.setdefault((check, config), []).append(host)
    assert pinned
    for (_check, config), hosts in pinned.items():
        prefix = config or "gpu"
        assert hosts == [f"{prefix}-{i}" for i in range(3)]


def test_dra_pool_nodes_get_no_device_plugin_check() -> None:
    """h100-dra: nodes labelled with dra.nodeSelector hand their GPUs out by ResourceClaims, so
    they advertise no nvidia.com/gpu; a check pinned there would stay Pending ("Insufficient
    nvidia.com/gpu"; seen on the control plane). Only the device plugin's nodes are checked."""
    profile = load(REPO / "profiles" / "h100-dra.yaml")

    def node(name: str, **extra: str) -> dict[str, Any]:
        labels = {"nvidia.com/gpu.present": "true", "kubernetes.io/hostname": name, **extra}
        return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}

    doc = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [node("plugin-0"), node("dra-0", **dict(profile.dra.node_selector))],
    }
    hosts = node_hosts(profile, state.load(json.dumps(doc), "test"))
    assert [h.name for h in hosts[None]] == ["plugin-0"]


@pytest.mark.parametrize("path", EVERY_PROFILE, ids=lambda p: p.stem)
def test_the_plan_refuses_exactly_the_clusters_without_the_device_plugin(path: Path) -> None:
    """The action refuses, not the command line: anything planning a run (the CLI, a bench, a
    test) gets the refusal, and every profile with the plugin gets a plan."""
    profile = load(path)
    if profile.device_plugin.enabled:
        assert plan(profile, nodes=1)
    else:
        with pytest.raises(NothingToAccept, match="devicePlugin.enabled is false"):
            plan(profile, nodes=1)
