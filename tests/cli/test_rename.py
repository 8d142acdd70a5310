"""A cluster renamed: one summary line, the advice that works (``--prune``), and no note about a
GitOps folder no profile asks for (issue #24, item 3)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gpustack.synth.report import STALE
from tests.test_synth_cli import PROFILE, synth


def _edit_name(profiles: Path) -> None:
    (profiles / "alpha.yaml").write_text(PROFILE.format(name="gamma"))


def _move_file(profiles: Path) -> None:
    (profiles / "alpha.yaml").unlink()
    (profiles / "gamma.yaml").write_text(PROFILE.format(name="gamma"))


def _move_and_bump(profiles: Path) -> None:
    (profiles / "alpha.yaml").unlink()
    text = PROFILE.format(name="gamma").replace('"580.105.08"', '"570.195.03"')
    (profiles / "gamma.yaml").write_text(text)


#: how alpha becomes gamma, and how many of its files change on the way (-1: every file, as
#: each one's generated-file header names the profile file, which moved)
RENAMES: dict[str, tuple[Callable[[Path], None], int]] = {
    "metadata.name edited": (_edit_name, 0),
    "profile file renamed with it": (_move_file, -1),
    "renamed and the driver bumped": (_move_and_bump, -1),
}


@pytest.mark.parametrize(("rename", "changed"), RENAMES.values(), ids=RENAMES.keys())
def test_a_rename_is_one_line_and_the_advice_names_prune(
    profiles: Path, rename: Callable[[Path], None], changed: int
) -> None:
    out = profiles.parent / "dist"
    assert synth(profiles, "--out", out).exit_code == 0
    index = json.loads((out / ".gpustack" / "index.json").read_text())
    files = len(index["clusters"]["alpha"]["files"])
    changed = files if changed == -1 else changed
    rename(profiles)
    check = synth(profiles, "--out", out, "--check")
    assert check.exit_code == STALE
    assert check.stdout.splitlines() == [
        f"renamed: {out}/clusters/alpha → {out}/clusters/gamma ({files} files, {changed} changed)",
        f"differs: {out}/.gpustack/index.json",
    ]
    assert check.stderr.splitlines()[-1].endswith(
        f"run `gpustack synth {profiles} --out {out} --prune` to update it"
    )
    assert "not updated" not in check.stderr
    doc = json.loads(synth(profiles, "--out", out, "--check", "--format", "json").stdout)
    assert doc["renamed"] == [{"from": "alpha", "to": "gamma"}]
    diff = synth(profiles, "--out", out, "--check", "--diff").stdout
    assert diff.count(f"+++ b/{out}/clusters/gamma/") == changed
    assert "/dev/null" not in diff
    refused = synth(profiles, "--out", out)
    assert refused.exit_code == 1
    assert len(refused.stderr.splitlines()) == 1 and "--prune" in refused.stderr
    done = synth(profiles, "--out", out, "--prune")
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines()[0] == f"renamed {out}/clusters/alpha → {out}/clusters/gamma"
    assert done.stderr == ""
    assert sorted(p.name for p in (out / "clusters").iterdir()) == ["beta", "gamma"]


def test_a_deleted_profile_is_no_rename_and_its_advice_names_prune(profiles: Path) -> None:
    out = profiles.parent / "dist"
    assert synth(profiles, "--out", out).exit_code == 0
    (profiles / "beta.yaml").unlink()
    check = synth(profiles, "--out", out, "--check")
    assert check.exit_code == STALE
    assert not [line for line in check.stdout.splitlines() if line.startswith("renamed")]
    assert f"extra: {out}/clusters/beta/kustomization.yaml" in check.stdout.splitlines()
    assert check.stderr.splitlines()[-1].endswith(
        f"run `gpustack synth {profiles} --out {out} --prune` to update it"
    )


def test_a_run_leaving_clusters_out_says_nothing_of_gitops_when_none_delivers(
    profiles: Path,
) -> None:
    out = profiles.parent / "dist"
    assert synth(profiles, "--out", out).exit_code == 0
    (profiles / "alpha.yaml").write_text(
        PROFILE.format(name="alpha").replace('"580.105.08"', '"570.195.03"')
    )
    result = synth(profiles / "alpha.yaml", "--out", out)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert not (out / "gitops").exists()
