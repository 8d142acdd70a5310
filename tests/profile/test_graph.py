"""The readiness and placement graph (issue 20, Deliver 2): who waits for which readiness file,
who writes it, and which labels place the pods.

Data-driven: every example profile has a writer on the same nodes for every wait and no
self-placed selector label; each way the graph can break is a constructed profile (or a
registry swapped for one whose rows say so) refused at the line that causes it. That the
graph says what the synthesized scripts do is ``tests/constructs/test_readiness_files.py``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gpustack.profile import components, readiness, rules
from gpustack.profile.document import format_path
from gpustack.profile.graph import graph_edges
from gpustack.profile.loader import ProfileLoader, profiles_root
from gpustack.profile.model import Profile
from gpustack.scan import discover

REPO_PROFILES = Path(__file__).parents[2] / "profiles"
CASES = Path(__file__).parent / "cases"

DRIVER_READY = readiness.validation(readiness.DRIVER_READY)
TOOLKIT_READY = readiness.validation(readiness.TOOLKIT_READY)
TOOLKIT_CONFIGURED = readiness.validation(readiness.TOOLKIT_CONFIGURED)
GRAPH_RULES = ("readiness-files-written", "node-selector-not-self-labelled")


def load(path: Path) -> Profile:
    return Profile.from_dict(ProfileLoader().load(path, path.name, profiles_root(path)).data)


def make(**sections: Any) -> Profile:
    return Profile.from_dict({"metadata": {"name": "graph"}, **sections})


def rule(rule_id: str) -> rules.Rule:
    found = rules.get(rule_id)
    assert isinstance(found, rules.Rule), rule_id
    return found


def graph_findings(profile: Profile) -> list[tuple[str | None, str]]:
    return [(f.rule, format_path(f.path)) for r in GRAPH_RULES for f in rule(r)(profile)]


@pytest.mark.parametrize("path", discover([REPO_PROFILES, CASES / "valid"]), ids=lambda p: p.stem)
def test_every_valid_profile_has_a_writer_for_every_wait(path: Path) -> None:
    profile = load(path)
    graph = graph_edges(profile)
    assert [e.file for e in graph.edges if not e.satisfied] == []
    assert graph_findings(profile) == []
    # a profile with gpustack's stack waits for something: the graph is not empty by accident
    if profile.toolkit.enabled or profile.driver.enabled:
        assert graph.edges


#: name -> (profile sections, rule ID, JSON path of the finding): each way the graph breaks.
REFUSED: dict[str, tuple[Mapping[str, Any], str, str]] = {
    "mig-manager-without-driver-or-toolkit": (
        {
            "driver": {"enabled": False},
            "toolkit": {"enabled": False},
            "gpus": {"product": "A100-SXM4-80GB", "mig": {"1g.10gb": 7}},
            "devicePlugin": {"migStrategy": "single"},
        },
        "readiness-files-written",
        "$.driver.enabled",
    ),
    "gfd-label-selects-gfd": (
        {"cluster": {"nodeSelector": {"nvidia.com/cuda.driver.major": "595"}}},
        "node-selector-not-self-labelled",
        "$.cluster.nodeSelector['nvidia.com/cuda.driver.major']",
    ),
    "mig-label-selects-gfd": (
        {"cluster": {"nodeSelector": {"nvidia.com/mig.capable": "true"}}},
        "node-selector-not-self-labelled",
        "$.cluster.nodeSelector['nvidia.com/mig.capable']",
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_each_broken_graph_is_refused_at_its_line(name: str) -> None:
    sections, rule_id, path = REFUSED[name]
    assert graph_findings(make(**sections)) == [(rule_id, path)]


def test_waits_follow_the_profile() -> None:
    """The waits change with the profile (issue 20, item 2): without the plugin's runtime
    check the GPU clients wait for the toolkit's own file, without the toolkit for the driver's."""

    def waits(**sections: Any) -> dict[str, frozenset[str]]:
        return {p.name: p.waits for p in graph_edges(make(**sections)).pods if p.waits}

    assert waits()["gpu-feature-discovery"] == {TOOLKIT_READY}
    assert waits(devicePlugin={"enabled": False})["gpu-feature-discovery"] == {TOOLKIT_CONFIGURED}
    no_toolkit = waits(toolkit={"enabled": False}, dcgmExporter={"enabled": True})
    assert no_toolkit["dcgm-exporter"] == {DRIVER_READY}
    assert no_toolkit["device-plugin"] == {DRIVER_READY}
    assert "container-toolkit" not in no_toolkit


def test_a_preinstalled_driver_is_announced_by_the_toolkit() -> None:
    graph = graph_edges(make(driver={"enabled": False}))
    (edge,) = [e for e in graph.edges if e.waiter.name == "container-toolkit"]
    assert (edge.file, [w.name for w in edge.writers]) == (DRIVER_READY, ["container-toolkit"])


def test_the_mofed_driver_is_an_external_prerequisite_not_an_error() -> None:
    profile = make(driver={"rdma": {"enabled": True}})
    (edge,) = [e for e in graph_edges(profile).edges if e.file == readiness.MOFED_READY]
    assert edge.writers == () and edge.external and "network operator" in edge.external[0]
    assert edge.satisfied and graph_findings(profile) == []
    host_mofed = make(driver={"rdma": {"enabled": True, "useHostMofed": True}})
    assert readiness.MOFED_READY not in {e.file for e in graph_edges(host_mofed).edges}


def test_nfd_labels_place_nothing_in_a_cycle() -> None:
    # the GPU node rule's label is written by NFD's worker, which runs on every node
    profile = make(cluster={"nodeSelector": {"nvidia.com/gpu.present": "true"}})
    graph = graph_edges(profile)
    assert [w.name for w in graph.label_writers("nvidia.com/gpu.present")] == [
        "node-feature-discovery"
    ]
    assert graph.self_placed("nvidia.com/gpu.present") == ()


@pytest.fixture
def swap_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Replace one registry row's fields for the test (the graph reads the registry when
    called, so a swapped row is seen everywhere)."""

    def swap(name: str, **fields: Any) -> None:
        rows = tuple(replace(c, **fields) if c.name == name else c for c in components.REGISTRY)
        monkeypatch.setattr(components, "REGISTRY", rows)

    yield swap


