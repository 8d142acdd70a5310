"""gpustack.actions.accept called directly: the plan both commands share, the manifests and the
report, each with its refusals (no click)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.actions.accept import (
    ManifestsOptions,
    PlanOptions,
    ReportOptions,
    manifests,
    plan,
    report,
)
from gpustack.actions.errors import Refused
from tests.accept.conftest import EVERY_PROFILE, load
from tests.accept.test_cli import GOOD

NODESTATE = Path(__file__).parents[1] / "nodestate"
PROFILE = NODESTATE / "h100-eks.yaml"
STATE = NODESTATE / "fixtures" / "eks-h100.json"
WITHOUT_PLUGIN = next(p for p in EVERY_PROFILE if not load(p).device_plugin.enabled)


@pytest.mark.parametrize(
    ("options", "hosts"),
    [
        (PlanOptions(PROFILE, state=STATE), 2),
        (PlanOptions(PROFILE, nodes=2), 0),
    ],
    ids=["state", "counted"],
)
def test_the_plan_names_nodes_only_from_a_state(options: PlanOptions, hosts: int) -> None:
    planned = plan(options)
    assert planned.refused is None and planned.profile is not None
    assert [len(g.hosts) for g in planned.groups] == [hosts]
    assert [g.nodes for g in planned.groups] == [2]


@pytest.mark.parametrize(
    ("state", "unpinned", "pinned"),
    [(STATE, False, 4), (None, True, 0)],  # with a state: a Job per node, the gang's unpinned
)
def test_manifests_are_pinned_with_a_state(state: Path | None, unpinned: bool, pinned: int) -> None:
    done = manifests(ManifestsOptions(PlanOptions(PROFILE, nodes=2, state=state)))
    assert done.unpinned is unpinned
    jobs = [o for o in done.objects if o["kind"] == "Job"]
    on_a_node = [
        j for j in jobs if "kubernetes.io/hostname" in j["spec"]["template"]["spec"]["nodeSelector"]
    ]
    assert len(on_a_node) == pinned


def test_manifests_use_the_image_given() -> None:
    done = manifests(ManifestsOptions(PlanOptions(PROFILE), image="example.com/torch:1"))
    images = {
        c["image"]
        for o in done.objects
        if o["kind"] == "Job"
        for c in o["spec"]["template"]["spec"]["containers"]
    }
    assert images == {"example.com/torch:1"}


@pytest.mark.parametrize(
    ("lines", "ok", "failed"),
    [(GOOD, True, []), (GOOD[:-1], False, ["allreduce-nodes"])],
    ids=["all", "one-missing"],
)
def test_report_from_logs(tmp_path: Path, lines: list[str], ok: bool, failed: list[str]) -> None:
    logs = tmp_path / "accept.log"
    logs.write_text("\n".join(lines) + "\n")
    done = report(ReportOptions(PlanOptions(PROFILE, nodes=2), logs))
    assert done.ok is ok
    assert [r.check for r in done.results if not r.ok] == failed


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (PlanOptions(WITHOUT_PLUGIN), f"{WITHOUT_PLUGIN}: devicePlugin.enabled is false"),
        (PlanOptions(PROFILE, state=PROFILE), f"^{PROFILE}: not JSON"),
    ],
    ids=["no-device-plugin", "bad-state"],
)
def test_what_the_plan_refuses(options: PlanOptions, says: str) -> None:
    with pytest.raises(Refused, match=says):
        plan(options)


def test_logs_that_cannot_be_read_are_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused, match=f"^{tmp_path}: "):
        report(ReportOptions(PlanOptions(PROFILE, nodes=2), tmp_path))


def test_an_invalid_profile_is_the_outcome(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(PROFILE.read_text() + "bogus: 1\n")
    options = PlanOptions(profile)
    made = manifests(ManifestsOptions(options))
    read = report(ReportOptions(options, tmp_path / "never-read.log"))
    assert made.refused is not None and not made.objects
    assert read.refused is not None and not read.ok
