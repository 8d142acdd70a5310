"""One profile loaded for an action that reads it against a cluster (doctor, accept).

Those actions need a valid profile before anything else; an invalid one is not an exception
but the outcome's ``refused`` (validate's result, which the CLI prints as validate does), the
way :func:`gpustack.actions.synth.render_one` refuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpustack.checker import CheckResult
    from gpustack.profile.model import Profile


@dataclass(frozen=True)
class Loaded:
    """The profile at a path, or (``profile`` ``None``) the result that refused it."""

    result: CheckResult
    profile: Profile | None


def load_one(path: Path) -> Loaded:
    """The validated profile at ``path``; refused unless it is exactly one valid profile."""
    from gpustack.checker import check_paths

    result = check_paths([path])
    if not result.ok or len(result.profiles) != 1:
        return Loaded(result, None)
    return Loaded(result, result.profiles[0].profile)
