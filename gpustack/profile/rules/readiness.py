"""Rule on the readiness graph: every file a pod waits for is written on its nodes.

Why: the stack orders itself on each node with readiness files (:mod:`gpustack.profile.readiness`);
a pod that waits for a file no pod on its node writes stays in its init container forever, with
valid manifests and no error anywhere (issue 20, item 2). :func:`gpustack.profile.graph.graph_edges`
says who waits for and writes what under this profile; a wait without a writer is reported at
the switch of a component that would write the file, or at the waiter's section when none would.
Files the cluster provides (the MOFED driver's) are prerequisites, not findings.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.fields.declare import camel
from gpustack.profile.document import JsonPath
from gpustack.profile.finding import Finding
from gpustack.profile.graph import Edge, could_write, graph_edges
from gpustack.profile.model import Profile


def _section_path(section: str | None) -> JsonPath:
    return (camel(section),) if section else ()


def readiness_files_written(p: Profile) -> Iterator[Finding]:
    for edge in graph_edges(p).edges:
        if not edge.satisfied:
            yield _finding(p, edge)


def _finding(p: Profile, edge: Edge) -> Finding:
    waiter = edge.waiter.name
    if edge.elsewhere:
        writers = ", ".join(w.name for w in edge.elsewhere)
        return Finding(
            _section_path(edge.waiter.component.section),
            f"{waiter} waits for {edge.file}, which only {writers} writes, on other nodes than"
            f" {waiter}'s: on the rest its pods never start",
            f"place {writers} on every node {waiter} runs on",
        )
    candidates = could_write(p, edge.file)
    if candidates:
        switches = [f"{camel(c.section)}.enabled: true" for c in candidates if c.section]
        return Finding(
            (*_section_path(candidates[0].section), "enabled"),
            f"{waiter} waits for {edge.file}, which no pod of this profile writes"
            f" ({' or '.join(c.name for c in candidates)} would): its pods never start",
            f"set {' or '.join(switches)}, or {_turn_off(edge)}",
        )
    return Finding(
        _section_path(edge.waiter.component.section),
        f"{waiter} waits for {edge.file}, which no gpustack component writes: its pods never start",
        _turn_off(edge),
    )


def _turn_off(edge: Edge) -> str:
    section = edge.waiter.component.section
    return f"set {camel(section)}.enabled: false" if section else f"leave {edge.waiter.name} out"
