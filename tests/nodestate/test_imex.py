"""The host's ``nvidia-imex.service`` against ``dra.imexMode`` (rule
``imex-service-matches-mode``), read from an AICR snapshot's ``SystemD`` measurement.

Facts: kubernetes-sigs/dra-driver-nvidia-gpu 95932046 ``site/content/docs/prerequisites.md``
(driver-managed IMEX: the unit masked on every GPU node with the nvidia-imex packages;
host-managed: installed and running); AICR v0.11.1 ``pkg/collector/systemd/systemd.go`` (one
subtype per unit, named as the unit, its D-Bus properties as data: ``ActiveState``,
``UnitFileState``).

The profile is ``h100-eks.yaml`` with ComputeDomains on a 1.36 cluster, and the snapshot is the
recorded one of its node with the API server and kubelet at 1.36 and one more unit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.checker import check_paths
from gpustack.nodestate import facts
from gpustack.nodestate.source import parse
from gpustack.nodestate.validate import check_against
from tests.nodestate.test_aicr import snapshot
from tests.nodestate.test_nodestate import H100, line_of

DRA = """devicePlugin:
  enabled: false
dra:
  enabled: true
  gpus: false
  computeDomains: true
"""
HOST = """  imexMode: hostManaged
  featureGates:
    HostManagedIMEXDaemon: true
"""
#: The unit as systemd reports it: (ActiveState, UnitFileState).
MASKED, RUNNING = ("inactive", "masked"), ("active", "enabled")
STOPPED, ABSENT = ("inactive", "disabled"), ("inactive", "")


def _profile(tmp_path: Path, host: bool) -> Path:
    text = H100.read_text().replace('kubernetesVersion: "1.33"', 'kubernetesVersion: "1.36"')
    path = tmp_path / "profiles" / "h100-eks.yaml"
    path.parent.mkdir()
    path.write_text(text + DRA + (HOST if host else ""))
    return path


def _snapshot(unit: tuple[str, str] | None) -> dict[str, Any]:
    doc = snapshot({("K8s", "server"): {"version": "v1.36.1-eks-0000000"},
                    ("K8s", "node"): {"kubelet-version": "v1.36.1"}})  # fmt: skip
    if unit is not None:
        systemd = next(m for m in doc["measurements"] if m["type"] == "SystemD")
        data = {"ActiveState": unit[0], "UnitFileState": unit[1], "SubState": "dead"}
        systemd["subtypes"].append({"subtype": "nvidia-imex.service", "data": data})
    return doc


def _findings(profile: Path, unit: tuple[str, str] | None) -> list[tuple[str | None, int]]:
    result = check_paths([profile])
    assert result.ok, [str(i) for i in result.issues]
    state = parse(yaml.safe_dump(_snapshot(unit)), "snapshot")
    return [(i.rule, i.line) for i in check_against(result, state).issues]


@pytest.mark.parametrize(
    ("host", "unit", "wrong"),
    [
        (False, MASKED, False),
        (False, ABSENT, False),  # no nvidia-imex package: nothing to mask
        (False, None, False),  # the snapshot did not collect the unit: not guessed at
        (False, RUNNING, True),
        (False, STOPPED, True),  # stopped but not masked: a reboot or package update starts it
        (True, RUNNING, False),
        (True, MASKED, True),
        (True, STOPPED, True),
        (True, None, False),
    ],
)
def test_imex_service_matches_mode(
    tmp_path: Path, host: bool, unit: tuple[str, str] | None, wrong: bool
) -> None:
    profile = _profile(tmp_path, host)
    # unset (driverManaged), the finding stands at the dra section (its value's first line)
    at = line_of(profile, "dra.imexMode" if host else "dra")
    assert _findings(profile, unit) == ([("imex-service-matches-mode", at)] if wrong else [])


def test_snapshot_units_as_facts() -> None:
    node = parse(yaml.safe_dump(_snapshot(RUNNING)), "s").nodes[0]
    assert facts.systemd_unit(node, "nvidia-imex.service") == RUNNING
    assert facts.systemd_unit(node, "containerd.service") == ("active", "")
    assert facts.systemd_unit(node, "nvidia-fabricmanager.service") is None
