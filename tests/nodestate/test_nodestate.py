"""``gpustack validate --state``: a profile against the nodes it is for.

``fixtures/eks-h100.json`` is ``kubectl get nodes,pods,daemonsets,events -A -o json`` of an EKS
cluster as the Kubernetes API types shape it (a system node, two p5.48xlarge GPU nodes with
Node Feature Discovery's and GPU feature discovery's labels, gpustack's pods and DaemonSets),
written for these tests. Every profile here matches it; each case changes one thing on the
nodes, as drift would, and expects exactly one finding of one rule at the line of the profile
field it contradicts, naming the node and the value it has.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpustack.checker import Issue, check_paths
from gpustack.cli import main
from gpustack.kube import state
from gpustack.nodestate import reference
from gpustack.nodestate.registry import NODE_RULES
from gpustack.nodestate.validate import check_against
from gpustack.profile.rules import ALL

HERE = Path(__file__).parent
STATE = HERE / "fixtures" / "eks-h100.json"
H100 = HERE / "h100-eks.yaml"
MIG = HERE / "h100-eks-mig.yaml"
HOST = HERE / "hopper-host-driver.yaml"
GH200 = HERE / "gh200-host-driver.yaml"
CPU, GPU_A, GPU_B = "ip-10-0-1-17", "ip-10-0-2-41", "ip-10-0-2-58"
A, B = f"{GPU_A}.ec2.internal", f"{GPU_B}.ec2.internal"
OS = "feature.node.kubernetes.io/system-os_release."
CUDA = "nvidia.com/cuda.driver"
KV, NV = "kubernetesVersion", "driver.version"

#: One change to the recorded state: (node, where, key, value); value None removes it.
#: where: "label", "info" (status.nodeInfo), "taint" (key=value:effect added), "pod" (the
#: gpustack pod of that component on the node is removed), "remove" (the node itself).
Change = tuple[str, str, str, str | None]

# (id, profile, changes, rule, profile key the finding points at, what the message names)
CASES: list[tuple[str, Path, list[Change], str, str, str]] = [
    ("kubelet-newer", H100, [(GPU_A, "info", "kubeletVersion", "v1.34.1")],
     "kubernetes-version-matches-nodes", KV, f"{A} has kubelet v1.34.1"),
    ("kubelet-too-old", H100, [(GPU_B, "info", "kubeletVersion", "v1.29.15")],
     "kubelet-version-skew", KV, "kubelet v1.29.15"),
    ("os-by-nfd", H100, [(GPU_B, "label", OS + "VERSION_ID", "22.04"),
                         (GPU_B, "info", "osImage", "Ubuntu 22.04.5 LTS")],
     "os-matches-driver-image", "osTag", "Ubuntu 22.04.5 LTS (driver image OS ubuntu22.04)"),
    ("os-by-os-image", H100, [(GPU_A, "label", OS + "ID", None),
                              (GPU_A, "info", "osImage", "Red Hat Enterprise Linux 9.6 (Plow)")],
     "os-matches-driver-image", "osTag", "driver image OS rhel9.6"),
    ("kernel", H100, [(GPU_A, "info", "kernelVersion", "6.8.0-1039-aws")],
     "kernel-matches-precompiled", "kernelVersion", "kernel 6.8.0-1039-aws"),
    ("product", H100, [(GPU_B, "label", "nvidia.com/gpu.product", "NVIDIA-H200")],
     "gpu-product-matches-nodes", "product", "NVIDIA-H200 (gpus.product H200-SXM-141GB)"),
    ("product-unknown", H100, [(GPU_B, "label", "nvidia.com/gpu.product", "NVIDIA-H20")],
     "gpu-product-matches-nodes", "product", "NVIDIA-H20, a product gpustack's catalog lacks"),
    ("host-architecture", GH200, [(GPU_A, "label", "nvidia.com/gpu.product", "NVIDIA-GH200-480GB"),
                                  (GPU_B, "label", "nvidia.com/gpu.product", "NVIDIA-GH200-480GB")],
     "host-architecture-matches-product", "product", "amd64 hosts"),
    ("architecture", HOST, [(GPU_A, "label", "nvidia.com/gpu.family", "ampere")],
     "gpu-architecture-matches-nodes", "architecture", "ampere GPUs"),
    ("architecture-by-compute", HOST, [(GPU_A, "label", "nvidia.com/gpu.family", None),
                                      (GPU_A, "label", "nvidia.com/gpu.compute.major", "8"),
                                      (GPU_A, "label", "nvidia.com/gpu.compute.minor", "9")],
     "gpu-architecture-matches-nodes", "architecture", "ada GPUs"),
    ("count", H100, [(GPU_A, "label", "nvidia.com/gpu.count", "4")],
     "gpu-count-matches-nodes", "perNode", "4 GPUs"),
    ("mig-capable", MIG, [(GPU_B, "label", "nvidia.com/mig.capable", "false")],
     "mig-capable-nodes", "mig", f"{B} is not MIG-capable"),
    ("runtime", H100, [(GPU_A, "info", "containerRuntimeVersion", "cri-o://1.33.2")],
     "runtime-matches-nodes", "runtime.name", "runtime cri-o://1.33.2"),
    ("runtime-version", H100, [(GPU_B, "info", "containerRuntimeVersion", "containerd://1.7.27")],
     "runtime-version-matches-nodes", "runtime.version", "runtime containerd://1.7.27"),
    ("runtime-version-patch", HOST, [(GPU_B, "info", "containerRuntimeVersion", "containerd://2.0.4")],
     "runtime-version-matches-nodes", "runtime.version", "runtime containerd://2.0.4"),
    ("distribution", H100, [(GPU_A, "info", "kubeletVersion", "v1.33.5+k3s1")],
     "distribution-matches-nodes", "distribution", "distribution k3s"),
    ("host-driver", H100, [(GPU_B, "pod", "driver", None)],
     "host-driver-absent", "enabled", "driver 580.105.08 is loaded and no gpustack driver pod"),
    ("gke-driver", H100, [(GPU_A, "label", "cloud.google.com/gke-gpu-driver-version", "latest")],
     "host-driver-absent", "enabled", "GKE installs a driver"),
    ("host-driver-version", HOST, [(GPU_A, "label", CUDA + "-version.full", "570.172.08")],
     "driver-version-matches-host", NV, "driver 570.172.08 loaded"),
    ("host-driver-version-old-labels", HOST, [(GPU_A, "label", CUDA + "-version.full", None),
                                             (GPU_A, "label", CUDA + ".minor", "95")],
     "driver-version-matches-host", NV, "driver 580.95.08 loaded"),
    ("gke-driver-root", HOST, [(GPU_A, "label", "cloud.google.com/gke-nodepool", "h100-pool")],
     "gke-host-driver-root", "driver", "GKE's driver under /home/kubernetes/bin/nvidia"),
    ("taint", H100, [(GPU_A, "taint", "dedicated=ml:NoSchedule", None)],
     "node-taints-declared", "nodeTaints", "dedicated=ml:NoSchedule"),
    ("selects-cpu-node", H100, [(CPU, "label", "nvidia.com/gpu.present", "true")],
     "selected-nodes-have-gpus", "nodeSelector", f"{CPU}.ec2.internal, where NFD"),
    ("misses-gpu-node", H100, [(GPU_B, "label", "nvidia.com/gpu.present", None)],
     "gpu-nodes-selected", "nodeSelector", f"GPU node {B} is not picked"),
    ("selects-none", H100, [(GPU_A, "label", "nvidia.com/gpu.present", None),
                            (GPU_B, "label", "nvidia.com/gpu.present", None)],
     "gpu-nodes-selected", "nodeSelector", "picks none of the 3 nodes"),
]  # fmt: skip


def changed(changes: list[Change]) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(STATE.read_text())
    items = doc["items"]
    for short, where, key, value in changes:
        node = next(
            i for i in items if i["kind"] == "Node" and i["metadata"]["name"].startswith(short)
        )
        if where == "label":
            labels = node["metadata"]["labels"]
            labels.pop(key) if value is None else labels.__setitem__(key, value)
        elif where == "info":
            node["status"]["nodeInfo"][key] = value
        elif where == "taint":
            k, _, rest = key.partition("=")
            v, _, effect = rest.partition(":")
            node["spec"].setdefault("taints", []).append({"key": k, "value": v, "effect": effect})
        elif where == "pod":
            items[:] = [
                i
                for i in items
                if not (
                    i["kind"] == "Pod"
                    and i["spec"].get("nodeName") == node["metadata"]["name"]
                    and i["metadata"]["labels"]["app.kubernetes.io/component"] == key
                )
            ]
        else:
            raise AssertionError(where)
    return doc


def issues(profile: Path, doc: dict[str, Any]) -> list[Issue]:
    result = check_paths([profile])
    assert result.ok, result.issues
    return list(check_against(result, state.load(json.dumps(doc))).issues)


def line_of(profile: Path, key: str) -> int:
    """The line of the value of ``key`` (dotted: ``runtime.name``), an oracle independent of
    the loader's position map: its own line, or for a block mapping or list, the next one."""
    lines = profile.read_text().splitlines()
    n = 0
    for part in key.split("."):  # each key after its parent's line
        n = next(i for i, text in enumerate(lines, 1) if i > n and re.match(rf"^\s*{part}:", text))
    return n + 1 if lines[n - 1].rstrip().endswith(":") else n


