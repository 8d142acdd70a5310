"""The published pre-commit hook, run the way pre-commit runs it.

Reads ``.pre-commit-hooks.yaml`` itself, so the test exercises the exact ``entry``, ``args``,
``files`` and ``pass_filenames`` users get: in a temporary repository layout, the entry is run
as a subprocess from the repository root with the filenames pre-commit would append.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).parents[1]
HOOKS: list[dict[str, Any]] = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
HOOK = next(h for h in HOOKS if h["id"] == "gpustack-validate")
VALID = """\
# yaml-language-server: $schema=../schemas/profile.schema.json
apiVersion: gpustack.dev/v1alpha1
kind: Profile
extends: _bases/fleet.yaml
metadata:
  name: {name}
"""
BASE = "driver:\n  version: '{version}'\nworkloads:\n  examples:\n    - name: smoke\n"


def test_hook_definition() -> None:
    assert HOOK["entry"] == "gpustack validate"
    assert HOOK["language"] == "python"
    assert HOOK["pass_filenames"] is False  # overlays depend on bases: always check them all
    for key in ("id", "name", "entry", "language"):
        assert HOOK[key]


@pytest.mark.parametrize(
    "path,matches",
    [
        ("profiles/lab.yaml", True),
        ("profiles/_bases/fleet.yml", True),
        ("profiles/team/x.yaml", True),
        ("dist/clusters/lab/driver.yaml", False),
        ("profiles/README.md", False),
    ],
)
def test_hook_files_pattern(path: str, matches: bool) -> None:
    assert bool(re.search(HOOK["files"], path)) is matches


def _run_hook(
    repo: Path, changed: list[str], hook: dict[str, Any] = HOOK
) -> subprocess.CompletedProcess[str]:
    """What pre-commit does: entry + args (+ the changed files if pass_filenames)."""
    selected = [f for f in changed if re.search(hook.get("files", ""), f)]
    assert selected, "pre-commit would not run the hook for these files"
    argv = shlex.split(hook["entry"]) + list(hook.get("args", []))
    if hook.get("pass_filenames", True):
        argv += selected
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "profiles" / "_bases").mkdir(parents=True)
    (tmp_path / "profiles" / "east.yaml").write_text(VALID.format(name="east"))
    (tmp_path / "profiles" / "west.yaml").write_text(VALID.format(name="west"))
    return tmp_path


def test_hook_passes_on_valid_profiles(repo: Path) -> None:
    (repo / "profiles" / "_bases" / "fleet.yaml").write_text(BASE.format(version="580.105.08"))
    proc = _run_hook(repo, ["profiles/east.yaml"])
    assert (proc.returncode, proc.stdout) == (0, "2 profiles valid\n"), proc.stderr


def test_hook_fails_when_a_base_breaks_untouched_overlays(repo: Path) -> None:
    # Only the base changed, yet both overlays are checked: the reason for pass_filenames false.
    (repo / "profiles" / "_bases" / "fleet.yaml").write_text(BASE.format(version="520.61.05"))
    proc = _run_hook(repo, ["profiles/_bases/fleet.yaml"])
    assert proc.returncode == 1
    # the issue sits in the base (both overlays share it): reported once, naming both
    assert proc.stdout.splitlines() == [
        "profiles/_bases/fleet.yaml:5:7: $.workloads.examples[0].image: CUDA 12.4 needs driver "
        "525.60.13 or newer, but driver.version is 520.61.05 [in profiles profiles/east.yaml, "
        "profiles/west.yaml] (raise driver.version to at least "
        "525.60.13, ideally 550.54.14 for full CUDA 12.4 support, or use an image built for an "
        "older CUDA) (rule: workload-cuda-fits-driver)",
        "1 error in 2 of 2 profiles",
    ]


# --- gpustack-synth-check: dist/ must be what the profiles produce -------------------------------

SYNTH_HOOK = next(h for h in HOOKS if h["id"] == "gpustack-synth-check")


@pytest.mark.parametrize(
    "path,matches",
    [
        ("profiles/lab.yaml", True),
        ("profiles/_bases/fleet.yml", True),
        ("dist/clusters/lab/driver/daemonset-x.yaml", True),
        ("dist/.gpustack/index.json", True),
        ("README.md", False),
    ],
)
def test_synth_hook_files_pattern(path: str, matches: bool) -> None:
    assert bool(re.search(SYNTH_HOOK["files"], path)) is matches
    assert SYNTH_HOOK["pass_filenames"] is False and SYNTH_HOOK["language"] == "python"


def test_synth_hook_fails_on_a_stale_dist_and_passes_once_synthesized(repo: Path) -> None:
    (repo / "profiles" / "_bases" / "fleet.yaml").write_text(BASE.format(version="580.105.08"))
    stale = _run_hook(repo, ["profiles/east.yaml"], SYNTH_HOOK)
    assert stale.returncode == 3  # out of date (STALE), not invalid input
    assert "missing: dist/clusters/east/kustomization.yaml" in stale.stdout, stale.stdout
    assert not (repo / "dist").exists()  # --check writes nothing
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["gpustack", "synth"], cwd=repo, env=env, check=True, capture_output=True)
    fresh = _run_hook(repo, ["dist/clusters/east/kustomization.yaml"], SYNTH_HOOK)
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    # a profile change after synth makes the hook fail again
    (repo / "profiles" / "_bases" / "fleet.yaml").write_text(BASE.format(version="580.95.05"))
    again = _run_hook(repo, ["profiles/_bases/fleet.yaml"], SYNTH_HOOK)
    assert again.returncode == 3, again.stdout
    assert (
        "differs: dist/clusters/east/driver/daemonset-nvidia-driver-daemonset.yaml" in again.stdout
    )


def test_synth_hook_trusts_the_last_commit_not_the_staged_index(repo: Path) -> None:
    """A commit that edits a manifest and its digest in the index fails the hook: it checks
    against the index of HEAD, which the staged change cannot rewrite."""
    (repo / "profiles" / "_bases" / "fleet.yaml").write_text(BASE.format(version="580.105.08"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["gpustack", "synth"], cwd=repo, env=env, check=True, capture_output=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "fleet"], cwd=repo, check=True)
    kustomization = repo / "dist" / "clusters" / "east" / "kustomization.yaml"
    text = kustomization.read_text() + "# hand edit\n"
    kustomization.write_text(text)
    index = repo / "dist" / ".gpustack" / "index.json"
    digest = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    doc = json.loads(index.read_text())
    doc["clusters"]["east"]["files"]["kustomization.yaml"] = digest
    index.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    caught = _run_hook(repo, ["dist/clusters/east/kustomization.yaml"], SYNTH_HOOK)
    assert caught.returncode == 3, caught.stdout + caught.stderr
    assert "dist/clusters/east/kustomization.yaml" in caught.stdout


# --- the documented snippet, run by pre-commit itself on a fresh repository ----------------------


def _documented_config(head: str) -> str:
    """The docs' pre-commit snippet with only ``repo`` (this checkout) and ``rev`` (its HEAD
    commit) substituted, so the hooks pre-commit installs are the ones this commit publishes."""
    from tests.test_readme_install import precommit_snippet

    text, _ = precommit_snippet()
    text, repos = re.subn(r"^(\s*- repo: ).*$", rf"\g<1>{REPO.resolve()}", text, flags=re.M)
    text, revs = re.subn(r"^(\s*rev: ).*$", rf"\g<1>{head}", text, flags=re.M)
    assert (repos, revs) == (1, 1), "the snippet names one repository and one rev"
    return text


@pytest.mark.install
def test_the_documented_snippet_runs_green_on_a_fresh_repository(tmp_path: Path) -> None:
    """pre-commit clones this checkout at HEAD, pip installs the hooks with their dependencies
    (about a minute) and runs them on a repository made as the getting-started page says."""
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                          text=True)  # fmt: skip
    if head.returncode != 0:
        pytest.skip("not a git checkout: there is no commit for pre-commit to fetch")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
    }
    repo = tmp_path / "fleet"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]

    def run(*argv: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True,
                              timeout=timeout)  # fmt: skip
        assert done.returncode == 0, f"{argv}: {done.returncode}\n{done.stdout}{done.stderr}"
        return done

    run("git", "init", "-q")
    run("gpustack", "init", "gpu-east", "--product", "H100-SXM5-80GB", "--gpus-per-node", "8")
    run("gpustack", "synth")
    (repo / ".pre-commit-config.yaml").write_text(_documented_config(head.stdout.strip()))
    run(*git, "add", "-A")
    run(*git, "commit", "-qm", "fleet")
    done = run("pre-commit", "run", "--all-files", timeout=1200)
    for hook in ("gpustack validate", "gpustack synth --check", "gpustack lint"):
        assert re.search(rf"^{re.escape(hook)}\.+Passed$", done.stdout, re.M), done.stdout


@pytest.mark.parametrize(
    "path,linted",
    [("k8s/train.yaml", True), ("profiles/east.yaml", True), ("dist/clusters/a/x.yaml", False)],
)
def test_lint_hook_leaves_dist_alone(path: str, linted: bool) -> None:
    """dist/ is gpustack's own output: its other clusters' jobs against one repository-wide
    --profile were false findings (issue 24)."""
    hook = next(h for h in HOOKS if h["id"] == "gpustack-lint")
    assert (not re.search(hook.get("exclude", "^$"), path)) is linted
