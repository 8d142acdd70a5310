"""Every check is registered: a rule function, lint rule module or doctor check module that no
registry names would be dead code that no check reports, so each test here fails naming it.

Rule functions are found by their shape (a public function of a rule module that takes the
profile and yields findings), lint rules by their module (one rule per module under
``gpustack/lint/rules/``), doctor check modules by their ``diagnose_*`` functions.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest

import gpustack.doctor
import gpustack.lint.rules
import gpustack.profile.rules
from gpustack.doctor import checks
from gpustack.doctor.report import DIAGNOSES, diagnose
from gpustack.kube import state
from gpustack.lint import registry as lint_registry
from gpustack.profile.rules import registry as rule_registry
from tests.doctor.test_doctor import FIXTURES, L4, MIG, profile
from tests.e2e.record_doctor import RECORDED, SCENARIOS, profile_of

REPO = Path(__file__).resolve().parents[1]


def _modules(package: ModuleType, skip: set[str]) -> list[ModuleType]:
    return [
        importlib.import_module(f"{package.__name__}.{m.name}")
        for m in pkgutil.iter_modules(package.__path__)
        if m.name not in skip
    ]


def _rule_functions(module: ModuleType) -> list[str]:
    """Public functions of ``module`` shaped like a profile rule: ``(p: Profile)`` yielding
    findings."""
    found = []
    for name, fn in vars(module).items():
        if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != module.__name__:
            continue
        params = list(inspect.signature(fn).parameters.values())
        returns = str(inspect.signature(fn).return_annotation)
        if len(params) == 1 and params[0].annotation == "Profile" and "Finding" in returns:
            found.append(name)
    return found


def test_every_profile_rule_function_is_registered() -> None:
    registered = {(r.check.__module__, r.check.__name__) for r in rule_registry.RULES}
    modules = _modules(gpustack.profile.rules, {"registry"})
    unregistered = [
        f"{m.__name__}.{name} looks like a rule but no Rule in"
        " gpustack.profile.rules.registry.RULES runs it"
        for m in modules
        for name in _rule_functions(m)
        if (m.__name__, name) not in registered
    ]
    assert unregistered == []
    assert len(registered) == len(rule_registry.RULES), "two rules run one function"
    assert sum(len(_rule_functions(m)) for m in modules) == len(registered)


def test_every_lint_rule_module_is_registered() -> None:
    registered = {r.module for r in lint_registry.RULES}
    modules = _modules(gpustack.lint.rules, {"common"})
    unregistered = [
        f"{m.__name__} has a lint rule check, but no LintRule in gpustack.lint.registry.RULES"
        " runs it"
        for m in modules
        if hasattr(m, "check") and m.__name__ not in registered
    ]
    assert unregistered == []
    assert {m.__name__ for m in modules} == registered


def test_every_doctor_check_module_is_registered() -> None:
    called = " ".join(inspect.getsource(run) for run in DIAGNOSES)  # a run or what it calls
    unregistered = [
        f"{m.__name__}.{name} diagnoses, but gpustack.doctor.report.DIAGNOSES does not run it"
        for m in _modules(gpustack.doctor, {"report"})
        for name, fn in vars(m).items()
        if re.fullmatch(r"diagnose_\w+s", name) and inspect.isfunction(fn) and name not in called
    ]
    assert unregistered == []


def test_every_doctor_check_is_documented_and_found_by_a_fixture() -> None:
    section = (REPO / "docs" / "how-to" / "doctor.md").read_text()
    assert [c for c in checks.ids() if f"`{c}`" not in section] == [], "docs/how-to/doctor.md"
    found = set()
    for fixture in sorted([*FIXTURES.glob("*.json"), *(FIXTURES / "dra").glob("*.json")]):
        for path in (L4, MIG):
            cluster = state.load(fixture.read_text(), fixture.name)
            found |= {d.check for d in diagnose(cluster, profile(path))}
    for scenario in SCENARIOS:  # recorded from a real control plane, each with its profile
        cluster = state.load((RECORDED / f"{scenario}.json").read_text(), scenario)
        found |= {d.check for d in diagnose(cluster, profile(profile_of(scenario)))}
    assert sorted(set(checks.ids()) - found) == [], "a registered check no fixture finds"


def test_an_unregistered_doctor_check_is_refused() -> None:
    from gpustack.doctor.finding import Diagnosis

    with pytest.raises(KeyError, match="not registered in gpustack.doctor.checks"):
        Diagnosis("node/x", "gpu-is-sad", "why")