@pytest.mark.parametrize("profile", [H100, MIG, HOST], ids=lambda p: p.stem)
def test_the_recorded_cluster_matches_every_profile(profile: Path) -> None:
    assert issues(profile, changed([])) == []


@pytest.mark.parametrize(
    ("profile", "changes", "rule", "key", "says"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_one_mismatch_is_one_finding_at_its_line(
    profile: Path, changes: list[Change], rule: str, key: str, says: str
) -> None:
    found = issues(profile, changed(changes))
    assert [(i.rule, i.line) for i in found] == [(rule, line_of(profile, key))], found
    assert says in found[0].message and found[0].hint, found[0]
    assert found[0].file == str(profile)


#: Rules whose case needs nodes of another platform than this EKS state, tested in their own
#: module: OpenShift's RHCOS builds (test_rhcos_builds.py); the host's IMEX service, which only
#: an AICR snapshot records (test_imex.py).
OWN_MODULE = {"rhcos-build-in-profile", "imex-service-matches-mode"}


def test_every_rule_has_a_case() -> None:
    assert {c[3] for c in CASES} | OWN_MODULE == {r.id for r in NODE_RULES}


def test_node_rule_ids_are_their_own() -> None:
    ids = [r.id for r in NODE_RULES]
    assert len(ids) == len(set(ids))
    assert not set(ids) & {d.id for d in ALL}


def test_nodes_that_do_not_tell_are_skipped() -> None:
    """Before the first sync there are no GFD or NFD labels: nothing is guessed from them."""
    doc = changed([])
    for item in doc["items"]:
        if item["kind"] == "Node":
            item["metadata"]["labels"] = {
                k: v
                for k, v in item["metadata"]["labels"].items()
                if not k.startswith(("nvidia.com/", "feature.node.kubernetes.io/"))
            } | ({"nvidia.com/gpu.present": "true"} if "p5" in str(item["metadata"]) else {})
    assert issues(H100, doc) == []
    assert issues(HOST, doc) == []  # fmt: skip


def test_cli_state_file_text_and_exit_codes(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(main, ["validate", str(H100), "--state", str(STATE)])
    assert ok.exit_code == 0, ok.output
    notice, summary = ok.output.splitlines()  # the recorded nodes run 1.33, past its end of life
    assert "notice: Kubernetes 1.33 reached its upstream end of life on 2026-06-28" in notice
    assert summary == "1 profile valid (1 notice)"
    drifted = tmp_path / "state.json"
    drifted.write_text(json.dumps(changed([(GPU_A, "info", "kernelVersion", "6.8.0-1039-aws")])))
    bad = runner.invoke(main, ["validate", str(H100), "--state", str(drifted), "--format", "json"])
    assert bad.exit_code == 1
    doc = json.loads(bad.output)
    assert [(i["rule"], i["line"], i["jsonPath"]) for i in doc["issues"]] == [
        ("kernel-matches-precompiled", line_of(H100, "kernelVersion"), "$.driver.kernelVersion")
    ]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["tests/nodestate"],
            f"check one profile against its cluster; {len(list(HERE.glob('*.yaml')))} were given",
        ),
        ([str(H100), "--kubectl", "--state", str(STATE)], "not both"),
    ],
)
def test_cli_usage_errors(args: list[str], says: str) -> None:
    found = CliRunner().invoke(
        main, ["validate", *args] + ([] if "--state" in args else ["--state", str(STATE)])
    )
    assert found.exit_code == 2 and says in found.output, found.output


