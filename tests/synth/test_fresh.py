"""Clusters whose inputs are unchanged are not synthesized again, and nothing else is skipped.

Each case synthesizes a small fleet through the CLI, changes one thing, and compares the set of
clusters the second run really synthesized (recorded around the one function that does it) with
the set that depends on the change: exactly those, no more (speed), no fewer (correctness).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import gpustack
from gpustack.cli import main
from gpustack.synth import digest, worker
from gpustack.synth.report import STALE

PROFILE = """\
apiVersion: gpustack.dev/v1alpha1
kind: Profile
{extends}metadata:
  name: {name}
driver:
  version: "580.105.08"
gpus:
  product: L4
"""
BASE = """\
apiVersion: gpustack.dev/v1alpha1
kind: Profile
cluster:
  namespace: gpu-system
"""


@pytest.fixture
def fleet(tmp_path: Path) -> Path:
    """profiles/: alpha and beta extend _bases/fleet.yaml, gamma stands alone."""
    profiles = tmp_path / "profiles"
    (profiles / "_bases").mkdir(parents=True)
    (profiles / "_bases" / "fleet.yaml").write_text(BASE)
    for name, base in (("alpha", True), ("beta", True), ("gamma", False)):
        extends = "extends: _bases/fleet.yaml\n" if base else ""
        (profiles / f"{name}.yaml").write_text(PROFILE.format(name=name, extends=extends))
    return tmp_path


@pytest.fixture
def synthesized(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Names of the clusters synthesized (not merely kept) since the fixture started."""
    names: list[str] = []
    real: Callable[..., Any] = worker.synthesize_one

    def recording(path: Path, profile: Any) -> Any:
        names.append(profile.metadata.name)
        return real(path, profile)

    monkeypatch.setattr(worker, "synthesize_one", recording)
    yield names


def synth(root: Path, *args: str) -> Result:
    cwd = os.getcwd()
    os.chdir(root)
    try:
        args = ("synth", "profiles", "--out", "dist", "--jobs", "1", *args)
        return CliRunner().invoke(main, list(args))
    finally:
        os.chdir(cwd)


def first_run(fleet: Path, synthesized: list[str]) -> None:
    done = synth(fleet)
    assert done.exit_code == 0, done.output
    assert sorted(synthesized) == ["alpha", "beta", "gamma"]
    synthesized.clear()


def test_nothing_changed_synthesizes_nothing(fleet: Path, synthesized: list[str]) -> None:
    first_run(fleet, synthesized)
    index = (fleet / "dist/.gpustack/index.json").read_bytes()
    again = synth(fleet)
    assert again.exit_code == 0, again.output
    assert synthesized == []
    assert again.stdout.endswith("0 clusters written, 3 unchanged, 0 removed\n")
    assert (fleet / "dist/.gpustack/index.json").read_bytes() == index
    check = synth(fleet, "--check")
    assert check.exit_code == 0, check.output
    assert synthesized == []


def test_a_changed_base_invalidates_exactly_its_profiles(
    fleet: Path, synthesized: list[str]
) -> None:
    first_run(fleet, synthesized)
    base = fleet / "profiles/_bases/fleet.yaml"
    base.write_text(BASE.replace("gpu-system", "gpu-operators"))
    check = synth(fleet, "--check")
    assert check.exit_code == STALE
    assert sorted(synthesized) == ["alpha", "beta"]
    synthesized.clear()
    done = synth(fleet)
    assert done.exit_code == 0, done.output
    assert sorted(synthesized) == ["alpha", "beta"]
    assert "wrote dist/clusters/alpha" in done.stdout and "gamma" not in done.stdout


def test_a_changed_profile_invalidates_only_its_cluster(
    fleet: Path, synthesized: list[str]
) -> None:
    first_run(fleet, synthesized)
    gamma = fleet / "profiles/gamma.yaml"
    gamma.write_text(gamma.read_text() + "# a comment changes no object, but the bytes\n")
    done = synth(fleet)
    assert done.exit_code == 0, done.output
    assert synthesized == ["gamma"]
    assert done.stdout.endswith("0 clusters written, 3 unchanged, 0 removed\n")


