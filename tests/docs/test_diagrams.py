"""The readiness and placement diagram says what the graph says: every wait, every writer and
every label of the node selector, for every example profile; a wait nobody satisfies is drawn
as such; ``gpustack explain`` prints it. (That it renders is tests/docs/test_browser.py.)"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpustack import explain as diagrams
from gpustack.checker import check_paths
from gpustack.cli import main
from gpustack.profile.graph import Graph, graph_edges
from gpustack.profile.model import Profile
from tests.docs.blocks import REPO

PROFILES = sorted((REPO / "profiles").glob("*.yaml"))
_DECLARED = re.compile(r'^\s*(?P<id>[a-z]\d+)[\[{(/]+"(?P<label>[^"]*)"', re.MULTILINE)


def _profile(path: Path) -> Profile:
    checked = check_paths([path])
    assert checked.ok, path
    return checked.profiles[0].profile


def _ids(text: str) -> dict[str, str]:
    """Label -> node id, from the diagram's declarations (the first line of a label)."""
    return {m.group("label").split("<br/>")[0]: m.group("id") for m in _DECLARED.finditer(text)}


@pytest.mark.parametrize("path", PROFILES, ids=[p.stem for p in PROFILES])
def test_the_diagram_draws_every_edge_of_the_graph(path: Path) -> None:
    profile = _profile(path)
    text = diagrams.mermaid(profile)
    ids = _ids(text)
    graph = graph_edges(profile)
    for edge in graph.edges:
        file = ids[diagrams._file_label(edge.file)]
        assert f"  {file} -->|waited for by| {ids[edge.waiter.name]}\n" in text
        for writer in edge.writers:
            assert f"  {ids[writer.name]} -->|writes| {file}\n" in text
    for i, (key, value) in enumerate(profile.cluster.node_selector):
        assert ids[f"{key}={value}"] == f"l{i}"
        assert f"  l{i} -->|places| gpu_nodes\n" in text
        for writer in graph.label_writers(key):
            assert f"  {ids[writer.name]} -->|labels| l{i}\n" in text
    assert "stroke:#d32f2f" not in text  # the examples validate: every wait is satisfied


def test_a_wait_nobody_satisfies_is_marked(monkeypatch: pytest.MonkeyPatch) -> None:
    profile = _profile(REPO / "profiles" / "lab-1gpu.yaml")
    real = graph_edges(profile)
    first = real.edges[0]
    unwritten = dataclasses.replace(first, writers=(), external=None)
    broken = Graph(real.pods, (unwritten, *real.edges[1:]))
    monkeypatch.setattr(diagrams, "graph_edges", lambda _: broken)
    text = diagrams.mermaid(profile)
    file = _ids(text)[diagrams._file_label(first.file)]
    assert f"  style {file} stroke:#d32f2f,stroke-width:3px\n" in text
    assert f"waits for {first.file}: written by nothing on its nodes" in diagrams.text(profile)


def test_a_label_from_outside_the_stack_names_its_writer() -> None:
    text = diagrams.mermaid(_profile(REPO / "profiles" / "h100-prod-east.yaml"))
    assert '  s1(["the kubelet"])\n  s1 -.->|labels| l1\n' in text
    assert "NVIDIA's network operator<br/>for driver.rdma.enabled" in text


def test_explain_prints_the_graph(tmp_path: Path) -> None:
    path = REPO / "profiles" / "a100-mig-mixed.yaml"
    runner = CliRunner()
    graph = runner.invoke(main, ["explain", "--graph", str(path)])
    assert graph.exit_code == 0, graph.output
    assert graph.output == diagrams.mermaid(_profile(path))
    plain = runner.invoke(main, ["explain", str(path)])
    assert plain.exit_code == 0, plain.output
    assert (
        "  waits for /run/nvidia/validations/toolkit-ready: written by device-plugin\n"
        in plain.output
    )
    assert "mig-manager (GPU nodes)\n" in plain.output


def test_explain_refuses_an_invalid_profile(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: gpustack.dev/v1alpha1\nkind: Profile\nmetadata: {name: x}\n"
        "driver: {version: 1}\n",
        encoding="utf-8",
    )
    done = CliRunner().invoke(main, ["explain", "--graph", str(bad)])
    assert done.exit_code == 1
    assert done.stdout == ""
    assert f"{bad}:4:19: $.driver.version:" in done.stderr
