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


def _within(short: str, long: str) -> bool:
    """Whether ``short`` is ``long`` with characters left out (a word dropped in typing)."""
    rest = iter(long)
    return all(ch in rest for ch in short)


def nearest(name: str, known: Iterable[str]) -> str:
    """The known name closest to ``name`` by edit distance (case first ignored, then counted;
    ties by name); when none is within two edits, the closest of those ``name`` abbreviates
    (a word left out: ``compute-domain-channel`` of ``compute-domain-default-channel``), if any.
    ``known`` must not be empty."""
    names = sorted(known)

    def key(k: str) -> tuple[int, int]:
        return distance(name.lower(), k.lower()), distance(name, k)

    best = min(names, key=key)
    within = [k for k in names if _within(name.lower(), k.lower())]
    return best if key(best)[0] <= 2 or not within else min(within, key=key)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``did you mean x?`` naming the nearest of ``known``; empty when nothing is known."""
    names = sorted(set(known))
    return f"did you mean {nearest(name, names)}?" if names else ""