def test_cli_bad_state_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "state.json"
    bad.write_text('{"kind": "Node"}')
    found = CliRunner().invoke(main, ["validate", str(H100), "--state", str(bad)])
    assert found.exit_code == 1 and "not a kubectl List" in found.output
    assert len(found.output.strip().splitlines()) == 1


def test_kubectl_is_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--kubectl runs exactly doctor's `kubectl get nodes,pods,daemonsets,events -A -o json`."""
    log = tmp_path / "args"
    fake = tmp_path / "kubectl"
    fake.write_text(f'#!/bin/sh\necho "$@" > {log}\ncat {STATE}\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    found = CliRunner().invoke(main, ["validate", str(H100), "--kubectl", "--context", "prod"])
    assert found.exit_code == 0, found.output
    assert log.read_text().split() == [
        "--context", "prod", "get", "nodes,pods,daemonsets,events", "-A", "-o", "json"
    ]  # fmt: skip


REPO = Path(__file__).parents[2]


def test_node_rules_reference_is_current() -> None:
    text = (REPO / reference.REFERENCE_FILE).read_text(encoding="utf-8")
    assert text == reference.render_reference(), (
        "docs/node-rules.md is stale; run: python -m gpustack.nodestate.reference"
    )
    for rule in NODE_RULES:
        assert f"| `{rule.id}` |" in text


@pytest.mark.parametrize(("root", "code"), [("repo", 0), ("empty", 1)])
def test_node_rules_reference_check_fails_when_stale(tmp_path: Path, root: str, code: int) -> None:
    """Run from another folder, ``--check`` reads the repository's page; under an empty
    ``--root`` the page is missing, so stale."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpustack.nodestate.reference",
            "--check",
            *(["--root", str(tmp_path)] if root == "empty" else []),
        ],
        cwd=elsewhere,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == code, proc.stderr
    assert ("stale" in proc.stderr) == bool(code)


@pytest.mark.parametrize(
    ("image", "says"),
    [
        ("Container-Optimized OS from Google", "only GKE's installer puts a driver"),
        ("Bottlerocket OS 1.42.0 (aws-k8s-1.33-nvidia)", "ship the driver in the image"),
    ],
)
def test_node_images_that_bring_their_own_driver(image: str, says: str) -> None:
    """Before GPU feature discovery runs, the node image alone tells of a host driver."""
    doc = changed([(GPU_A, "info", "osImage", image)])
    for item in doc["items"]:
        if item["kind"] == "Node":
            labels = item["metadata"]["labels"]
            for key in [k for k in labels if k.startswith(("nvidia.com/cuda", OS))]:
                del labels[key]
    found = [i for i in issues(H100, doc) if i.rule == "host-driver-absent"]
    assert len(found) == 1 and says in found[0].message and A in found[0].message


@pytest.mark.parametrize(("count", "found"), [("16", []), ("15", ["gpu-count-matches-nodes"])])
def test_single_mig_strategy_counts_mig_devices(count: str, found: list[str]) -> None:
    """Under the single strategy GFD counts MIG devices: 8 GPUs x 2 x 3g.40gb = 16."""
    product = "NVIDIA-H100-80GB-HBM3-MIG-3g.40gb"
    doc = changed(
        [(node, "label", key, value) for node in (GPU_A, GPU_B)
         for key, value in (("nvidia.com/gpu.product", product), ("nvidia.com/gpu.count", "16"))]
        + [(GPU_A, "label", "nvidia.com/gpu.count", count)]
    )  # fmt: skip
    assert [i.rule for i in issues(MIG, doc)] == found
