"""``gpustack lint``: every rule fails its failing case at the expected positions and passes its
passing case; positions hold across documents, stdin and the three formats work; the example
jobs gpustack synthesizes lint clean with their own profiles."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gpustack.checker import check_paths
from gpustack.cli import main
from gpustack.lint.check import LintResult, lint
from gpustack.lint.context import LintContext, from_profile, generic
from gpustack.lint.registry import BY_ID, RULES

HERE = Path(__file__).parent
REPO = HERE.parents[1]
CASES = HERE / "cases"
PROFILE = HERE / "profile.yaml"
EXPECT = re.compile(r"^# expect: (\d+):(\d+) ([a-z0-9-]+)$", re.MULTILINE)


def context(path: Path = PROFILE) -> LintContext:
    result = check_paths([path])
    assert result.ok, result.issues
    return from_profile(result.profiles[0].profile, str(path))


def found(result: LintResult) -> list[tuple[int, int, str | None]]:
    return [(i.line, i.col, i.rule) for i in result.issues]


def expected(path: Path) -> list[tuple[int, int, str]]:
    return [(int(a), int(b), r) for a, b, r in EXPECT.findall(path.read_text())]


def test_every_rule_has_a_failing_and_a_passing_case() -> None:
    assert sorted(p.name for p in CASES.iterdir()) == sorted(BY_ID)
    for rule in RULES:
        assert (CASES / rule.id / "fail.yaml").is_file()
        assert (CASES / rule.id / "pass.yaml").is_file()
        assert expected(CASES / rule.id / "fail.yaml"), rule.id


@pytest.mark.parametrize("rule", sorted(BY_ID))
def test_failing_case(rule: str) -> None:
    path = CASES / rule / "fail.yaml"
    result = lint([str(path)], context())
    assert found(result) == expected(path)
    assert {i.rule for i in result.issues} == {rule}
    for issue in result.issues:
        assert issue.file == str(path)
        assert issue.hint and issue.json_path.startswith("$.")


@pytest.mark.parametrize("rule", sorted(BY_ID))
def test_passing_case(rule: str) -> None:
    result = lint([str(CASES / rule / "pass.yaml")], context())
    assert result.issues == (), [str(i) for i in result.issues]
    assert result.pods > 0


@pytest.mark.parametrize("rule", sorted(BY_ID))
def test_without_a_profile_only_the_generic_rules_run(rule: str) -> None:
    path = CASES / rule / "fail.yaml"
    result = lint([str(path)], generic())
    if BY_ID[rule].needs_profile:
        assert {i.rule for i in result.issues} <= {"gpu-resource-known"} - {rule}
    else:
        assert {i.rule for i in result.issues} == {rule}


@pytest.mark.parametrize(
    ("asked", "nearest"),
    [
        ("nvidia.com/gpus", "nvidia.com/gpu"),
        ("nvidia/gpu", "nvidia.com/gpu"),
        ("nvidia.com/GPU", "nvidia.com/gpu"),
        ("nvidia.com/mig-1g.5gb", "nvidia.com/mig-1g.10gb"),
        ("nvidia.com/gpu-shared", "nvidia.com/gpu.shared"),
    ],
)
def test_the_fix_names_the_nearest_advertised_resource(asked: str, nearest: str) -> None:
    doc = POD.format(resource=asked)
    result = lint(["-"], context(), stdin=doc)
    assert [i.rule for i in result.issues] == ["gpu-resource-known"]
    hint = result.issues[0].hint or ""
    assert hint.startswith(f"did you mean {nearest}?")


POD = """\
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  tolerations: [{{key: nvidia.com/gpu, operator: Exists}}]
  containers:
    - name: c
      image: nvidia/cuda:12.4.1-base-ubuntu22.04
      resources:
        limits: {{{resource}: 1}}
