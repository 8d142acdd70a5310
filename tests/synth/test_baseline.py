"""``synth --check --base REF`` cannot be fooled by a change that rewrites the index too.

Each case commits a small fleet and its ``dist/``, then makes the change a pull request could
make: a hand edit of a manifest together with its digest in ``dist/.gpustack/index.json``, or a
profile edit together with its recorded input digests. Plain ``--check`` trusts the working
tree's index and passes (the hole, shown so the test proves the base is what closes it);
``--check --base HEAD`` and ``--check --full`` find the change. An honest change of a profile is
still synthesized and compared, and an untouched tree passes all three.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gpustack.cli import main
from gpustack.synth.report import STALE
from tests.synth.test_fresh import PROFILE, synth

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "profiles").mkdir()
    for name in ("alpha", "beta"):
        (tmp_path / "profiles" / f"{name}.yaml").write_text(PROFILE.format(name=name, extends=""))
    git(tmp_path, "init", "-q", "-b", "main")
    done = synth(tmp_path)
    assert done.exit_code == 0, done.output
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "fleet")
    return tmp_path


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def index_of(repo: Path) -> tuple[Path, dict[str, Any]]:
    path = repo / "dist/.gpustack/index.json"
    return path, json.loads(path.read_text())


def write_index(path: Path, doc: dict[str, Any]) -> None:
    path.write_text(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def tamper_manifest(repo: Path) -> None:
    """Change the driver image in alpha's DaemonSet and record the new bytes' digest."""
    folder = repo / "dist/clusters/alpha"
    manifest = next(folder.glob("driver/daemonset-*.yaml"))
    text = manifest.read_text().replace("nvcr.io/nvidia/driver", "evil.example.com/driver")
    manifest.write_text(text)
    path, doc = index_of(repo)
    doc["clusters"]["alpha"]["files"][manifest.relative_to(folder).as_posix()] = sha(text.encode())
    write_index(path, doc)


def tamper_profile(repo: Path) -> None:
    """Change alpha's namespace in its profile and record the new bytes as its input."""
    profile = repo / "profiles/alpha.yaml"
    text = profile.read_text() + "cluster:\n  namespace: other\n"
    profile.write_text(text)
    path, doc = index_of(repo)
    entry = doc["clusters"]["alpha"]
    entry["inputs"]["../profiles/alpha.yaml"] = sha(text.encode())
    # the cluster digest over generator and inputs, recomputed as gpustack would
    from gpustack.synth.digest import cluster_digest, generator_digest

    entry["digest"] = cluster_digest(generator_digest(), entry["inputs"])
    write_index(path, doc)


TAMPERING: dict[str, Callable[[Path], None]] = {
    "a manifest and its index digest": tamper_manifest,
    "a profile and its recorded input digests": tamper_profile,
}


def check(repo: Path, *args: str) -> Result:
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        return CliRunner().invoke(main, ["synth", "--check", "--jobs", "1", *args])
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("case", sorted(TAMPERING))
def test_a_change_that_rewrites_the_index_fails_against_a_base(repo: Path, case: str) -> None:
    TAMPERING[case](repo)
    plain = check(repo)
    assert plain.exit_code == 0, plain.output  # the hole --base closes
    for args in (("--base", "HEAD"), ("--base", "main"), ("--full",)):
        caught = check(repo, *args)
        assert caught.exit_code == STALE, (args, caught.output)
        assert "dist/clusters/alpha/" in caught.output, args
        assert "dist/clusters/beta/" not in caught.output, args


def test_an_untouched_tree_passes_every_way(repo: Path) -> None:
    for args in ((), ("--base", "HEAD"), ("--full",)):
        done = check(repo, *args)
        assert done.exit_code == 0, (args, done.output)
        assert done.output.endswith("dist is up to date (2 clusters)\n")


def test_an_honest_change_is_synthesized_and_compared(repo: Path) -> None:
    profile = repo / "profiles/beta.yaml"
    profile.write_text(profile.read_text() + "cluster:\n  namespace: other\n")
    assert check(repo, "--base", "HEAD").exit_code == STALE
    assert synth(repo).exit_code == 0
    done = check(repo, "--base", "HEAD")
    assert done.exit_code == 0, done.output


def test_an_unknown_base_is_one_line(repo: Path) -> None:
    done = check(repo, "--base", "no-such-branch")
    assert done.exit_code == 1
    assert done.output.count("\n") == 1
    assert "--base no-such-branch: not a commit in" in done.output


def test_head_before_the_first_commit_trusts_nothing(tmp_path: Path) -> None:
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles/alpha.yaml").write_text(PROFILE.format(name="alpha", extends=""))
    git(tmp_path, "init", "-q")
    assert synth(tmp_path).exit_code == 0
    done = check(tmp_path, "--base", "HEAD")
    assert done.exit_code == 0, done.output


@pytest.mark.parametrize("args", [("--base", "HEAD"), ("--full",)], ids=["--base", "--full"])
def test_base_and_full_go_with_check_only(repo: Path, args: tuple[str, ...]) -> None:
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        done = CliRunner().invoke(main, ["synth", *args])
    finally:
        os.chdir(cwd)
    assert done.exit_code == 2
    assert "add --check" in done.output
