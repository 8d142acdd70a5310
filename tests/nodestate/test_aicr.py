"""An AICR snapshot as node state (``fixtures/aicr-snapshot-h100.yaml``, AICR v0.11.1's format).

The snapshot is of one of the nodes ``eks-h100.json`` records, before gpustack's first sync, so
it matches the same profiles; each case changes one measurement as a different node would
report it and expects one finding of one rule at the profile line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from gpustack.checker import check_paths
from gpustack.cli import main
from gpustack.nodestate import aicr, facts
from gpustack.nodestate.source import SourceError, parse
from gpustack.nodestate.validate import check_against
from tests.nodestate.test_nodestate import H100, HOST, NV, A, line_of

SNAPSHOT = Path(__file__).parent / "fixtures" / "aicr-snapshot-h100.yaml"
SMI = {"driver": "570.172.08", "cuda-version": "12.8", "gpu-count": 8,
       "gpu.model": "NVIDIA H100 80GB HBM3", "gpu.product-architecture": "Hopper"}  # fmt: skip
A100 = {
    "driver": "580.105.08",
    "gpu.model": "NVIDIA A100-SXM4-80GB",
    "gpu.product-architecture": "Ampere",
}


def snapshot(changes: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(SNAPSHOT.read_text())
    for (kind, sub), data in changes.items():
        m = next(m for m in doc["measurements"] if m["type"] == kind)
        s = next(s for s in m["subtypes"] if s["subtype"] == sub)
        s["data"].update(data)
    return doc


def rules(profile: Path, doc: dict[str, Any]) -> list[tuple[str | None, int]]:
    result = check_paths([profile])
    found = check_against(result, parse(yaml.safe_dump(doc), "snapshot")).issues
    return [(i.rule, i.line) for i in found]


@pytest.mark.parametrize("profile", [H100, HOST], ids=lambda p: p.stem)
def test_the_recorded_snapshot_matches(profile: Path) -> None:
    assert rules(profile, snapshot({})) == []


CASES = [
    ("server", H100, {("K8s", "server"): {"version": "v1.34.1-eks-113cf36"}},
     "kubernetes-version-matches-nodes", "kubernetesVersion"),
    ("kernel", H100, {("K8s", "node"): {"kernel-version": "6.8.0-1040-aws"}},
     "kernel-matches-precompiled", "kernelVersion"),
    ("os", H100, {("OS", "release"): {"VERSION_ID": "22.04"}}, "os-matches-driver-image", "osTag"),
    ("runtime", H100, {("K8s", "node"): {"container-runtime-id": "containerd://1.7.27"}},
     "runtime-version-matches-nodes", "runtime.version"),
    ("host-driver", H100, {("GPU", "smi"): SMI}, "host-driver-absent", "enabled"),
    ("host-driver-version", HOST, {("GPU", "smi"): SMI}, "driver-version-matches-host", NV),
    ("product", HOST, {("GPU", "smi"): {**SMI, **A100}},
     "gpu-architecture-matches-nodes", "architecture"),
    ("count", HOST, {("GPU", "smi"): {**SMI, "driver": "580.105.08", "gpu-count": 4}},
     "gpu-count-matches-nodes", "perNode"),
    ("taint", H100, {("NodeTopology", "taint"): {"dedicated": f"NoSchedule|ml|{A}"}},
     "node-taints-declared", "nodeTaints"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("profile", "changes", "rule", "key"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_one_measurement_one_finding(
    profile: Path, changes: dict[tuple[str, str], dict[str, Any]], rule: str, key: str
) -> None:
    assert rules(profile, snapshot(changes)) == [(rule, line_of(profile, key))]


def test_the_snapshot_node_and_what_it_adds() -> None:
    node = parse(SNAPSHOT.read_text(), "snap").nodes[0]
    assert node["metadata"]["name"] == "ip-10-0-2-41.ec2.internal"
    assert facts.os_tag(node) == "ubuntu24.04"
    assert facts.gpu_count(node) is None  # nvidia-smi did not run: no driver yet
    assert facts.server_version(node) == "v1.33.5-eks-3025e55"
    assert facts.cloud(node) == "EKS"
    assert facts.taints(node) == [("nvidia.com/gpu", "", "NoSchedule")]
    with_driver = parse(yaml.safe_dump(snapshot({("GPU", "smi"): SMI})), "snap").nodes[0]
    assert facts.product(with_driver) == "H100-SXM5-80GB"
    assert facts.driver_version(with_driver) == "570.172.08"
    assert facts.architecture(with_driver) == "hopper"
    ada = {**SMI, "gpu.model": "NVIDIA L40S", "gpu.product-architecture": "Ada Lovelace"}
    assert (
        facts.architecture(parse(yaml.safe_dump(snapshot({("GPU", "smi"): ada})), "s").nodes[0])
        == "ada"
    )
    seen = snapshot({("GPU", "smi"): SMI, ("K8s", "image"): {"driver": "580.105.08-ubuntu24.04"}})
    assert rules(H100, seen) == []  # a driver container runs: the loaded driver may be it


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"apiVersion": "aicr.nvidia.com/v1beta1"}, "gpustack reads aicr.nvidia.com/v1alpha1"),
        ({"metadata": {"version": "v0.12.0", "source-node": "x"}}, "AICR v0.12.0"),
        ({"metadata": {}, "measurements": []}, "names no node"),
    ],
)
def test_other_formats_are_refused_in_one_line(change: dict[str, Any], says: str) -> None:
    doc = {**snapshot({}), **change}
    with pytest.raises(SourceError, match=says):
        parse(yaml.safe_dump(doc), "snap")
    assert aicr.is_snapshot(doc)


def test_cli_reads_a_snapshot(tmp_path: Path) -> None:
    ok = CliRunner().invoke(main, ["validate", str(H100), "--state", str(SNAPSHOT)])
    assert ok.exit_code == 0, ok.output
    drifted = tmp_path / "snap.yaml"
    drifted.write_text(yaml.safe_dump(snapshot({("GPU", "smi"): SMI})))
    bad = CliRunner().invoke(main, ["validate", str(H100), "--state", str(drifted)])
    assert bad.exit_code == 1 and "(rule: host-driver-absent)" in bad.output, bad.output


def test_topology_entries_as_aicr_encodes_them() -> None:
    """A key with several values or effects gets the value or effect appended to it."""
    labels = {
        "team.ml": "ml|n1,n2",
        "team.infra": "infra|n3",
        "zone": "us-east-1a|n1 (+2 more)",
        "gpu.deploy.driver": "false|n2",
    }
    assert aicr._topology(labels, "n1", taints=False) == [
        ("team", "ml", ""),
        ("zone", "us-east-1a", ""),
    ]
    taints = {"gpu.NoSchedule": "present|n1", "gpu.NoExecute": "|n1,n2", "other": "NoSchedule||n2"}
    assert aicr._topology(taints, "n1", taints=True) == [
        ("gpu", "present", "NoSchedule"),
        ("gpu", "", "NoExecute"),
    ]
