"""A small fleet in a real git repository, for the gate's tests (issue #33).

:func:`base_repo` synthesizes ``alpha`` and ``beta`` once per test session and commits them on
``main``; :func:`pull_request` copies that repository and checks out a branch, so each hostile
change is made on its own copy the way a pull request would make it, and :func:`gate` runs
``gpustack synth --check`` in it as CI does.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from gpustack.cli import main
from tests.synth.test_fresh import PROFILE, synth

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
#: The documented CI gate, the release gate and the plain check (a developer's).
MODES: dict[str, tuple[str, ...]] = {
    "--base": ("--base", "main"),
    "--full": ("--full",),
    "plain": (),
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return done.stdout.decode()


def base_repo(root: Path, object_format: str = "sha1") -> Path:
    """``root/base``: profiles alpha and beta, their ``dist/``, committed on ``main`` (in a
    repository whose objects are named by ``object_format``)."""
    repo = root / "base"
    (repo / "profiles").mkdir(parents=True)
    for name in ("alpha", "beta"):
        (repo / "profiles" / f"{name}.yaml").write_text(PROFILE.format(name=name, extends=""))
    git(repo, "init", "-q", "-b", "main", f"--object-format={object_format}")
    git(repo, "config", "core.autocrlf", "false")
    done = synth(repo)
    assert done.exit_code == 0, done.output
    commit(repo, "fleet")
    return repo


def pull_request(base: Path, where: Path) -> Path:
    """A copy of ``base`` on a new branch ``pr``."""
    repo = where / "repo"
    shutil.copytree(base, repo, symlinks=True)
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)


def gate(repo: Path, mode: str) -> Result:
    """``gpustack synth --check`` in ``repo`` as CI runs it, in one of :data:`MODES`."""
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        args = ["synth", "--check", "--jobs", "1", *MODES[mode]]
        return CliRunner().invoke(main, args)
    finally:
        os.chdir(cwd)


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def index_path(repo: Path) -> Path:
    return repo / "dist/.gpustack/index.json"


def read_index(repo: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(index_path(repo).read_text())
    return doc


def write_index(repo: Path, doc: dict[str, Any]) -> None:
    text = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    index_path(repo).write_text(text)


def driver_manifest(repo: Path, name: str = "alpha") -> Path:
    return next((repo / f"dist/clusters/{name}").glob("driver/daemonset-*.yaml"))


def forge_inputs(repo: Path, name: str, profile_text: str) -> None:
    """Record in the index that cluster ``name`` was made from ``profile_text`` (with the
    cluster digest recomputed as gpustack would), touching nothing else."""
    from gpustack.synth.digest import cluster_digest, generator_digest

    doc = read_index(repo)
    entry = doc["clusters"][name]
    entry["inputs"][entry["profile"]] = sha(profile_text.encode())
    entry["digest"] = cluster_digest(generator_digest(), entry["inputs"])
    write_index(repo, doc)
