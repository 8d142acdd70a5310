"""A base reached through a symbolic link is read through it every time: re-pointing the link
(to a file or a folder of other bases) makes the clusters that extend it stale, and never
leaves ``--check`` passing on output made from the old target.

The index once recorded each input by its resolved path, so after the link moved the fresh check
read the *old* target, unchanged, and called the cluster fresh.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.synth.report import STALE
from tests.synth.test_fresh import PROFILE, first_run, synth
from tests.synth.test_fresh import synthesized as synthesized  # the fixture

BASE_V1 = "apiVersion: gpustack.dev/v1alpha1\nkind: Profile\ncluster:\n  namespace: gpu-v1\n"
BASE_V2 = BASE_V1.replace("gpu-v1", "gpu-v2")


def fleet_with_link(root: Path, *, link_folder: bool) -> Path:
    """profiles/: alpha and beta extend _bases/fleet.yaml, reached through a link (to the file,
    or to the folder holding it); gamma stands alone. Returns the link."""
    profiles = root / "profiles"
    for version, text in (("v1", BASE_V1), ("v2", BASE_V2)):
        (profiles / "_versions" / version).mkdir(parents=True)
        (profiles / "_versions" / version / "fleet.yaml").write_text(text)
    if link_folder:
        link = profiles / "_bases"
        link.symlink_to(Path("_versions") / "v1", target_is_directory=True)
    else:
        (profiles / "_bases").mkdir()
        link = profiles / "_bases" / "fleet.yaml"
        link.symlink_to(Path("..") / "_versions" / "v1" / "fleet.yaml")
    for name, base in (("alpha", True), ("beta", True), ("gamma", False)):
        extends = "extends: _bases/fleet.yaml\n" if base else ""
        (profiles / f"{name}.yaml").write_text(PROFILE.format(name=name, extends=extends))
    return link


def repoint(link: Path, version: str) -> None:
    target = link.readlink()
    link.unlink()
    link.symlink_to(Path(str(target).replace("v1", version)), target_is_directory=link.is_dir())


@pytest.mark.parametrize("link_folder", [False, True], ids=["file link", "folder link"])
def test_a_repointed_link_makes_its_clusters_stale(
    tmp_path: Path, synthesized: list[str], link_folder: bool
) -> None:
    link = fleet_with_link(tmp_path, link_folder=link_folder)
    first_run(tmp_path, synthesized)
    repoint(link, "v2")
    check = synth(tmp_path, "--check")
    assert check.exit_code == STALE, check.output
    assert sorted(synthesized) == ["alpha", "beta"]
    synthesized.clear()
    done = synth(tmp_path)
    assert done.exit_code == 0, done.output
    assert sorted(synthesized) == ["alpha", "beta"]
    for name, namespace in (("alpha", "gpu-v2"), ("beta", "gpu-v2"), ("gamma", "gpustack-system")):
        kustomization = tmp_path / "dist/clusters" / name / "kustomization.yaml"
        assert f"- common/namespace-{namespace}.yaml" in kustomization.read_text(), name


def test_an_unmoved_link_keeps_its_clusters_fresh(tmp_path: Path, synthesized: list[str]) -> None:
    fleet_with_link(tmp_path, link_folder=True)
    first_run(tmp_path, synthesized)
    check = synth(tmp_path, "--check")
    assert check.exit_code == 0, check.output
    assert synthesized == []