def test_a_writer_on_fewer_nodes_is_refused_at_the_waiter(swap_registry: Any) -> None:
    # NFD's worker runs on every node; a wait that only it could satisfy is fine, but a file
    # written by a pod placed on other nodes than its waiter's is not
    swap_registry(
        "node-feature-discovery",
        waits_for=lambda p: frozenset({TOOLKIT_READY}),
    )
    (finding,) = rule("readiness-files-written")(make())
    assert format_path(finding.path) == "$.nodeFeatureDiscovery"
    assert "device-plugin writes, on other nodes" in finding.message


def test_a_file_no_component_writes_is_refused_at_the_waiter(swap_registry: Any) -> None:
    swap_registry("dcgm-exporter", waits_for=lambda p: frozenset({"/run/nvidia/nobody"}))
    profile = make(dcgmExporter={"enabled": True})
    (finding,) = rule("readiness-files-written")(profile)
    assert format_path(finding.path) == "$.dcgmExporter"
    assert finding.hint == "set dcgmExporter.enabled: false"


def test_a_label_only_a_selected_pod_writes_is_a_cycle_whoever_writes_it(
    swap_registry: Any,
) -> None:
    # the GPU node rule's label, were NFD's worker placed like the stack, would be a cycle too
    swap_registry("node-feature-discovery", placement=components.GPU_NODES)
    profile = make(cluster={"nodeSelector": {"nvidia.com/gpu.present": "true"}})
    assert graph_findings(profile) == [
        ("node-selector-not-self-labelled", "$.cluster.nodeSelector['nvidia.com/gpu.present']")
    ]
