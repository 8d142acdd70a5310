"""gpustack.actions.synth called directly: options in, outcome out, as ``gpustack synth`` and
``gpustack template`` call it (the command's text and exit codes: tests/test_synth_cli.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.actions.synth import NoProfiles, SynthOptions, render_one, run
from tests.test_synth_cli import PROFILE


@pytest.fixture
def profiles(tmp_path: Path) -> Path:
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "a.yaml").write_text(PROFILE.format(name="a"))
    return folder


def test_a_folder_without_profiles_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(NoProfiles, match="no \\*.yaml profiles found"):
        run(SynthOptions((tmp_path / "empty",), out=tmp_path / "dist", jobs=1))


def test_an_invalid_profile_is_refused_and_nothing_written(profiles: Path) -> None:
    (profiles / "a.yaml").write_text(PROFILE.format(name="a") + "bogus: 1\n")
    out = profiles.parent / "dist"
    done = run(SynthOptions((profiles,), out=out, jobs=1))
    assert done.refused is not None and not done.refused.ok
    assert done.plan is None and not out.exists()


def test_write_then_check(profiles: Path) -> None:
    """A write, a check that finds it up to date, then (after an edit) one that does not; the
    check writes nothing and names the change."""
    out = profiles.parent / "dist"
    notes: list[str] = []
    written = run(SynthOptions((profiles,), out=out, jobs=1, on_note=notes.append))
    assert (written.written, written.unchanged, written.removed) == (("a",), (), ())
    assert (out / "clusters" / "a").is_dir()
    check = SynthOptions((profiles,), out=out, check=True, full=True, jobs=1)
    assert run(check).stale == () and run(check).problems == ()
    (profiles / "a.yaml").write_text(PROFILE.format(name="a").replace("580.105.08", "570.133.20"))
    stale = run(SynthOptions((profiles,), out=out, check=True, diff=True, jobs=1))
    assert stale.stale and all(change == "differs" for change, _ in stale.stale)
    assert "+" in stale.diffs and "570.133.20" in stale.diffs
    assert run(SynthOptions((profiles,), out=out, check=True, jobs=1)).diffs == ""


def test_render_one_writes_nothing(profiles: Path) -> None:
    done = render_one(profiles / "a.yaml")
    assert done.refused is None and done.cluster is not None
    assert done.cluster.output.name == "a"
    assert not (profiles.parent / "dist").exists()
