"""Switching another component on or off leaves the driver DaemonSet byte-identical.

The driver DaemonSet updates ``OnDelete``: any change to it leaves every driver pod out of date,
and an Argo CD health check on it (or ``kubectl rollout status``) then asks operators to delete
each driver pod, which on a GPU node means draining it. Turning the DCGM exporter, GFD or the MIG
manager on is no driver change, so it must not show up in the driver's bytes.

Why seeding every GPU client's deploy label is safe (k8s-driver-manager v0.12.0,
``cmd/driver-manager/main.go``): ``fetchCurrentLabels`` reads a fixed list of
``nvidia.com/gpu.deploy.*`` labels from the node; ``evictAllGPUOperatorComponents`` sets the ones
that are ``true`` to ``paused-for-driver-upgrade`` (``maybeSetPaused`` leaves an absent label
absent); ``waitForPodsToTerminate`` waits for the pods of fixed ``app`` labels on the node (the
MIG manager's only when its label has a value), which returns at once where none run. So a label
seeded for a component the profile does not deploy is paused, waited for (no pods) and restored,
and the driver pod need not know which GPU clients are switched on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpustack.fields.declare import camel
from gpustack.profile import components
from gpustack.profile.explain import schema_findings
from gpustack.profile.loader import ProfileLoader, profiles_root
from gpustack.profile.model import Profile
from gpustack.profile.rules import rule_findings
from gpustack.synth.layout import layout_cluster
from tests.constructs.conftest import Synth, merge

REPO = Path(__file__).resolve().parents[2]
PROFILES = sorted((REPO / "profiles").glob("*.yaml"))

#: Every GPU client (registry rows the driver manager pauses) with a section of its own to switch:
#: the DCGM exporter, GFD and the MIG manager, and the toolkit and device plugin where a profile
#: may go without them.
TOGGLES = tuple(
    c for c in components.REGISTRY if c.gpu_client and c.deploy_label and c.section is not None
)


def _valid(data: dict[str, Any]) -> bool:
    return not schema_findings(data, set()) and not rule_findings(Profile.from_dict(data))


def _driver_files(synth: Synth, data: dict[str, Any]) -> dict[str, bytes]:
    out = layout_cluster(data["metadata"]["name"], synth(data))
    return {f.path: f.content for f in out.files if f.path.startswith("driver/")}


@pytest.mark.parametrize("component", TOGGLES, ids=lambda c: c.name)
@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_switching_a_gpu_client_leaves_the_driver_daemonset_alone(
    synth: Synth, path: Path, component: components.Component
) -> None:
    data = ProfileLoader().load(path, str(path), profiles_root(path)).data
    if not data.get("driver", {}).get("enabled", True):
        pytest.skip(f"{path.name} deploys no driver")
    before = Profile.from_dict(data)
    was_on = {c.name for c in components.enabled(before)}
    section = camel(component.section or "")
    flipped = merge(data, {section: {"enabled": not component.enabled(before)}})
    if not _valid(flipped):
        pytest.skip(f"{path.name} does not validate with {section} switched")
    now_on = {c.name for c in components.enabled(Profile.from_dict(flipped))}
    assert was_on != now_on, f"switching {section} changed no component"
    old, new = _driver_files(synth, data), _driver_files(synth, flipped)
    daemonsets = [p for p in old if "/daemonset-" in p]
    assert daemonsets, "no driver DaemonSet file"
    for p in daemonsets:
        assert new.get(p) == old[p], f"{p} changed when {section} was switched"
