"""Fixtures for the CLI's user-facing behaviour (issue #24): two small profiles in a folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_synth_cli import PROFILE


@pytest.fixture
def profiles(tmp_path: Path) -> Path:
    folder = tmp_path / "profiles"
    folder.mkdir()
    for name in ("alpha", "beta"):
        (folder / f"{name}.yaml").write_text(PROFILE.format(name=name))
    return folder