"""


def test_positions_in_multi_document_helm_output_and_lists() -> None:
    """``helm template`` prints ``---`` and a ``# Source:`` comment per document; ``kubectl get
    -o yaml`` a List. A finding in a later document points at its own line."""
    text = (
        "---\n# Source: chart/templates/a.yaml\n"
        + POD.format(resource="nvidia.com/gpu")
        + "---\n# Source: chart/templates/b.yaml\n"
        + POD.format(resource="nvidia.com/gpus")
        + "---\napiVersion: v1\nkind: List\nitems:\n"
        + "".join(
            "  " + line + "\n" for line in POD.format(resource="nvidia/gpu").splitlines()
        ).replace("  apiVersion", "- apiVersion", 1)
    )
    result = lint(["-"], context(), stdin=text)
    lines = text.splitlines()
    assert [(i.rule, i.file) for i in result.issues] == [("gpu-resource-known", "<stdin>")] * 2
    first, second = result.issues
    assert "nvidia.com/gpus: 1" in lines[first.line - 1]
    assert lines[first.line - 1][first.col - 1 :].startswith("1}")
    assert first.line == 12 + 2 + 10
    assert "nvidia/gpu: 1" in lines[second.line - 1] and second.line > first.line
    assert second.json_path == "$.spec.containers[0].resources.limits['nvidia/gpu']"
    assert result.objects == 3


def test_not_yaml_is_one_load_finding(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: Pod\n  spec: [\n")
    result = lint([str(tmp_path)], generic())
    assert [(i.file, i.rule) for i in result.issues] == [(str(bad), "load")]


PUBLIC = [
    (11, "gpu-node-toleration"),
    (13, "dev-shm"),
    (14, "cuda-fits-driver"),
    (18, "gpu-requests-match-limits"),
    (33, "gpu-node-toleration"),
    (34, "dev-shm"),
    (40, "gpu-resource-known"),
    (46, "gpu-node-toleration"),
    (47, "dev-shm"),
]


def test_a_public_example_set_lints_with_the_expected_findings() -> None:
    result = lint([str(HERE / "public")], context())
    assert [(i.line, i.rule) for i in result.issues] == PUBLIC


# --- the command -------------------------------------------------------------------------------


def run(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["lint", *args], input=stdin)
    return result.exit_code, result.output


def test_cli_exit_codes_and_stdin() -> None:
    case = str(CASES / "gpu-count-whole")
    code, out = run(case, "--profile", str(PROFILE))
    assert code == 1 and "4 errors in 1 of 2 files" in out
    code, out = run(f"{case}/pass.yaml", "--profile", str(PROFILE))
    assert code == 0 and out.startswith("1 file clean")
    code, out = run("-", "--profile", str(PROFILE), stdin=POD.format(resource="nvidia/gpu"))
    assert code == 1 and out.startswith("<stdin>:10:30: ")
    assert run(case, "--disable", "gpu-count-whole")[0] == 0
    assert run(case, "--disable", "no-such-rule")[0] == 2
    assert run(str(CASES / "missing.yaml"))[0] == 2
    assert run()[0] == 2


def test_an_invalid_profile_exits_1_with_validate_report(tmp_path: Path) -> None:
    bad = tmp_path / "p.yaml"
    bad.write_text("apiVersion: gpustack.dev/v1alpha1\nkind: Profile\nmetadata: {name: X}\n")
    code, out = run(str(CASES), "--profile", str(bad))
    assert code == 1 and f"{bad}:3:" in out


def test_json_and_github_formats() -> None:
    path = CASES / "gpu-fits-node" / "fail.yaml"
    code, out = run(str(path), "--profile", str(PROFILE), "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False and doc["profile"] == str(PROFILE)
    assert [(i["line"], i["col"], i["rule"]) for i in doc["issues"]] == expected(path)
    code, out = run(str(path), "--profile", str(PROFILE), "--format", "github")
    first = out.splitlines()[0]
    assert first.startswith(
        f"::error file={path},line=43,col=42,title=gpustack lint (gpu-fits-node)"
    )


# --- what gpustack ships -----------------------------------------------------------------------


def _profiles() -> list[Path]:
    return sorted((REPO / "profiles").glob("*.yaml"))


@pytest.mark.parametrize("profile", _profiles(), ids=lambda p: p.stem)
def test_every_example_job_in_dist_passes_with_its_own_profile(profile: Path) -> None:
    ctx = context(profile)
    result = lint([str(REPO / "dist" / "clusters" / profile.stem)], ctx)
    assert result.ok, [str(i) for i in result.issues]
    assert result.pods > 0


def test_dist_lints_clean_without_a_profile() -> None:
    result = lint([str(REPO / "dist")], generic())
    assert result.ok, [str(i) for i in result.issues]


def test_docs_have_a_row_per_rule_with_a_failing_and_a_passing_example() -> None:
    section = (REPO / "docs" / "how-to" / "lint.md").read_text()
    rows = [r for r in section.splitlines() if r.startswith("| `")]
    ids = [r.split("`")[1] for r in rows]
    assert ids == [r.id for r in RULES]
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 4 and all(cells), row  # rule, catches, fails, passes


def test_pre_commit_hook_entry() -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "gpustack-lint")
    assert hook["entry"] == "gpustack lint"
    assert hook.get("pass_filenames", True) is True
    assert "yaml" in hook["types"]
    # what pre-commit runs: entry + args + the changed files
    code, _ = run(*hook.get("args", []), str(CASES / "dev-shm" / "fail.yaml"))
    assert code == 1
