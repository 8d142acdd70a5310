"""A Kubernetes release past its upstream end of life: one notice naming the date (the profile
stays valid), or an error with ``cluster.endOfLife: error``; the default release; the table.

Every check passes its day in, or runs on the suite's (tests/conftest.py): none reads the clock."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpustack.checker import check_paths
from gpustack.cli import main
from gpustack.profile.kubernetes_releases import END_OF_LIFE, ended
from gpustack.profile.model import DEFAULT_KUBERNETES, SUPPORTED_KUBERNETES, Cluster
from gpustack.profile.model.upstream import GPU_OPERATOR_KUBERNETES

DAY = date(2026, 12, 6)
HINT_NOTICE = "cluster.endOfLife: error makes this an error"
HINT_ERROR = "cluster.endOfLife: notice where a platform still supports it"


def write(folder: Path, version: str, mode: str | None = None) -> Path:
    path = folder / "p.yaml"
    setting = f"\n  endOfLife: {mode}" if mode else ""
    path.write_text(
        "apiVersion: gpustack.dev/v1alpha1\nkind: Profile\nmetadata:\n  name: p\n"
        f'cluster:\n  kubernetesVersion: "{version}"{setting}\n',
        encoding="utf-8",
    )
    return path


def line(path: Path, version: str, end: str, hint: str, *, notice: bool) -> str:
    return (
        f"{path}:6:22: $.cluster.kubernetesVersion: {'notice: ' * notice}Kubernetes {version}"
        f" reached its upstream end of life on {end} (https://kubernetes.io/releases/{version}/)"
        f' (upgrade the cluster and set kubernetesVersion: "1.36" or another supported release;'
        f" {hint}) (rule: kubernetes-end-of-life)"
    )


@pytest.mark.parametrize(
    ("version", "mode", "today", "end"),
    [
        ("1.33", None, DAY, "2026-06-28"),  # the issue's acceptance: one notice, exit 0
        ("1.34", "notice", date(2026, 10, 27), "2026-10-27"),  # the last day counts as ended
        ("1.34", None, date(2026, 10, 26), None),  # the day before: supported
        ("1.36", None, DAY, None),  # the default: supported on the day of the issue
        ("1.36", None, date(2027, 7, 1), "2027-06-28"),  # and ends later, with its date
        ("1.37", None, DAY, None),
        ("1.29", None, DAY, "2025-02-28"),
    ],
)
def test_notice_names_the_date_and_fails_nothing(
    tmp_path: Path, version: str, mode: str | None, today: date, end: str | None
) -> None:
    path = write(tmp_path, version, mode)
    result = check_paths([path], today=today)
    assert result.ok and result.issues == ()
    want = [] if end is None else [line(path, version, end, HINT_NOTICE, notice=True)]
    assert [str(n) for n in result.notices] == want
    assert len(result.profiles) == 1


def test_error_mode_fails_the_profile(tmp_path: Path) -> None:
    path = write(tmp_path, "1.32", "error")
    result = check_paths([path], today=DAY)
    assert [str(i) for i in result.issues] == [
        line(path, "1.32", "2026-02-28", HINT_ERROR, notice=False)
    ]
    assert (result.ok, result.notices, result.profiles) == (False, (), ())
    assert check_paths([write(tmp_path, "1.36", "error")], today=DAY).ok


@pytest.mark.parametrize(
    ("mode", "code", "summary"),
    [(None, 0, "1 profile valid (1 notice)"), ("error", 1, "1 error in 1 of 1 profile")],
)
def test_validate_prints_the_line(
    tmp_path: Path, mode: str | None, code: int, summary: str
) -> None:
    """Through the command, on the suite's day (``GPUSTACK_TODAY``, tests/conftest.py), after
    1.33's end on 2026-06-28."""
    path = write(tmp_path, "1.33", mode)
    result = CliRunner().invoke(main, ["validate", str(path)])
    hint = HINT_ERROR if mode else HINT_NOTICE
    expected = [line(path, "1.33", "2026-06-28", hint, notice=mode is None), summary]
    assert (result.exit_code, result.output.splitlines()) == (code, expected)


def test_synth_prints_the_notice_and_writes(tmp_path: Path) -> None:
    path = write(tmp_path, "1.33")
    out = tmp_path / "dist"
    result = CliRunner().invoke(main, ["synth", str(path), "--out", str(out), "-q"])
    assert (result.exit_code, result.stderr) == (0, "")  # --quiet: warnings and errors only
    result = CliRunner().invoke(main, ["synth", str(path), "--out", str(tmp_path / "again")])
    assert result.exit_code == 0, result.output
    notice = line(path, "1.33", "2026-06-28", HINT_NOTICE, notice=True)
    assert notice in result.stderr.splitlines()
    assert (out / "clusters" / "p").is_dir()


def test_default_is_the_newest_release_the_gpu_operator_supports() -> None:
    assert DEFAULT_KUBERNETES == GPU_OPERATOR_KUBERNETES[-1] == "1.36"
    assert Cluster().kubernetes_version == DEFAULT_KUBERNETES
    assert set(GPU_OPERATOR_KUBERNETES) <= set(SUPPORTED_KUBERNETES)
    assert ended(DEFAULT_KUBERNETES, DAY) is None


def test_every_supported_release_has_a_date() -> None:
    assert sorted(END_OF_LIFE) == sorted(SUPPORTED_KUBERNETES)
    dates = [END_OF_LIFE[v] for v in SUPPORTED_KUBERNETES]
    assert dates == sorted(dates)  # a later release never ends first


@pytest.mark.parametrize(
    ("today", "code", "summary"),
    [
        ("2027-06-27", 0, ["1 profile valid"]),  # the day before 1.36 ends: no notice
        ("2027-06-28", 0, None),  # its last day: the notice
    ],
)
def test_gpustack_today_fixes_the_day(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    today: str,
    code: int,
    summary: list[str] | None,
) -> None:
    """``GPUSTACK_TODAY`` is the day a command judges on, so a suite or a CI job gives next
    year the result it gives today."""
    monkeypatch.setenv("GPUSTACK_TODAY", today)
    path = write(tmp_path, "1.36")
    result = CliRunner().invoke(main, ["validate", str(path)])
    notice = line(path, "1.36", "2027-06-28", HINT_NOTICE, notice=True)
    expected = summary or [notice, "1 profile valid (1 notice)"]
    assert (result.exit_code, result.output.splitlines()) == (code, expected)


@pytest.mark.parametrize("given", ["tomorrow", "2026-13-01", ""])
def test_a_malformed_day_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    monkeypatch.setenv("GPUSTACK_TODAY", given)
    result = CliRunner().invoke(main, ["validate", str(write(tmp_path, "1.36"))])
    assert result.exit_code == 2
    assert result.output.splitlines()[-1] == (
        f"Error: GPUSTACK_TODAY={given!r} is not a day: give it as YYYY-MM-DD, or unset it"
    )
