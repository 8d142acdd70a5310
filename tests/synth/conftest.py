"""Fixtures for writer tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A repository-like folder with ``profiles/`` for clusters a and b, and no ``dist/`` yet."""
    (tmp_path / "profiles").mkdir()
    for name in ("a", "b"):
        (tmp_path / "profiles" / f"{name}.yaml").write_text(f"metadata: {{name: {name}}}\n")
    return tmp_path
