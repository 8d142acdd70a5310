"""gpustack.actions.validate called directly: options in, outcome or refusal out (no click)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.actions.errors import BadOptions, NothingFound, Refused
from gpustack.actions.validate import ValidateOptions, run
from tests.test_synth_cli import PROFILE

NODESTATE = Path(__file__).parents[1] / "nodestate"
H100 = NODESTATE / "h100-eks.yaml"
STATE = NODESTATE / "fixtures" / "eks-h100.json"
DRIFT = NODESTATE / "fixtures" / "eks-h100-drift.json"
MANIFEST = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"


def folder(tmp_path: Path, files: dict[str, str]) -> Path:
    found = tmp_path / "in"
    found.mkdir()
    for name, text in files.items():
        (found / name).write_text(text)
    return found


@pytest.mark.parametrize(
    ("files", "says"),
    [
        ({}, "no *.yaml profiles found in"),
        ({"notes.txt": "x"}, "no *.yaml profiles found in"),
        ({"cm.yaml": MANIFEST}, "1 file skipped, none is a gpustack profile"),
    ],
)
def test_nothing_to_check_is_refused(tmp_path: Path, files: dict[str, str], says: str) -> None:
    with pytest.raises(NothingFound, match=says.replace("*", r"\*")):
        run(ValidateOptions((folder(tmp_path, files),)))


def test_no_path_and_no_profiles_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NothingFound, match="no PATH given and no profiles/ folder here"):
        run(ValidateOptions())


def test_no_path_reads_the_profiles_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "a.yaml").write_text(PROFILE.format(name="a"))
    done = run(ValidateOptions())
    assert done.ok and done.result.files_checked == 1


@pytest.mark.parametrize(
    ("text", "ok", "issues"),
    [
        (PROFILE.format(name="fine"), True, 0),
        (PROFILE.format(name="fine") + "bogus: 1\n", False, 1),
    ],
)
def test_an_invalid_profile_is_the_outcome(
    tmp_path: Path, text: str, ok: bool, issues: int
) -> None:
    done = run(ValidateOptions((folder(tmp_path, {"p.yaml": text}),)))
    assert done.ok is ok
    assert len(done.result.issues) == issues


def test_notes_come_before_the_state_is_read(tmp_path: Path) -> None:
    """A file skipped beside the profile is told even when the state then cannot be read."""
    given = folder(tmp_path, {"p.yaml": PROFILE.format(name="p"), "cm.yaml": MANIFEST})
    bad = tmp_path / "state.json"
    bad.write_text('{"kind": "Node"}')
    notes: list[str] = []
    with pytest.raises(Refused, match="not a kubectl List"):
        run(ValidateOptions((given,), state=bad, on_note=notes.append))
    what = "not a gpustack profile (a Kubernetes manifest: v1 ConfigMap)"
    assert notes == [f"{given / 'cm.yaml'}: skipped: {what}"]


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (ValidateOptions((H100,), state=STATE, kubectl=True), "not both"),
        (ValidateOptions((NODESTATE,), state=STATE), "check one profile against its cluster"),
    ],
)
def test_state_options_that_do_not_go_together(options: ValidateOptions, says: str) -> None:
    with pytest.raises(BadOptions, match=says):
        run(options)


@pytest.mark.parametrize(("state", "rule"), [(STATE, None), (DRIFT, "kernel-matches-precompiled")])
def test_the_profile_against_its_nodes(state: Path, rule: str | None) -> None:
    done = run(ValidateOptions((H100,), state=state))
    found = {i.rule for i in done.result.issues}
    assert (rule in found) if rule else found == set()
    assert done.ok is (rule is None)
