"""``gpustack validate`` on folders of Kubernetes manifests (e.g. ``dist/``): each manifest is
named as skipped, not reported as a profile with an error per key; broken profiles still fail.
A folder of nothing but manifests is one line (issue #32: ``validate dist/`` printed a line per
manifest, 782 here, before saying there was no profile)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from gpustack.checker import check_paths
from gpustack.cli import main

REPO = Path(__file__).resolve().parents[1]
DIST = REPO / "dist"
PROFILE = (REPO / "profiles" / "lab-1gpu.yaml").read_text()
MULTI = (
    "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\n"
)


def validate(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["validate", *map(str, args)])


def test_validate_dist_says_there_is_no_profile_in_one_line() -> None:
    done = validate(DIST)
    manifests = sorted(p for p in DIST.rglob("*.yaml") if ".gpustack" not in p.parts)
    assert manifests
    assert done.exit_code == 2  # nothing was checked: a usage error, not a silent pass
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"Error: no profiles in {DIST}: {len(manifests)} files skipped, none is a gpustack "
        "profile (give the profiles, e.g. `gpustack validate profiles/`)"
    ]


def test_nothing_to_validate_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path)
    for args, line in (
        (["empty"], "Error: no *.yaml profiles found in empty"),
        ([], "Error: no PATH given and no profiles/ folder here"),
    ):
        done = validate(*args)
        assert done.exit_code == 2
        assert done.stderr.splitlines() == [line]


def test_a_mixed_folder_checks_the_profiles_and_names_the_manifests(tmp_path: Path) -> None:
    (tmp_path / "lab.yaml").write_text(PROFILE)
    (tmp_path / "both.yaml").write_text(MULTI)
    shutil.copy(DIST / "clusters/lab-1gpu/driver/daemonset-nvidia-driver-daemonset.yaml", tmp_path)
    done = validate(tmp_path)
    assert done.exit_code == 0, done.output
    notice, summary = done.stdout.splitlines()  # lab-1gpu runs 1.33, past its end of life
    assert ": notice: Kubernetes 1.33 reached its upstream end of life on 2026-06-28" in notice
    assert summary == "1 profile valid (1 notice)"
    assert done.stderr.splitlines() == [
        f"{tmp_path / 'both.yaml'}: skipped: not a gpustack profile (a Kubernetes manifest: "
        "v1 Namespace, and 1 more document)",
        f"{tmp_path / 'daemonset-nvidia-driver-daemonset.yaml'}: skipped: not a gpustack "
        "profile (a Kubernetes manifest: apps/v1 DaemonSet)",
    ]


def test_broken_profiles_are_never_skipped(tmp_path: Path) -> None:
    cases = {
        "typo.yaml": PROFILE.replace("gpustack.dev/v1alpha1", "gpustack.dev/v1alpha2"),
        "kind.yaml": PROFILE.replace("kind: Profile", "kind: Profiel"),
        "noapi.yaml": "kind: Profile\nmetadata: {name: x}\n",
        "plain.yaml": "driver:\n  version: '580.105.08'\n",
        "profile-kind.yaml": PROFILE.replace("gpustack.dev/v1alpha1", "v1"),
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
    result = check_paths([tmp_path])
    assert result.skipped == ()
    assert result.files_checked == len(cases)
    assert {Path(i.file).name for i in result.issues} == set(cases)


def test_a_manifest_named_explicitly_is_one_error(tmp_path: Path) -> None:
    file = DIST / "clusters/lab-1gpu/driver/daemonset-nvidia-driver-daemonset.yaml"
    done = validate(file)
    assert done.exit_code == 1
    assert done.stdout.splitlines() == [
        f"{file}:1:1: $: not a gpustack profile (a Kubernetes manifest: apps/v1 DaemonSet) "
        "(validate checks profiles (apiVersion: gpustack.dev/v1alpha1, kind: Profile); name a "
        "profile, or a folder, where manifests are skipped) (rule: load)",
        "1 error in 1 of 1 profile",
    ]
