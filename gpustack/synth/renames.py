"""Clusters renamed by a run: one cluster's folder dropped and another's added in its place.

A ``metadata.name`` edit (or a profile renamed with it) reads, file by file, as every file of the
old folder extra and every file of the new one missing: dozens of lines that hide what happened.
The index says it in one line: a cluster this run removes and a new one it writes are a rename
when the new one comes from the same profile file, or else holds the same files (paths within
the folder) as the old one did.
"""

from __future__ import annotations

from gpustack.synth.plan import Plan


def renames(plan: Plan) -> tuple[tuple[str, str], ...]:
    """``(old, new)`` cluster names of ``plan``'s renames (an old folder that still exists), each
    name in one pair at most."""
    added = {
        sc.output.name: (sc.profile, frozenset(sc.output.paths()))
        for sc in plan.write
        if sc.output.name not in plan.before.clusters
    }
    pairs: list[tuple[str, str]] = []
    for old in (r.name for r in plan.removals):
        entry = plan.before.clusters[old]
        free = sorted(n for n in added if n not in {new for _, new in pairs})
        same_profile = [n for n in free if added[n][0] == entry.profile]
        same_files = [n for n in free if added[n][1] == frozenset(entry.files)]
        match = same_profile or same_files
        if len(match) == 1:
            pairs.append((old, match[0]))
    return tuple(pairs)
