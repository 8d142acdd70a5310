"""``gpustack template PROFILE``: the cluster folder's manifests as one YAML stream.

For every example profile the stream equals the files of its committed cluster folder,
concatenated in the order its ``kustomization.yaml`` lists them; and ``kubectl kustomize`` of
the folder builds the same objects.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from gpustack.cli import main
from tests.tooling import require_tool

REPO = Path(__file__).resolve().parents[1]
PROFILES = sorted((REPO / "profiles").glob("*.yaml"))


def _template(profile: Path) -> bytes:
    done = CliRunner().invoke(main, ["template", str(profile)])
    assert done.exit_code == 0, done.output
    return done.stdout_bytes


def _folder(profile: Path) -> Path:
    name = yaml.safe_load(profile.read_text())["metadata"]["name"]
    return REPO / "dist" / "clusters" / name


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.stem)
def test_template_is_the_cluster_folder_in_kustomization_order(profile: Path) -> None:
    folder = _folder(profile)
    resources = yaml.safe_load((folder / "kustomization.yaml").read_text())["resources"]
    expected = b"".join(b"---\n" + (folder / r).read_bytes() for r in resources)
    assert _template(profile) == expected


def test_template_matches_kubectl_kustomize() -> None:
    kubectl = require_tool("kubectl")
    profile = REPO / "profiles" / "h100-prod-east.yaml"
    built = subprocess.run(
        [kubectl, "kustomize", str(_folder(profile))], capture_output=True, check=True
    ).stdout
    ours = [d for d in yaml.safe_load_all(_template(profile)) if d]
    theirs = [d for d in yaml.safe_load_all(built) if d]

    def key(d: dict[str, object]) -> str:
        return yaml.safe_dump(d, sort_keys=True)

    # kustomize re-sorts by its own kind order; the objects are the same.
    assert len(ours) == len(theirs)
    assert sorted(ours, key=key) == sorted(theirs, key=key)


def test_an_invalid_profile_prints_findings_on_stderr_and_nothing_on_stdout(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: gpustack.dev/v1alpha1\nkind: Profile\nmetadata: {name: Bad}\n")
    done = CliRunner().invoke(main, ["template", str(bad)])
    assert done.exit_code == 1
    assert done.stdout == ""
    assert f"{bad}:3:" in done.stderr
