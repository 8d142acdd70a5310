"""Which profiles a ``gpustack synth`` run reads when the user names none.

``profiles/`` in the working folder is the convention; a fresh checkout or a first try has none,
so the packaged default profile (a complete, sensible stack) is synthesized instead, and the
CLI says so, so nobody mistakes it for their own configuration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

#: Read when no path is given and it exists in the working folder.
DEFAULT_PROFILES_DIR = Path("profiles")


def packaged_default_profile() -> Path:
    """The default profile shipped inside the package (``gpustack/data/default-profile.yaml``)."""
    return Path(str(resources.files("gpustack").joinpath("data", "default-profile.yaml")))


@dataclass(frozen=True)
class Inputs:
    """Paths to load, and whether they are the packaged default rather than user profiles."""

    paths: tuple[Path, ...]
    packaged: bool = False


def resolve_inputs(paths: Sequence[Path], cwd: Path | None = None) -> Inputs:
    """Explicit paths win; else ``profiles/``; else the packaged default profile."""
    if paths:
        return Inputs(tuple(paths))
    base = cwd or Path.cwd()
    if (base / DEFAULT_PROFILES_DIR).exists():
        return Inputs((DEFAULT_PROFILES_DIR,))
    return Inputs((packaged_default_profile(),), packaged=True)
