"""Issue #33, item 1: the three ways past the documented CI gate, each a pull request in a real
git repository, checked the way CI checks it (``gpustack synth --check --base main``) and by the
release gate (``--full``). Each failed on the code before the fix: every mode said "up to date".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpustack.synth.report import STALE
from tests.synth.gitrepo import (
    base_repo,
    commit,
    driver_manifest,
    forge_inputs,
    gate,
    git,
    pull_request,
)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return base_repo(tmp_path_factory.mktemp("gate"))


@pytest.fixture
def repo(base: Path, tmp_path: Path) -> Path:
    return pull_request(base, tmp_path)


def edit_driver(repo: Path, name: str = "alpha") -> None:
    """The one-line edit of the privileged driver DaemonSet (its image), index untouched."""
    manifest = driver_manifest(repo, name)
    text = manifest.read_text()
    assert "nvcr.io/nvidia/driver" in text
    manifest.write_text(text.replace("nvcr.io/nvidia/driver", "evil.example.com/driver", 1))


@pytest.mark.parametrize("mode", ["--base", "--full", "plain"])
def test_a_profile_that_stops_being_one_fails_the_gate(repo: Path, mode: str) -> None:
    profile = repo / "profiles/alpha.yaml"
    text = profile.read_text()
    text = text.replace("apiVersion: gpustack.dev/v1alpha1", "apiVersion: example.com/v1")
    profile.write_text(text.replace("kind: Profile", "kind: Widget"))
    edit_driver(repo)
    commit(repo, "alpha is a widget now")
    done = gate(repo, mode)
    assert done.exit_code == STALE, done.output
    assert (
        "not a profile: profiles/alpha.yaml made cluster 'alpha' and is no longer a profile "
        "(a Kubernetes manifest: example.com/v1 Widget)"
    ) in done.output
    assert "extra: dist/clusters/alpha/driver/" in done.output
    assert "beta" not in done.output
    assert "run `gpustack synth --prune`" in done.output


def test_synth_prune_no_longer_keeps_the_folder_of_a_profile_that_stopped_being_one(
    repo: Path,
) -> None:
    from tests.synth.test_fresh import synth

    profile = repo / "profiles/alpha.yaml"
    profile.write_text(profile.read_text().replace("kind: Profile", "kind: Widget"))
    profile.write_text(profile.read_text().replace("gpustack.dev/v1alpha1", "example.com/v1"))
    refused = synth(repo)
    assert refused.exit_code == 1
    assert "profiles/alpha.yaml is no longer a profile" in refused.output
    pruned = synth(repo, "--prune")
    assert pruned.exit_code == 0, pruned.output
    assert not (repo / "dist/clusters/alpha").exists()


def test_provenance_forged_in_one_pr_fails_the_gate_and_cannot_serve_the_next(
    repo: Path,
) -> None:
    profile = repo / "profiles/alpha.yaml"
    future = profile.read_text().replace('"580.105.08"', '"570.133.20"')
    # PR 1: the index alone records the digests of a profile that does not exist yet
    forge_inputs(repo, "alpha", future)
    commit(repo, "index only")
    for mode in ("--base", "--full"):
        done = gate(repo, mode)
        assert done.exit_code == STALE, (mode, done.output)
        assert "index: cluster 'alpha': recorded digest, inputs not what gpustack computes" in (
            done.output
        ), mode
        assert "differs: dist/.gpustack/index.json" in done.output
    # merged anyway (before the gate was fixed, say): PR 2 changes the driver, not dist/
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "pr")
    git(repo, "checkout", "-q", "-b", "pr2")
    profile.write_text(future)
    commit(repo, "driver 570")
    for mode in ("--base", "--full"):
        done = gate(repo, mode)
        assert done.exit_code == STALE, (mode, done.output)
        assert "differs: dist/clusters/alpha/driver/daemonset-" in done.output, mode
        assert "dist/clusters/beta" not in done.output


@pytest.mark.parametrize("mode", ["--base", "--full", "plain"])
@pytest.mark.parametrize("name", ["in-cluster", "management"])
def test_a_folder_nobody_owns_fails_the_gate(repo: Path, mode: str, name: str) -> None:
    folder = repo / "dist/clusters" / name
    folder.mkdir()
    (folder / "kustomization.yaml").write_text("resources: [evil.yaml]\n")
    (folder / "evil.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n")
    commit(repo, "a folder nobody owns")
    done = gate(repo, mode)
    assert done.exit_code == STALE, done.output
    assert f"unowned: dist/clusters/{name}: cluster folder in no index entry" in done.output
    assert f"extra: dist/clusters/{name}/evil.yaml" in done.output
    assert "alpha" not in done.output and "beta" not in done.output


def test_an_untouched_pull_request_passes_every_mode(repo: Path) -> None:
    commit(repo, "nothing")
    for mode in ("--base", "--full", "plain"):
        done = gate(repo, mode)
        assert done.exit_code == 0, (mode, done.output)
        assert done.output.endswith("dist is up to date (2 clusters)\n"), mode


def test_synth_warns_about_a_folder_nobody_owns(repo: Path) -> None:
    from tests.synth.test_fresh import synth

    (repo / "dist/clusters/in-cluster").mkdir()
    (repo / "dist/clusters/in-cluster/evil.yaml").write_text("kind: Namespace\n")
    done = synth(repo)
    assert done.exit_code == 0, done.output
    assert "gpustack: warning: unowned: dist/clusters/in-cluster: cluster folder in no index" in (
        done.output
    )
    assert (repo / "dist/clusters/in-cluster/evil.yaml").exists()  # never gpustack's to delete


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_under_base_an_untouched_cluster_is_not_synthesized_again(
    tmp_path: Path, object_format: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The blobs committed at the base vouch for unchanged inputs (in either object format of
    git), so ``--base`` stays as cheap as before for what a change does not touch."""
    from gpustack.synth import worker

    repo = pull_request(base_repo(tmp_path, object_format), tmp_path)
    profile = repo / "profiles/beta.yaml"
    profile.write_text(profile.read_text().replace('"580.105.08"', '"570.133.20"'))
    commit(repo, "beta's driver, dist/ left as it was")
    names: list[str] = []
    real = worker.synthesize_one

    def recording(path: Path, profile: Any) -> Any:
        names.append(profile.metadata.name)
        return real(path, profile)

    monkeypatch.setattr(worker, "synthesize_one", recording)
    done = gate(repo, "--base")
    assert done.exit_code == STALE, done.output
    assert names == ["beta"]


