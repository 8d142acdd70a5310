"""gpustack.actions.doctor called directly: options in, diagnoses or refusal out (no click)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpustack.actions.doctor import DoctorOptions, run
from gpustack.actions.errors import BadOptions, Refused

DOCTOR = Path(__file__).parents[1] / "doctor"
FIXTURES = DOCTOR / "fixtures"
L4 = DOCTOR / "profile.yaml"


@pytest.mark.parametrize(
    ("fixture", "found"),
    [
        ("healthy", []),
        ("driver-not-ready", [("node/gpu-2", "driver-not-ready")]),
        ("device-plugin-missing", [("node/gpu-2", "device-plugin-missing")]),
    ],
)
def test_diagnoses_a_recorded_state(fixture: str, found: list[tuple[str, str]]) -> None:
    done = run(DoctorOptions(L4, state=FIXTURES / f"{fixture}.json"))
    assert [(d.subject, d.check) for d in done.findings] == found
    assert done.ok is (not found)
    assert done.cluster is not None and done.cluster.nodes


@pytest.mark.parametrize(
    "options",
    [DoctorOptions(L4), DoctorOptions(L4, state=FIXTURES / "healthy.json", kubectl=True)],
    ids=["neither", "both"],
)
def test_exactly_one_state_source(options: DoctorOptions) -> None:
    with pytest.raises(BadOptions, match="give one of --state FILE or --kubectl"):
        run(options)


def test_an_unreadable_state_is_refused_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "state.json"
    bad.write_text('{"kind": "Node"}')
    with pytest.raises(Refused, match="not a kubectl List") as refused:
        run(DoctorOptions(L4, state=bad))
    assert "\n" not in str(refused.value)


def test_an_invalid_profile_is_refused_before_the_state_is_read(tmp_path: Path) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text(L4.read_text() + "bogus: 1\n")
    done = run(DoctorOptions(profile, state=tmp_path / "never-read.json"))
    assert done.refused is not None and not done.refused.ok
    assert done.cluster is None and not done.ok


def test_kubectl_reads_with_the_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "args"
    fake = tmp_path / "kubectl"
    fake.write_text(f'#!/bin/sh\necho "$@" > {log}\ncat {FIXTURES / "healthy.json"}\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    done = run(DoctorOptions(L4, kubectl=True, context="prod"))
    assert done.ok
    assert log.read_text().split()[:3] == ["--context", "prod", "get"]
