"""Fixtures for writer tests: fixture clusters and a snapshot of a whole folder tree."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpustack.synth.layout import layout_cluster
from gpustack.synth.writer import SourcedCluster

from .objects import stack


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` (folders map to ``None``), to compare before and after."""
    found: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            found[os.path.relpath(os.path.join(dirpath, d), root)] = None
        for f in filenames:
            p = os.path.join(dirpath, f)
            found[os.path.relpath(p, root)] = Path(p).read_bytes()
    return found


def cluster(name: str, profile: str | None = None, **kw: bool) -> SourcedCluster:
    return SourcedCluster(layout_cluster(name, stack(**kw)), profile or f"../profiles/{name}.yaml")


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A repository-like folder with ``profiles/`` for clusters a and b, and no ``dist/`` yet."""
    (tmp_path / "profiles").mkdir()
    for name in ("a", "b"):
        (tmp_path / "profiles" / f"{name}.yaml").write_text(f"metadata: {{name: {name}}}\n")
    return tmp_path
