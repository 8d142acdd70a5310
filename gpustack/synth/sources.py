"""Which profiles a ``gpustack synth`` run reads when the user names none.

``profiles/`` in the working folder is the convention; a fresh checkout or a first try has none,
so the packaged default profile (a complete, sensible stack) is synthesized instead, and the
CLI says so, so nobody mistakes it for their own configuration.

The default is a first-run convenience, never a fallback for a repository that lost its
profiles: where the output folder already holds clusters synthesized from real profiles (its
index says so), a missing or dangling ``profiles/`` is an error, and the default profile is used
there only when asked for (``default=True``, ``--default-profile``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from gpustack.synth.errors import SynthError
from gpustack.synth.index import PACKAGED_DEFAULT, index_path, read_index

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


def resolve_inputs(
    paths: Sequence[Path],
    cwd: Path | None = None,
    *,
    out: Path | None = None,
    default: bool = False,
) -> Inputs:
    """Explicit paths win; else ``profiles/``; else the packaged default profile, but only for
    an output folder that holds no cluster of a real profile yet (or when ``default`` is set).
    """
    if default:
        return Inputs((packaged_default_profile(),), packaged=True)
    if paths:
        return Inputs(tuple(paths))
    base = cwd or Path.cwd()
    profiles = base / DEFAULT_PROFILES_DIR
    if profiles.exists():
        return Inputs((DEFAULT_PROFILES_DIR,))
    if os.path.lexists(profiles):
        raise SynthError(
            f"{DEFAULT_PROFILES_DIR} is a link to {os.readlink(profiles)}, which does not exist; "
            "fix the link, or name the profiles to synthesize as PATH"
        )
    where = base / out if out is not None else None
    index = read_index(where) if where is not None else None
    real = sorted(
        n for n, e in (index.clusters if index else {}).items() if e.profile != PACKAGED_DEFAULT
    )
    if real:
        shown = index_path(out) if out is not None else ""
        raise SynthError(
            f"no {DEFAULT_PROFILES_DIR}/ here, but {shown} lists clusters synthesized from "
            f"profiles ({', '.join(real[:3])}{', ...' if len(real) > 3 else ''}); run gpustack "
            f"where {DEFAULT_PROFILES_DIR}/ is, or name the profiles as PATH "
            "(--default-profile synthesizes the packaged default profile anyway)"
        )
    return Inputs((packaged_default_profile(),), packaged=True)
