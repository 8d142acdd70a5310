"""Which profiles a ``gpustack synth`` run reads when the user names none.

``profiles/`` in the working folder is the convention. Without it and without PATH, a run is
refused (:class:`NoProfilesHere`, a usage error): run in a subfolder (``cd profiles && gpustack
synth``), it used to synthesize the packaged default profile into a ``dist/`` there, with exit 0,
where the user meant their own profiles (issue #32). The packaged default profile (a complete,
sensible stack, to see what the output looks like) is synthesized only when asked for
(``default=True``, ``--default-profile``).

Where the output folder already holds clusters synthesized from real profiles (its index says
so), a missing or dangling ``profiles/`` is an error of its own that names them.
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


class NoProfilesHere(Exception):
    """No PATH, no ``profiles/`` and no ``--default-profile``: a usage error (exit 2)."""


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
    """Explicit paths win; else ``profiles/``; the packaged default profile only when
    ``default`` is set; else :class:`NoProfilesHere` (or a :class:`SynthError` naming the
    clusters of real profiles that ``out`` holds)."""
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
    raise NoProfilesHere(
        f"no {DEFAULT_PROFILES_DIR}/ here ({base}); run gpustack synth where "
        f"{DEFAULT_PROFILES_DIR}/ is, name the profiles as PATH, or pass --default-profile for "
        "the packaged default profile"
    )
