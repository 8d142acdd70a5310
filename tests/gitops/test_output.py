"""``<out>/gitops/`` is owned like a cluster folder: checked, hand edits refused, removal only
with ``--prune`` (a pruning tool would uninstall what the objects deliver)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from gpustack.cli import main

PROFILE = """\
apiVersion: gpustack.dev/v1alpha1
kind: Profile
metadata:
  name: {name}
gpus:
  product: L4
gitops:
  repoURL: https://git.example.com/fleet.git
  flux:
    enabled: true
"""


def synth(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["synth", *map(str, args)])


def test_gitops_folder_is_written_checked_and_owned(tmp_path: Path) -> None:
    profiles, out = tmp_path / "profiles", tmp_path / "dist"
    profiles.mkdir()
    for name in ("alpha", "beta"):
        (profiles / f"{name}.yaml").write_text(PROFILE.format(name=name))
    done = synth(profiles, "--out", out)
    assert done.exit_code == 0, done.output
    assert f"wrote {out / 'gitops'}" in done.stdout
    flux = out / "gitops" / "flux" / "alpha" / "kustomization-gpustack.yaml"
    assert "path: ./dist/clusters/alpha\n" in flux.read_text()
    assert synth(profiles, "--out", out, "--check").exit_code == 0

    # A hand edit: --check names it, a run refuses it, --force overwrites it.
    original = flux.read_text()
    flux.write_text(original.replace("prune: true", "prune: false"))
    check = synth(profiles, "--out", out, "--check")
    assert check.exit_code == 3 and f"differs: {flux}" in check.stdout
    refused = synth(profiles, "--out", out)
    assert refused.exit_code == 1 and "edited by hand" in refused.stderr
    assert "prune: false" in flux.read_text()
    assert synth(profiles, "--out", out, "--force").exit_code == 0
    assert flux.read_text() == original

    # A run over some of the profiles leaves the fleet's objects alone.
    partial = synth(profiles / "alpha.yaml", "--out", out)
    assert partial.exit_code == 0, partial.output
    assert "not updated: this run leaves out beta" in partial.stderr

    # Turning Flux off removes its objects only with --prune.
    (profiles / "beta.yaml").write_text(PROFILE.format(name="beta").split("gitops:")[0])
    (profiles / "gamma.yaml").write_text(PROFILE.format(name="gamma"))
    blocked = synth(profiles, "--out", out)
    assert blocked.exit_code == 1 and "pass --prune" in blocked.stderr
    assert not (out / "clusters" / "gamma").exists()  # refused before anything was written
    (profiles / "gamma.yaml").unlink()
    assert (out / "gitops" / "flux" / "beta").is_dir()
    assert synth(profiles, "--out", out, "--prune").exit_code == 0
    assert not (out / "gitops" / "flux" / "beta").exists()
    assert (out / "gitops" / "flux" / "alpha").is_dir()
    assert synth(profiles, "--out", out, "--check").exit_code == 0
