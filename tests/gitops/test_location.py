"""Where the output folder is in its git checkout is part of what ``<out>/gitops/`` says: the
Applications and Kustomizations name ``<gitops.path>/clusters/<name>``. Moving the checkout
into another repository (a monorepo's subfolder) used to leave those paths wrong while ``synth
--check`` passed on the recorded fleet digest; now the digest covers the location and a
``gitops.path`` that is not where the output folder is, is refused in one line, writing nothing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpustack.cli import main
from gpustack.synth.digest import fleet_digest
from tests.gitops.test_output import PROFILE


def synth(root: Path, *args: str) -> Result:
    cwd = os.getcwd()
    os.chdir(root)
    try:
        return CliRunner().invoke(main, ["synth", "profiles", "--out", "dist", *args])
    finally:
        os.chdir(cwd)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "fleet"
    (repo / ".git").mkdir(parents=True)  # the marker gpustack looks for
    (repo / "profiles").mkdir()
    (repo / "profiles" / "alpha.yaml").write_text(PROFILE.format(name="alpha"))
    done = synth(repo)
    assert done.exit_code == 0, done.output
    assert synth(repo, "--check").exit_code == 0
    return repo


def test_a_checkout_moved_into_a_monorepo_is_refused_until_gitops_path_follows(
    tmp_path: Path, checkout: Path
) -> None:
    mono = tmp_path / "mono"
    (mono / ".git").mkdir(parents=True)
    shutil.move(checkout / "profiles", mono / "gpu" / "profiles")
    shutil.move(checkout / "dist", mono / "gpu" / "dist")
    before = sorted(p.read_bytes() for p in (mono / "gpu" / "dist").rglob("*") if p.is_file())
    for args in (("--check",), ()):
        done = synth(mono / "gpu", *args)
        assert done.exit_code == 1, done.output
        assert done.output.count("\n") == 1, done.output
        assert "gitops.path is 'dist', but the output folder dist is 'gpu/dist'" in done.output
        assert "set gitops.path: gpu/dist" in done.output
    after = sorted(p.read_bytes() for p in (mono / "gpu" / "dist").rglob("*") if p.is_file())
    assert after == before
    profile = mono / "gpu" / "profiles" / "alpha.yaml"
    profile.write_text(profile.read_text().replace("gitops:\n", "gitops:\n  path: gpu/dist\n"))
    done = synth(mono / "gpu")
    assert done.exit_code == 0, done.output
    flux = mono / "gpu" / "dist" / "gitops" / "flux" / "alpha" / "kustomization-gpustack.yaml"
    assert "path: ./gpu/dist/clusters/alpha\n" in flux.read_text()
    assert synth(mono / "gpu", "--check").exit_code == 0


def test_the_fleet_digest_covers_the_location() -> None:
    clusters = [("alpha", "sha256:" + "0" * 64)]
    assert fleet_digest("g", clusters, "dist") != fleet_digest("g", clusters, "gpu/dist")
    assert fleet_digest("g", clusters, None) != fleet_digest("g", clusters, "dist")
