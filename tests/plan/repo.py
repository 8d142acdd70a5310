"""A real git repository for the plan's tests: the repository's profiles and dist/ copied into
a temporary folder and committed, so the working tree can be changed against ``HEAD``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, timeout=120)


def committed_copy(root: Path) -> Path:
    """``root`` holding profiles/ and dist/, committed once; returns ``root``."""
    shutil.copytree(REPO / "profiles", root / "profiles")
    shutil.copytree(REPO / "dist", root / "dist")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    return root


def edit(root: Path, cluster: str, old: str, new: str) -> Path:
    """The cluster's profile with ``old`` replaced once by ``new``; returns its path."""
    profile = root / "profiles" / f"{cluster}.yaml"
    text = profile.read_text()
    assert old in text
    profile.write_text(text.replace(old, new, 1))
    return profile
