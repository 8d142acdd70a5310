"""A profile's readiness and placement graph as a Mermaid flowchart.

Why generated: the picture of which pod waits for which file, who writes it, and which node
labels place the stack is the graph the readiness and node-label rules check
(:func:`gpustack.profile.graph.graph_edges`, read from the component registry). Drawn from that
graph, it cannot show a wait the manifests do not have or miss one they do; ``gpustack explain
--graph PROFILE`` prints it for any cluster and the site shows it for two example profiles.

The text is Mermaid (``flowchart``): the site renders it with its own theme, and any Markdown
viewer with Mermaid (GitHub, GitLab) renders the command's output too.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from gpustack.profile import components
from gpustack.profile import node_label_catalog as catalog
from gpustack.profile.graph import Graph, Pods, graph_edges
from gpustack.profile.model import Profile

#: The folder every gpustack readiness file lives in; the diagram names files relative to it.
VALIDATIONS = "/run/nvidia/validations"


def _quote(*lines: str) -> str:
    """``lines`` as one Mermaid label: double quotes and markup characters as entities, a line
    break between lines."""
    escaped = (t.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;") for t in lines)
    return '"' + "<br/>".join(escaped) + '"'


def _file_label(path: str) -> str:
    if posixpath.dirname(path) == VALIDATIONS:
        return posixpath.basename(path)
    return path


def _drawn(graph: Graph) -> tuple[Pods, ...]:
    """The pods that take part in readiness or placement (a pod that neither waits, writes a
    file nor labels nodes has no edge to draw)."""
    return tuple(p for p in graph.pods if p.waits or p.writes or p.labels)


def mermaid(profile: Profile) -> str:
    """The Mermaid flowchart of ``profile``'s readiness and placement graph."""
    graph = graph_edges(profile)
    pods = _drawn(graph)
    ids = {p.name: f"c{i}" for i, p in enumerate(pods)}
    files = sorted({e.file for e in graph.edges} | {f for p in pods for f in p.writes})
    file_ids = {f: f"f{i}" for i, f in enumerate(files)}
    # on a GPU node: the readiness files, and the writers outside gpustack of those it waits for
    on_node = [f"    {file_ids[f]}[/{_quote(_file_label(f))}/]" for f in files]
    edges = []
    for p in pods:
        edges += [f"  {ids[p.name]} -->|writes| {file_ids[f]}" for f in sorted(p.writes)]
    for i, edge in enumerate(graph.edges):
        edges.append(f"  {file_ids[edge.file]} -->|waited for by| {ids[edge.waiter.name]}")
        if edge.external is not None and not edge.writers:
            who, setting = edge.external
            on_node.append(f"    x{i}[{_quote(who.split(' (')[0], f'for {setting}')}]")
            edges.append(f"  x{i} -.->|writes| {file_ids[edge.file]}")
            edges.append(f"  style x{i} stroke-dasharray:5 5")
        if not edge.satisfied:
            edges.append(f"  style {file_ids[edge.file]} stroke:#d32f2f,stroke-width:3px")
    return (
        "\n".join(["flowchart TB", *_placement(profile, graph, pods, ids, on_node), *edges]) + "\n"
    )


def _placement(
    profile: Profile, graph: Graph, pods: tuple[Pods, ...], ids: dict[str, str], on_node: list[str]
) -> Iterator[str]:
    """The two placements as subgraphs (``on_node`` declares what else the GPU nodes' one
    holds), and the labels of ``cluster.nodeSelector`` with who writes each (a pod
    of the stack, or the labeller outside it that the catalog names)."""
    gpu = [p for p in pods if p.component.placement == components.GPU_NODES]
    every = [p for p in pods if p.component.placement == components.EVERY_NODE]
    if every:
        yield f"  subgraph every_node[{_quote('every node')}]"
        yield from (f"    {ids[p.name]}[{_quote(p.name)}]" for p in every)
        yield "  end"
    if not gpu:
        return
    for i, (key, value) in enumerate(profile.cluster.node_selector):
        yield f"  l{i}{{{{{_quote(f'{key}={value}')}}}}}"
        writers = [w for w in graph.label_writers(key) if w.name in ids]
        yield from (f"  {ids[w.name]} -->|labels| l{i}" for w in writers)
        known = catalog.lookup(key)
        if not writers:
            source = known.source if known is not None else "an administrator (unknown label)"
            yield f"  s{i}([{_quote(source)}])"
            yield f"  s{i} -.->|labels| l{i}"
    yield f"  subgraph gpu_nodes[{_quote('GPU nodes: cluster.nodeSelector')}]"
    yield "    direction TB"  # else Mermaid lays out a subgraph with no outside edge LR
    yield from (f"    {ids[p.name]}[{_quote(p.name)}]" for p in gpu)
    yield from on_node
    yield "  end"
    for i in range(len(profile.cluster.node_selector)):
        yield f"  l{i} -->|places| gpu_nodes"


def text(profile: Profile) -> str:
    """The same graph as plain lines: per pod, where it runs, what it waits for and who writes
    each file; then who writes the labels of ``cluster.nodeSelector``."""
    graph = graph_edges(profile)
    lines = []
    for p in _drawn(graph):
        where = "every node" if p.component.placement == components.EVERY_NODE else "GPU nodes"
        lines.append(f"{p.name} ({where})")
        for edge in (e for e in graph.edges if e.waiter is p):
            if edge.writers:
                by = ", ".join(w.name for w in edge.writers)
            elif edge.external is not None:
                by = f"{edge.external[0]}, outside gpustack"
            else:
                by = "nothing on its nodes (it never starts)"
            lines.append(f"  waits for {edge.file}: written by {by}")
        lines += [f"  writes {f}" for f in sorted(p.writes)]
        lines += [f"  labels nodes: {source}" for source in sorted(p.labels)]
    for key, value in profile.cluster.node_selector:
        writers = [w.name for w in graph.label_writers(key)]
        known = catalog.lookup(key)
        source = known.source if known is not None else "an administrator (unknown label)"
        lines.append(f"GPU nodes are selected by {key}={value}: written by "
                     f"{', '.join(writers) if writers else source}")  # fmt: skip
    return "\n".join(lines) + "\n"
