"""Comparing image tags of NVIDIA's components, for behaviour that changed between releases.

Why: a profile may pin an older component than the default (``migManager.version: v0.13.1``);
where the older release behaves differently (other API calls, other flags), the constructs and
rules ask :func:`tag_at_least` instead of comparing strings. A tag that is not a release number
(a private build, ``latest``) is taken to be current: gpustack then renders what the default
release needs.
"""

from __future__ import annotations

import re

_RELEASE = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)")


def release(tag: str) -> tuple[int, int, int] | None:
    """``"v0.15.0"`` -> ``(0, 15, 0)``; ``"4.6.0-4.8.3-distroless"`` -> ``(4, 6, 0)``; else None."""
    found = _RELEASE.match(tag)
    if not found:
        return None
    major, minor, patch = (int(g) for g in found.groups())
    return major, minor, patch


def tag_at_least(tag: str, floor: str) -> bool:
    """True when ``tag`` is release ``floor`` or newer, or is no release number at all."""
    have, need = release(tag), release(floor)
    if need is None:
        raise ValueError(f"{floor!r} is not a release number")
    return have is None or have >= need
