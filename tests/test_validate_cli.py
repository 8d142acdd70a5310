"""``gpustack validate``: exit codes, output formats, colour, and no cdk8s/Node on this path."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpustack.cli import main

REPO = Path(__file__).parents[1]
CASES = REPO / "tests" / "profile" / "cases"
GOOD = "apiVersion: gpustack.dev/v1alpha1\nkind: Profile\nmetadata:\n  name: {name}\n"
BAD = GOOD + "driver:\n  verison: '580.105.08'\n"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository layout with profiles/: two valid profiles and a base."""
    profiles = tmp_path / "profiles"
    (profiles / "_bases").mkdir(parents=True)
    (profiles / "_bases" / "b.yaml").write_text("driver:\n  version: '580.105.08'\n")
    (profiles / "a.yaml").write_text(GOOD.format(name="a"))
    (profiles / "b.yaml").write_text("extends: _bases/b.yaml\n" + GOOD.format(name="b"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["validate", *args], catch_exceptions=False)
    return result.exit_code, result.output


def test_default_path_is_profiles(tree: Path) -> None:
    assert run() == (0, "2 profiles valid\n")


def test_invalid_profile_exits_1_with_one_line_per_error(tree: Path) -> None:
    (tree / "profiles" / "c.yaml").write_text(BAD.format(name="c"))
    code, out = run()
    assert code == 1
    assert out.splitlines() == [
        "profiles/c.yaml:6:3: $.driver.verison: unknown key 'verison' (did you mean 'version'?)"
        " (rule: schema)",
        "1 error in 1 of 3 profiles",
    ]


def test_explicit_files_and_folders(tree: Path) -> None:
    (tree / "other.yaml").write_text(GOOD.format(name="other"))
    assert run("other.yaml", "profiles") == (0, "3 profiles valid\n")
    # a file named again inside a folder given is checked once, not reported as a twin
    assert run("profiles", "profiles/a.yaml", "./profiles/b.yaml") == (0, "2 profiles valid\n")


@pytest.mark.parametrize(
    "args,message",
    [
        (["missing.yaml"], "does not exist"),
        (["--format", "xml"], "Invalid value for '--format'"),
        (["empty"], "no *.yaml profiles found in empty"),
    ],
)
def test_usage_errors_exit_2(tree: Path, args: list[str], message: str) -> None:
    (tree / "empty").mkdir()
    result = CliRunner().invoke(main, ["validate", *args])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_no_profiles_folder_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["validate"])
    assert result.exit_code == 2
    assert "no profiles/ folder" in result.output


def test_json_format(tree: Path) -> None:
    (tree / "profiles" / "c.yaml").write_text(BAD.format(name="c"))
    code, out = run("--format", "json")
    assert code == 1
    doc = json.loads(out)
    assert doc["ok"] is False
    assert (doc["filesChecked"], doc["filesFailed"]) == (3, 1)
    assert doc["issues"] == [
        {
            "file": "profiles/c.yaml",
            "line": 6,
            "col": 3,
            "jsonPath": "$.driver.verison",
            "message": "unknown key 'verison'",
            "hint": "did you mean 'version'?",
            "rule": "schema",
        }
    ]
    assert doc["accepted"] == []
    assert [p["name"] for p in doc["profiles"]] == ["a", "b"]
    # valid profiles are named the way issues name files, whatever the path looked like
    code, out = run("--format", "json", "profiles/../profiles")
    doc = json.loads(out)
    assert [p["file"] for p in doc["profiles"]] == ["profiles/a.yaml", "profiles/b.yaml"]
    assert doc["issues"][0]["file"] == "profiles/c.yaml"


def test_github_format(tree: Path) -> None:
    (tree / "profiles" / "c.yaml").write_text(BAD.format(name="c"))
    code, out = run("--format", "github")
    assert code == 1
    assert out.splitlines() == [
        "::error file=profiles/c.yaml,line=6,col=3,title=gpustack validate (schema)::"
        "$.driver.verison: unknown key 'verison' (did you mean 'version'?)",
        "1 error in 1 of 3 profiles",
    ]
    assert run("--format", "github", "profiles/a.yaml") == (0, "1 profile valid\n")


def test_all_invalid_cases_exit_1_and_valid_cases_exit_0(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CASES)
    code, out = run("valid")
    assert code == 0, out
    code, out = run("invalid")
    assert code == 1
    expected = sum(len(p.read_text().splitlines()) for p in (CASES / "invalid").glob("*.expected"))
    # the cases on a release past its end of life also get a notice each, which .expected omits
    issues = [line for line in out.splitlines() if ": notice: " not in line]
    assert len(issues) == expected + 1  # deduplicated issues, then the summary


def _on_a_terminal(args: list[str], env: dict[str, str], cwd: Path) -> str:
    """Run the real CLI with stdout on a pseudo-terminal, where colour is allowed."""
    primary, secondary = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-c", "from gpustack.cli import main; main()", *args],
        stdout=secondary,
        stderr=subprocess.STDOUT,
        cwd=cwd,
        env=env,
    ) as proc:
        os.close(secondary)
        chunks = []
        while True:
            try:
                chunk = os.read(primary, 4096)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=60)
    os.close(primary)
    return b"".join(chunks).decode()


def test_colour_on_terminals_unless_no_color_or_dumb(tree: Path) -> None:
    (tree / "profiles" / "c.yaml").write_text(BAD.format(name="c"))
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["PYTHONPATH"] = str(REPO)
    env["TERM"] = "xterm-256color"
    assert "\x1b[" in _on_a_terminal(["validate"], env, tree)
    for plain_env in ({"NO_COLOR": "1"}, {"TERM": "dumb"}):
        plain = _on_a_terminal(["validate"], {**env, **plain_env}, tree)
        assert "\x1b[" not in plain, plain_env
        assert "profiles/c.yaml:6:3: $.driver.verison" in plain


PROBE = """
import sys
from gpustack.cli import main
try:
    main(["validate", *sys.argv[1:]])
except SystemExit as exit:
    code = exit.code
roots = {"cdk8s", "jsii", "constructs"}
heavy = sorted(m for m in sys.modules if m.split(".")[0] in roots)
print("EXIT", code, "HEAVY", heavy)
"""


@pytest.mark.parametrize("case,code", [("valid", 0), ("invalid", 1)])
def test_validate_never_imports_cdk8s_or_starts_node(case: str, code: int) -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(CASES / case)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        timeout=120,
    ).stdout
    assert out.splitlines()[-1] == f"EXIT {code} HEAVY []"


def test_installed_entry_point_matches() -> None:
    exe = shutil.which("gpustack", path=str(Path(sys.executable).parent))
    assert exe is not None, "the gpustack console script is not installed in this environment"
    proc = subprocess.run(
        [exe, "validate", "profiles"], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the example profiles on a release past its end of life print notices, and stay valid
    assert re.search(r"\d+ profiles valid \(\d+ notices\)\n$", proc.stdout), proc.stdout