def test_a_new_gpustack_version_invalidates_every_cluster(
    fleet: Path, synthesized: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first_run(fleet, synthesized)
    monkeypatch.setattr(gpustack, "__version__", gpustack.__version__ + ".post1")
    digest.generator_digest.cache_clear()
    try:
        assert synth(fleet).exit_code == 0
    finally:
        digest.generator_digest.cache_clear()
    assert sorted(synthesized) == ["alpha", "beta", "gamma"]


def test_a_changed_packaged_file_invalidates_every_cluster(
    fleet: Path, synthesized: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    first_run(fleet, synthesized)
    package = tmp_path / "package"
    shutil.copytree(digest.package_root(), package, ignore=shutil.ignore_patterns("__pycache__"))
    scripts = package / "constructs" / "scripts.py"
    scripts.write_text(scripts.read_text() + "\n# changed\n")
    monkeypatch.setattr(digest, "package_root", lambda: package)
    digest.generator_digest.cache_clear()
    try:
        assert synth(fleet).exit_code == 0
    finally:
        digest.generator_digest.cache_clear()
    assert sorted(synthesized) == ["alpha", "beta", "gamma"]


@pytest.mark.parametrize(
    ("changed", "counts"),
    [
        ("constructs/driver.py", True),
        ("synth/serialize.py", True),
        ("profile/derive.py", True),
        ("plugin/config/model.py", True),
        ("__init__.py", True),
        ("lint/check.py", False),
        ("doctor/report.py", False),
        ("plugin/server.py", False),
        ("data/default-profile.yaml", False),  # an input of its own clusters instead
    ],
)
def test_which_packaged_files_count(tmp_path: Path, changed: str, counts: bool) -> None:
    package = tmp_path / "package"
    shutil.copytree(digest.package_root(), package, ignore=shutil.ignore_patterns("__pycache__"))
    libs = {"cdk8s": "1"}
    before = digest.compute_generator_digest(package, "1.0", libs)
    (package / changed).write_text((package / changed).read_text() + "\n# changed\n")
    after = digest.compute_generator_digest(package, "1.0", libs)
    assert (before != after) is counts
    assert digest.compute_generator_digest(package, "1.0", {"cdk8s": "2"}) != after


def test_a_hand_edit_in_an_unchanged_cluster_is_still_found(
    fleet: Path, synthesized: list[str]
) -> None:
    first_run(fleet, synthesized)
    edited = fleet / "dist/clusters/beta/kustomization.yaml"
    edited.write_text(edited.read_text() + "# mine\n")
    added = fleet / "dist/clusters/gamma/driver/extra.yaml"
    added.write_text("x: 1\n")
    check = synth(fleet, "--check")
    assert check.exit_code == STALE
    assert "differs: dist/clusters/beta/kustomization.yaml" in check.stdout
    assert "extra: dist/clusters/gamma/driver/extra.yaml" in check.stdout
    assert sorted(synthesized) == ["beta", "gamma"]
    refused = synth(fleet)
    assert refused.exit_code == 1
    assert "edited by hand" in refused.stderr


def test_the_index_records_what_each_cluster_was_made_from(
    fleet: Path, synthesized: list[str]
) -> None:
    first_run(fleet, synthesized)
    index = json.loads((fleet / "dist/.gpustack/index.json").read_text())
    alpha = index["clusters"]["alpha"]
    assert sorted(alpha["inputs"]) == ["../profiles/_bases/fleet.yaml", "../profiles/alpha.yaml"]
    assert list(index["clusters"]["gamma"]["inputs"]) == ["../profiles/gamma.yaml"]
    assert alpha["digest"].startswith("sha256:")
    # An older gpustack drops the fields: the next run synthesizes everything, then skips again.
    for entry in index["clusters"].values():
        del entry["digest"], entry["inputs"]
    (fleet / "dist/.gpustack/index.json").write_text(json.dumps(index))
    assert synth(fleet).exit_code == 0
    assert sorted(synthesized) == ["alpha", "beta", "gamma"]


def test_stale_provenance_alone_is_not_out_of_date(
    fleet: Path, synthesized: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new gpustack that writes the same files: --check passes (it synthesizes to know),
    and the next run records the new digests."""
    first_run(fleet, synthesized)
    monkeypatch.setattr(gpustack, "__version__", gpustack.__version__ + ".post1")
    digest.generator_digest.cache_clear()
    try:
        check = synth(fleet, "--check")
        assert check.exit_code == 0, check.output
        assert sorted(synthesized) == ["alpha", "beta", "gamma"]
        index = fleet / "dist/.gpustack/index.json"
        before = index.read_bytes()
        assert synth(fleet).exit_code == 0
        assert index.read_bytes() != before
        synthesized.clear()
        assert synth(fleet, "--check").exit_code == 0
        assert synthesized == []
    finally:
        digest.generator_digest.cache_clear()


def test_json_reports_each_cluster_and_its_files(fleet: Path, synthesized: list[str]) -> None:
    done = synth(fleet, "--format", "json")
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    assert [(c["name"], c["status"]) for c in doc["clusters"]] == [
        ("alpha", "written"),
        ("beta", "written"),
        ("gamma", "written"),
    ]
    assert "kustomization.yaml" in doc["clusters"][0]["files"]
    gamma = fleet / "profiles/gamma.yaml"
    gamma.write_text(gamma.read_text().replace("580.105.08", "570.195.03"))
    edited = fleet / "dist/clusters/alpha/kustomization.yaml"
    edited.write_text(edited.read_text() + "# mine\n")
    check = synth(fleet, "--check", "--format", "json")
    assert check.exit_code == STALE
    report = json.loads(check.stdout)
    assert report["upToDate"] is False
    by_name = {c["name"]: c for c in report["clusters"]}
    assert by_name["beta"] == {"name": "beta", "status": "unchanged", "files": []}
    assert by_name["alpha"]["status"] == "stale"
    assert {"path": "kustomization.yaml", "change": "differs"} in by_name["alpha"]["files"]
    assert by_name["gamma"]["status"] == "stale"
    assert {"path": "driver/daemonset-nvidia-driver-daemonset.yaml", "change": "differs"} in (
        by_name["gamma"]["files"]
    )


def test_check_diff_shows_what_would_change(fleet: Path, synthesized: list[str]) -> None:
    first_run(fleet, synthesized)
    gamma = fleet / "profiles/gamma.yaml"
    gamma.write_text(gamma.read_text().replace("580.105.08", "570.195.03"))
    stray = fleet / "dist/clusters/beta/stray.yaml"
    stray.write_text("x: 1\n")
    check = synth(fleet, "--check", "--diff", "--quiet")
    assert check.exit_code == STALE
    daemonset = "dist/clusters/gamma/driver/daemonset-nvidia-driver-daemonset.yaml"
    assert f"--- a/{daemonset}\n+++ b/{daemonset}\n" in check.stdout
    assert any(line.startswith("-") and "580.105.08" in line for line in check.stdout.splitlines())
    assert any(line.startswith("+") and "570.195.03" in line for line in check.stdout.splitlines())
    assert "--- a/dist/clusters/beta/stray.yaml\n+++ /dev/null\n@@ -1 +0,0 @@\n-x: 1\n" in (
        check.stdout
    )
    assert "differs:" not in check.stdout  # --quiet: the diff only


def test_quiet_prints_nothing_on_success(fleet: Path, synthesized: list[str]) -> None:
    done = synth(fleet, "--quiet")
    assert done.exit_code == 0
    assert done.stdout == "" and done.stderr == ""
    assert synth(fleet, "--check", "--quiet").stdout == ""
    assert synth(fleet, "--diff").exit_code == 2  # --diff needs --check


def test_cdk8s_starts_early_only_when_something_needs_synthesis(
    fleet: Path, synthesized: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the output folders are read, cdk8s is started in the background when (and only
    when) the input digests already show that some cluster will be synthesized here."""
    from gpustack.synth import node

    started: list[int] = []
    monkeypatch.setattr(node, "start_cdk8s", lambda: started.append(1))
    first_run(fleet, synthesized)
    assert started == [1]  # no index yet: all three are synthesized in this process
    started.clear()
    assert synth(fleet).exit_code == 0
    assert started == []  # a no-op starts nothing
    gamma = fleet / "profiles/gamma.yaml"
    gamma.write_text(gamma.read_text() + "# changed\n")
    assert synth(fleet).exit_code == 0
    assert started == [1] and synthesized == ["gamma"]
