"""A complete profile under a ``_`` folder (where bases for ``extends`` live) is no cluster:
``validate`` and ``synth`` skip it, and say so in one note instead of silently."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gpustack.checker import check_paths
from gpustack.cli import main

REPO = Path(__file__).resolve().parents[1]
CLUSTER = (REPO / "profiles" / "lab-1gpu.yaml").read_text()
BASE = (REPO / "profiles" / "_bases" / "h100-fleet.yaml").read_text()
MANIFEST = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"


def _named(name: str) -> str:
    return CLUSTER.replace("name: lab-1gpu", f"name: {name}")


#: (files under profiles/ besides lab-1gpu.yaml,
#:  {file with a note: (the '_' name it lies under, its metadata.name)})
CASES: list[tuple[dict[str, str], dict[str, tuple[str, str]]]] = [
    ({"_bases/full.yaml": _named("full")}, {"profiles/_bases/full.yaml": ("_bases", "full")}),
    ({"_bases/h100-fleet.yaml": BASE}, {}),
    ({"_draft.yaml": _named("draft")}, {"profiles/_draft.yaml": ("_draft.yaml", "draft")}),
    ({"team/_old/c.yml": _named("c")}, {"profiles/team/_old/c.yml": ("_old", "c")}),
    ({"_bases/cm.yaml": MANIFEST, "_bases/broken.yaml": "metadata: [\n"}, {}),
    ({".git/c.yaml": _named("c")}, {}),
]


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    profiles = tmp_path / "profiles"
    (profiles).mkdir()
    (profiles / "lab-1gpu.yaml").write_text(CLUSTER)
    for rel, text in files.items():
        (profiles / rel).parent.mkdir(parents=True, exist_ok=True)
        (profiles / rel).write_text(text)
    return profiles


@pytest.mark.parametrize(("files", "notes"), CASES, ids=[next(iter(f)) for f, _ in CASES])
def test_a_complete_profile_among_the_bases_gets_a_note(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    files: dict[str, str],
    notes: dict[str, tuple[str, str]],
) -> None:
    _tree(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    result = check_paths([Path("profiles")])
    assert result.ok and [p.path.name for p in result.profiles] == ["lab-1gpu.yaml"]
    assert {b.file: b.what for b in result.bases}.keys() == notes.keys()
    for base in result.bases:
        under, name = notes[base.file]
        assert f"(metadata.name {name!r}) under {under!r}" in base.what
        assert f"move it to profiles/{name}.yaml to make it a cluster" in base.what


def test_validate_and_synth_print_the_note_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path, {"_bases/full.yaml": _named("full")})
    monkeypatch.chdir(tmp_path)
    for args in (["validate"], ["synth"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        notes = [line for line in result.stderr.splitlines() if ": note: " in line]
        assert len(notes) == 1, result.stderr
        assert notes[0].startswith("profiles/_bases/full.yaml: note: a complete profile")
    assert sorted(p.name for p in (tmp_path / "dist" / "clusters").iterdir()) == ["lab-1gpu"]
