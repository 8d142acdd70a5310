"""The nearest known name to a misspelled one, for "did you mean ...?" hints.

Shared by the rules that compare a name with a known set (resources, DeviceClasses, claim
templates, device attributes) and by ``doctor``, so every hint picks the same way.
"""

from __future__ import annotations

from collections.abc import Iterable


def distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions and substitutions cost 1)."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def nearest(name: str, known: Iterable[str]) -> str:
    """The known name closest to ``name`` (case first ignored, then counted; ties by name).
    ``known`` must not be empty."""
    return min(sorted(known), key=lambda k: (distance(name.lower(), k.lower()), distance(name, k)))


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``did you mean x?`` naming the nearest of ``known``; empty when nothing is known."""
    names = sorted(set(known))
    return f"did you mean {nearest(name, names)}?" if names else ""