def test_the_json_report_names_a_folder_nobody_owns(repo: Path) -> None:
    import json
    import os

    from click.testing import CliRunner

    from gpustack.cli import main

    (repo / "dist/clusters/in-cluster").mkdir()
    (repo / "dist/clusters/in-cluster/evil.yaml").write_text("kind: Namespace\n")
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        args = ["synth", "--check", "--base", "main", "--format", "json", "--jobs", "1"]
        done = CliRunner().invoke(main, args)
    finally:
        os.chdir(cwd)
    assert done.exit_code == STALE
    doc = json.loads(done.stdout)
    assert doc["upToDate"] is False
    (unowned,) = [c for c in doc["clusters"] if c["name"] == "in-cluster"]
    assert unowned == {
        "name": "in-cluster",
        "status": "unowned",
        "files": [{"path": "evil.yaml", "change": "extra"}],
    }
    assert any(p.startswith("unowned: dist/clusters/in-cluster:") for p in doc["problems"])


def test_under_base_a_profile_that_stopped_being_one_is_named_even_without_its_folder(
    repo: Path,
) -> None:
    """The base's index says which files were profiles: a change that turns one into a manifest
    and drops its folder and index entry is named by ``--base``."""
    import shutil

    from tests.synth.gitrepo import read_index, write_index

    profile = repo / "profiles/alpha.yaml"
    profile.write_text(profile.read_text().replace("kind: Profile", "kind: Widget"))
    profile.write_text(profile.read_text().replace("gpustack.dev/v1alpha1", "example.com/v1"))
    shutil.rmtree(repo / "dist/clusters/alpha")
    doc = read_index(repo)
    del doc["clusters"]["alpha"]
    write_index(repo, doc)
    commit(repo, "alpha gone, its file kept as a widget")
    done = gate(repo, "--base")
    assert done.exit_code == STALE, done.output
    assert (
        "not a profile: profiles/alpha.yaml made cluster 'alpha' at main and is no longer a "
        "profile (a Kubernetes manifest: example.com/v1 Widget)"
    ) in done.output
