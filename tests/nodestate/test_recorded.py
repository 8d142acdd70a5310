"""``gpustack validate --state`` on node states recorded from a real control plane
(tests/e2e/record_nodestate.py; the cases in recorded_cases.py): every example profile gives no
finding on the cluster it describes, and each drift recorded there is exactly one finding of the
expected rule at the line of the profile field it contradicts, naming the node and its value.

These read the recorded files only; re-recording needs the e2e tier's binaries::

    KUBEBUILDER_ASSETS=/work/kubebuilder-assets .venv/bin/python -m tests.e2e.record_nodestate
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gpustack.checker import Issue, check_paths
from gpustack.cli import main
from gpustack.kube import state
from gpustack.nodestate.validate import check_against
from tests.nodestate.recorded_cases import CASES, MATCHING, RECORDED, Case, matching_file, read

REPO = Path(__file__).parents[2]
PROFILES = REPO / "profiles"


def issues(profile: str, recorded: Path) -> list[Issue]:
    result = check_paths([PROFILES / f"{profile}.yaml"])
    assert result.ok, result.issues
    return list(check_against(result, state.load(read(recorded), str(recorded))).issues)


def _value_line(path: Path, keys: list[str]) -> tuple[int, int] | None:
    """(line, how many of ``keys`` were found) of the deepest of ``keys`` written in ``path``,
    read with PyYAML's own node positions (independent of gpustack's loader): the value's first
    line (a block mapping's is its first key's line)."""
    node = yaml.compose(path.read_text())
    depth, line = 0, None
    for key in keys:
        found = next(
            (v for k, v in getattr(node, "value", []) if getattr(k, "value", None) == key), None
        )
        if found is None:
            break
        node, depth, line = found, depth + 1, found.start_mark.line + 1
    return None if line is None else (line, depth)


def located(profile: str, key: str) -> tuple[Path, int]:
    """Where a finding at ``key`` belongs: the file (the profile, or the base it ``extends``)
    that writes the most of the key's path, and the line of its deepest written part."""
    path = PROFILES / f"{profile}.yaml"
    keys = key.split(".")
    best = (path, *(_value_line(path, keys) or (0, 0)))
    base = yaml.safe_load(path.read_text()).get("extends")
    if base:
        found = _value_line(path.parent / base, keys)
        if found and found[1] > best[2]:
            best = (path.parent / base, *found)
    return best[0].resolve(), best[1]


def test_every_case_and_profile_was_recorded() -> None:
    """The recorder wrote every state the tables name, and nothing else."""
    want = {matching_file(p).name for p in MATCHING} | {c.file.name for c in CASES}
    assert {p.name for p in RECORDED.glob("*.json.gz")} == want


def test_cases_change_clusters_that_were_recorded_matching() -> None:
    assert {c.profile for c in CASES} <= set(MATCHING)
    assert len({c.file for c in CASES}) == len(CASES)


@pytest.mark.parametrize("profile", MATCHING)
def test_the_cluster_a_profile_describes_gives_no_finding(profile: str) -> None:
    assert issues(profile, matching_file(profile)) == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.profile}--{c.name}")
def test_one_recorded_drift_is_one_finding_at_its_line(case: Case) -> None:
    found = issues(case.profile, case.file)
    file, line = located(case.profile, case.key)
    got = [(i.rule, Path(i.file).resolve(), i.line) for i in found]
    assert got == [(case.rule, file, line)], found
    assert case.says in found[0].message and found[0].hint, found[0]


def test_recorded_drift_fails_the_cli(tmp_path: Path) -> None:
    """What CI runs: `gpustack validate PROFILE --state FILE`, exit 1 on a recorded drift."""
    case = next(c for c in CASES if c.name == "kernel")
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(read(matching_file(case.profile)))
    bad.write_text(read(case.file))
    profile = str(PROFILES / f"{case.profile}.yaml")
    ok = CliRunner().invoke(main, ["validate", profile, "--state", str(good)])
    assert ok.exit_code == 0, ok.output
    drifted = CliRunner().invoke(main, ["validate", profile, "--state", str(bad)])
    assert drifted.exit_code == 1 and f"(rule: {case.rule})" in drifted.output, drifted.output
