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


def test_manifests_count_the_nodes_in_a_state() -> None:
    done = CliRunner().invoke(main, ["accept", "manifests", str(PROFILE), "--state", str(STATE)])
    assert done.exit_code == 0, done.output
    docs = list(yaml.safe_load_all(done.output))
    assert_valid(docs, "1.33")
    jobs = {d["metadata"]["name"]: d["spec"]["completions"] for d in docs if d["kind"] == "Job"}
    assert jobs == {
        "gpustack-accept-devices": 2,
        "gpustack-accept-allreduce": 2,
        "gpustack-accept-allreduce-nodes": 2,
    }


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


def test_min_busbw_overrides_the_catalog() -> None:
    args = ["accept", "manifests", str(PROFILE), "--nodes", "1", "--min-busbw", "100"]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0 and "--min-busbw=100.0" in done.output


def test_a_state_without_the_profiles_nodes_is_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "state.json"
    empty.write_text('{"kind": "List", "items": []}')
    done = CliRunner().invoke(main, ["accept", "manifests", str(PROFILE), "--state", str(empty)])
    assert done.exit_code == 1 and "no node the profile's nodeSelector picks" in done.output
