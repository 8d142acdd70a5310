"""gpustack.actions.plan on a real git repository: a copy of the repository's profiles and
dist/ committed in ``tmp_path``, one profile changed in the working tree, the plan read."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpustack.actions.errors import Refused
from gpustack.actions.plan import PlanOptions, run
from gpustack.kube.labels import DRIVER_COMPONENT
from gpustack.plan.model import EVICTS, ClusterPlan
from gpustack.plan.render_text import text
from tests.plan.repo import REPO, committed_copy, edit

CLUSTER = "a100-mig-mixed"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return committed_copy(tmp_path)


def plan_of(repo: Path, old: str, new: str) -> ClusterPlan:
    profile = edit(repo, CLUSTER, old, new)
    dist = {p: p.read_bytes() for p in (repo / "dist").rglob("*") if p.is_file()}
    outcome = run(PlanOptions((profile,), out=repo / "dist", jobs=1))
    assert {p: p.read_bytes() for p in (repo / "dist").rglob("*") if p.is_file()} == dist
    assert outcome.plan is not None
    (cluster,) = outcome.plan.clusters
    assert cluster.name == CLUSTER
    return cluster


def test_a_driver_bump_names_the_driver_daemonset_its_eviction_and_the_commands(
    repo: Path,
) -> None:
    cluster = plan_of(repo, 'version: "595.91.07"', 'version: "580.105.08"')
    (driver,) = [r for r in cluster.rollouts if r.component == DRIVER_COMPONENT]
    assert driver.ref.name == "nvidia-driver-daemonset"
    assert (driver.strategy, driver.version) == ("OnDelete", ("595.91.07", "580.105.08"))
    assert EVICTS in driver.effects
    (step,) = [s for s in cluster.manual if s.ref == driver.ref]
    assert step.kind == "delete-pods"
    assert any("--field-selector spec.nodeName=<node>" in c for c in step.commands)
    shown = text_of(repo, cluster)
    assert "OnDelete" in shown and "GPU workloads are evicted" in shown


def text_of(repo: Path, cluster: ClusterPlan) -> str:
    from gpustack.plan.model import Plan

    return text(Plan("HEAD", "working tree", (cluster,)))


def test_a_label_change_is_metadata_only(repo: Path) -> None:
    """Issue #35's acceptance: a label-only change reports no pod-template change (the
    profile's labels stay off pod templates), so it replaces no pod and needs no manual step."""
    cluster = plan_of(repo, f"  name: {CLUSTER}\n", f"  name: {CLUSTER}\n  labels:\n    env: x\n")
    assert cluster.metadata_only  # every object relabelled in place
    assert cluster.rollouts == () and cluster.replaced == () and cluster.manual == ()
    assert not cluster.disruptive


def test_unchanged_profiles_plan_nothing(repo: Path) -> None:
    outcome = run(PlanOptions((repo / "profiles",), out=repo / "dist", jobs=1))
    assert outcome.plan is not None
    assert {c.status for c in outcome.plan.clusters} == {"unchanged"}
    assert not outcome.plan.disruptive


@pytest.mark.parametrize(
    ("base", "says"),
    [("no-such-ref", "--base no-such-ref: not a commit"), ("HEAD~5", "not a commit")],
)
def test_a_ref_that_is_no_commit_is_refused(repo: Path, base: str, says: str) -> None:
    with pytest.raises(Refused, match=says):
        run(PlanOptions((repo / "profiles",), out=repo / "dist", base=base, jobs=1))


def test_outside_git_is_refused(tmp_path: Path) -> None:
    shutil.copytree(REPO / "profiles", tmp_path / "profiles")
    with pytest.raises(Refused, match="not in a git checkout"):
        run(PlanOptions((tmp_path / "profiles",), out=tmp_path / "dist", jobs=1))
