"""Run the diagnosis and render it: one line per finding (text) or a JSON object."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from gpustack.doctor.finding import Diagnosis
from gpustack.doctor.nodes import diagnose_nodes
from gpustack.doctor.pending import diagnose_pending
from gpustack.doctor.state import ClusterState
from gpustack.profile.model import Profile


def _pending(state: ClusterState, profile: Profile) -> Iterator[Diagnosis]:
    return diagnose_pending(state)


#: The check modules, in the order they report: nodes (in the order kubectl lists them), then
#: Pending GPU pods. A test finds every ``diagnose_*`` module of the package here.
DIAGNOSES: tuple[Callable[[ClusterState, Profile], Iterator[Diagnosis]], ...] = (
    diagnose_nodes,
    _pending,
)


def diagnose(state: ClusterState, profile: Profile) -> list[Diagnosis]:
    """Every check module's findings, in :data:`DIAGNOSES` order."""
    return [d for run in DIAGNOSES for d in run(state, profile)]


def summary(found: list[Diagnosis], state: ClusterState) -> str:
    if not found:
        return f"healthy: {_plural(len(state.nodes), 'node')}, no Pending GPU pod"
    nodes = sum(d.subject.startswith("node/") for d in found)
    pods = len(found) - nodes
    return (
        f"{_plural(len(found), 'finding')}: {_plural(nodes, 'node')}, "
        f"{_plural(pods, 'Pending GPU pod')}"
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def render_text(found: list[Diagnosis], state: ClusterState) -> str:
    return "".join(f"{d}\n" for d in found) + summary(found, state) + "\n"


def render_json(found: list[Diagnosis], state: ClusterState) -> str:
    doc = {
        "ok": not found,
        "findings": [
            {"subject": d.subject, "check": d.check, "message": d.message, "hint": d.hint}
            for d in found
        ],
        "summary": summary(found, state),
    }
    return json.dumps(doc, indent=2) + "\n"
