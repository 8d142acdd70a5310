"""Data-driven profile cases: every valid case loads cleanly, every invalid one fails exactly.

``cases/invalid/<case>.yaml`` sits next to ``<case>.expected``, which holds the exact error
lines ``gpustack validate`` prints for it (paths relative to ``cases/``, so the suite does not
depend on where the repository lives). Folders starting with ``_`` hold bases for ``extends``.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from gpustack.checker import check_paths
from gpustack.profile import rules
from gpustack.scan import discover

CASES = Path(__file__).parent / "cases"
VALID = sorted(p.name for p in discover([CASES / "valid"]))
INVALID = sorted(p.stem for p in (CASES / "invalid").glob("*.yaml"))
#: The day the cases are checked on (end-of-life findings are dated): fixed, not the clock's.
TODAY = date(2026, 12, 6)


@pytest.fixture
def in_cases(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(CASES)
    return CASES


@pytest.mark.parametrize("name", VALID)
def test_valid_case_has_no_issues(in_cases: Path, name: str) -> None:
    result = check_paths([Path("valid") / name], today=TODAY)
    assert [str(i) for i in result.issues] == []
    assert [p.profile.name for p in result.profiles] == [Path(name).stem]


@pytest.mark.parametrize("case", INVALID)
def test_invalid_case_reports_expected_lines(in_cases: Path, case: str) -> None:
    expected = (CASES / "invalid" / f"{case}.expected").read_text(encoding="utf-8").splitlines()
    result = check_paths([Path("invalid") / f"{case}.yaml"], today=TODAY)
    assert [str(i) for i in result.issues] == expected
    assert not result.ok
    assert result.profiles == ()
    assert (result.files_checked, result.files_failed) == (1, 1)


def test_every_invalid_case_has_expectations() -> None:
    stems = {p.stem for p in (CASES / "invalid").glob("*.expected")}
    assert stems == set(INVALID)
    for stem in stems:
        assert (CASES / "invalid" / f"{stem}.expected").read_text(encoding="utf-8").strip()


def test_valid_cases_present() -> None:
    assert len(VALID) >= 5


def test_repository_profiles_are_valid() -> None:
    root = Path(__file__).parents[2] / "profiles"
    result = check_paths([root])
    assert [str(i) for i in result.issues] == []
    names = {p.profile.name for p in result.profiles}
    assert {"lab-1gpu", "a100-mig-mixed", "l4-inference-timeslicing", "k3s-edge"} <= names
    assert {"h100-prod-east", "h100-staging", "gpu-sim-ci", "a10-mps-inference"} <= names
    assert result.files_checked == len(names)


def test_repository_profiles_carry_the_schema_modeline() -> None:
    repo = Path(__file__).parents[2]
    files = sorted((repo / "profiles").rglob("*.yaml"))
    assert any(f.parent.name.startswith("_") for f in files)
    for file in files:
        # bases (in `_` folders) are partial profiles: their schema requires nothing
        base = any(part.startswith("_") for part in file.relative_to(repo / "profiles").parts)
        name = "profile-base.schema.json" if base else "profile.schema.json"
        first = file.read_text(encoding="utf-8").splitlines()[0]
        prefix = "# yaml-language-server: $schema="
        assert first.startswith(prefix), file
        target = (file.parent / first[len(prefix) :]).resolve()
        assert target == (repo / "schemas" / name).resolve(), file


def test_the_same_name_in_two_profiles_fails_the_second(tmp_path: Path) -> None:
    body = "apiVersion: gpustack.dev/v1alpha1\nkind: Profile\nmetadata:\n  name: twin\n"
    (tmp_path / "a.yaml").write_text(body, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(body, encoding="utf-8")
    result = check_paths([tmp_path])
    assert [(Path(i.file).name, i.line, i.json_path) for i in result.issues] == [
        ("b.yaml", 4, "$.metadata.name")
    ]
    assert "also used by" in result.issues[0].message
    assert result.issues[0].rule == "profile-names-unique"
    assert [p.path.name for p in result.profiles] == ["a.yaml"]
    assert (result.files_checked, result.files_failed) == (2, 1)


def test_an_error_in_a_shared_base_is_reported_once(tmp_path: Path) -> None:
    (tmp_path / "_bases").mkdir()
    (tmp_path / "_bases" / "b.yaml").write_text("driver:\n  verison: x\n", encoding="utf-8")
    for name in ("one", "two"):
        (tmp_path / f"{name}.yaml").write_text(
            "extends: _bases/b.yaml\napiVersion: gpustack.dev/v1alpha1\nkind: Profile\n"
            f"metadata:\n  name: {name}\n",
            encoding="utf-8",
        )
    result = check_paths([tmp_path])
    assert len(result.issues) == 1
    assert result.issues[0].file.endswith("_bases/b.yaml")
    assert (result.files_checked, result.files_failed) == (2, 2)


def test_a_rule_broken_only_with_a_base_names_the_profile(tmp_path: Path) -> None:
    (tmp_path / "_bases").mkdir()
    (tmp_path / "_bases" / "b.yaml").write_text(
        "driver:\n  kernelModuleType: proprietary\n", encoding="utf-8"
    )
    for name, product in (("hopper", "H100-SXM5-80GB"), ("blackwell", "B200-SXM-180GB")):
        (tmp_path / f"{name}.yaml").write_text(
            "extends: _bases/b.yaml\napiVersion: gpustack.dev/v1alpha1\nkind: Profile\n"
            f"metadata:\n  name: {name}\ngpus:\n  product: {product}\n",
            encoding="utf-8",
        )
    result = check_paths([tmp_path])
    assert [(Path(i.file).name, i.line) for i in result.issues] == [("b.yaml", 2)]
    assert result.issues[0].message.endswith(f"[in profile {tmp_path / 'blackwell.yaml'}]")
    assert [p.profile.name for p in result.profiles] == ["hopper"]


def test_expected_files_name_registered_rules_and_cover_every_rule() -> None:
    named = {
        m.group(1)
        for p in (CASES / "invalid").glob("*.expected")
        for m in re.finditer(r" \(rule: ([a-z0-9-]+)\)$", p.read_text(encoding="utf-8"), re.M)
    }
    lines = [
        line
        for p in (CASES / "invalid").glob("*.expected")
        for line in p.read_text(encoding="utf-8").splitlines()
    ]
    assert all(re.search(r" \(rule: [a-z0-9-]+\)$", line) for line in lines)
    assert named <= {d.id for d in rules.ALL}
    # every rule shows up as gpustack validate prints it (accept and profile-names-unique need
    # more than one file; tests/profile/test_accept.py and the twin test above show those)
    assert named >= {r.id for r in rules.RULES} | {"load", "schema"}
