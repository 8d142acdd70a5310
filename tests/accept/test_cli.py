"""``gpustack accept manifests`` and ``gpustack accept report`` as a user runs them."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gpustack.cli import main
from tests.k8s_schema import assert_valid

STATE = Path("tests/nodestate/fixtures/eks-h100.json")
PROFILE = Path("tests/nodestate/h100-eks.yaml")


def result_line(check: str, node: str, ok: bool, **data: object) -> str:
    body = {
        "check": check,
        "node": node,
        "pod": f"{check}-{node}",
        "ok": ok,
        "problems": [],
        **data,
    }
    return f"[pod/x/c] GPUSTACK-ACCEPT {json.dumps(body)}"


NCCL = {"threshold": 288.0, "backend": "nccl"}
GOOD = [
    result_line("devices", "ip-a", True, gpus=["NVIDIA H100 80GB HBM3"] * 8, expect={}),
    result_line("devices", "ip-b", True, gpus=["NVIDIA H100 80GB HBM3"] * 8, expect={}),
    result_line("allreduce-node", "ip-a", True, busbw=371.2, world=8, **NCCL),
    result_line("allreduce-node", "ip-b", True, busbw=369.9, world=8, **NCCL),
    result_line("allreduce-nodes", "ip-a", True, busbw=301.5, world=16, **NCCL),
]  # fmt: skip


A, B = "ip-10-0-2-41.ec2.internal", "ip-10-0-2-58.ec2.internal"  # the state's GPU nodes
# Job -> (the check its pods print, the hostname it is pinned to, pods); the gang is not pinned
# pod by pod but limited to exactly the named nodes.
PINNED = {
    "gpustack-accept-devices-0": ("devices", A, 1),
    "gpustack-accept-devices-1": ("devices", B, 1),
    "gpustack-accept-allreduce-0": ("allreduce-node", A, 1),
    "gpustack-accept-allreduce-1": ("allreduce-node", B, 1),
    "gpustack-accept-allreduce-nodes": ("allreduce-nodes", None, 2),
}


def test_manifests_pin_each_check_to_each_node_in_a_state() -> None:
    done = CliRunner().invoke(main, ["accept", "manifests", str(PROFILE), "--state", str(STATE)])
    assert done.exit_code == 0, done.output
    assert "note:" not in done.output  # the nodes are named: nothing to apply one at a time
    docs = list(yaml.safe_load_all(done.stdout))
    assert_valid(docs, "1.33")
    found = {}
    for d in docs:
        if d["kind"] != "Job":
            continue
        pod = d["spec"]["template"]["spec"]
        labels = d["spec"]["template"]["metadata"]["labels"]
        pinned = pod["nodeSelector"].get("kubernetes.io/hostname")
        found[d["metadata"]["name"]] = (labels["gpustack.dev/accept-check"], pinned,
                                        d["spec"]["completions"])  # fmt: skip
        if pinned:
            assert d["metadata"]["annotations"]["gpustack.dev/accept-node"] == pinned
            assert "podAntiAffinity" not in pod.get("affinity", {})
        else:
            (term,) = pod["affinity"]["nodeAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"
            ]["nodeSelectorTerms"]
            assert term["matchExpressions"] == [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [A, B]}
            ]
    assert found == PINNED


def test_manifests_without_a_state_say_how_to_apply_them() -> None:
    done = CliRunner().invoke(main, ["accept", "manifests", str(PROFILE), "--nodes", "2"])
    assert done.exit_code == 0, done.output
    assert "note: without --state the Jobs cannot be pinned" in done.stderr
    assert "note:" not in done.stdout
    jobs = [d for d in yaml.safe_load_all(done.stdout) if d["kind"] == "Job"]
    assert all("kubernetes.io/hostname" not in j["spec"]["template"]["spec"]["nodeSelector"]
               for j in jobs)  # fmt: skip


@pytest.mark.parametrize(
    ("lines", "fmt", "code", "says"),
    [
        (GOOD, "text", 0, "5 checks passed"),
        (GOOD[:-1], "text", 1, "FAIL allreduce-nodes run: 1 of 1 result(s) missing"),
        ([*GOOD[:2], result_line("allreduce-node", "ip-a", False, problems=["bus bandwidth 120.00"
          " GB/s is below 288.00 GB/s"]), *GOOD[3:]], "text", 1,
         "FAIL allreduce-node ip-a/allreduce-node-ip-a: bus bandwidth 120.00 GB/s is below"),
        (GOOD, "json", 0, '"ok": true'),
        (GOOD[:-1], "junit", 1, 'failures="1"'),
    ],
)  # fmt: skip
def test_report_formats_and_exit_codes(
    tmp_path: Path, lines: list[str], fmt: str, code: int, says: str
) -> None:
    logs = tmp_path / "accept.log"
    logs.write_text("\n".join(lines) + "\n")
    args = ["accept", "report", str(PROFILE), str(logs), "--nodes", "2", "--format", fmt]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == code, done.output
    assert says in done.output
    if fmt == "junit":
        root = ET.fromstring(done.output.split("\n", 1)[1])
        assert root.tag == "testsuites" and root.get("tests") == "5"


NAMED = [result_line("devices", A, True, gpus=["NVIDIA H100 80GB HBM3"] * 8, expect={}),
         result_line("devices", B, True, gpus=["NVIDIA H100 80GB HBM3"] * 8, expect={}),
         result_line("allreduce-node", A, True, busbw=371.2, world=8, **NCCL),
         result_line("allreduce-node", B, True, busbw=369.9, world=8, **NCCL),
         result_line("allreduce-nodes", A, True, busbw=301.5, world=16, **NCCL)]  # fmt: skip


@pytest.mark.parametrize(
    ("lines", "count", "code", "says"),
    [
        # the bug a one-step apply of unpinned Jobs can have: one node twice, another never
        ([GOOD[0], GOOD[0], *GOOD[2:]], ["--nodes", "2"], 1,
         "FAIL devices ip-a: 2 results where one pod prints 1: checked more than once"),
        (NAMED, ["--state", str(STATE)], 0, "5 checks passed"),
        ([NAMED[0], *NAMED[2:]], ["--state", str(STATE)], 1,
         f"FAIL devices {B}: no result from this node"),
        ([*NAMED[:3], *NAMED[4:]], ["--state", str(STATE)], 1,
         f"FAIL allreduce-node {B}: no result from this node"),
        ([NAMED[0], NAMED[0], *NAMED[2:]], ["--state", str(STATE)], 1,
         f"FAIL devices {A}: 2 results where one pod prints 1"),
    ],
)  # fmt: skip
def test_report_names_each_node_once(
    tmp_path: Path, lines: list[str], count: list[str], code: int, says: str
) -> None:
    logs = tmp_path / "accept.log"
    logs.write_text("\n".join(lines) + "\n")
    done = CliRunner().invoke(main, ["accept", "report", str(PROFILE), str(logs), *count])
    assert done.exit_code == code, done.output
    assert says in done.output
    if code:
        assert "run:" not in done.output or "--nodes" in count  # named nodes, not a count
    node = says.split(": ", 1)[0].rsplit(" ", 1)[1] if code else A
    for fmt in ("json", "junit"):  # every format names the node
        args = ["accept", "report", str(PROFILE), str(logs), *count, "--format", fmt]
        found = CliRunner().invoke(main, args)
        assert found.exit_code == code and node in found.stdout, found.output
    if code:
        doc = json.loads(CliRunner().invoke(main, [*args[:-1], "json"]).stdout)
        assert {"check": says.split()[1], "subject": node, "ok": False}.items() <= next(
            r for r in doc["results"] if not r["ok"]
        ).items()


def test_min_busbw_overrides_the_catalog() -> None:
    args = ["accept", "manifests", str(PROFILE), "--nodes", "1", "--min-busbw", "100"]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0 and "--min-busbw=100.0" in done.output


def test_a_state_without_the_profiles_nodes_is_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "state.json"
    empty.write_text('{"kind": "List", "items": []}')
    done = CliRunner().invoke(main, ["accept", "manifests", str(PROFILE), "--state", str(empty)])
    assert done.exit_code == 1 and "no node the profile's nodeSelector picks" in done.output


@pytest.mark.parametrize("command", ["manifests", "report"])
def test_a_cluster_without_the_device_plugin_is_refused_in_one_line(
    tmp_path: Path, command: str
) -> None:
    """The run's Jobs request device plugin resources: where the plugin is off (DRA hands out
    every GPU, as in profiles/a100-dra-mig.yaml) they could never be placed, so the run is
    refused instead of written (the e2e tier saw them stay Pending)."""
    profile = Path("profiles/a100-dra-mig.yaml")
    logs = tmp_path / "logs.txt"
    logs.write_text("")
    args = ["accept", command, str(profile), "--nodes", "1"]
    done = CliRunner().invoke(main, [*args, str(logs)] if command == "report" else args)
    assert done.exit_code == 1, done.output
    (line,) = done.output.strip().splitlines()
    assert "devicePlugin.enabled is false" in line and "a100-dra-mig.yaml" in line
