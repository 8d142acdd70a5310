"""Every check is registered: a rule function, lint rule module or doctor check that no registry
names would be dead code that no check reports, so each test here fails naming the row to add.

What each package holds is found in the package (:mod:`tests.completeness`): rule functions by
their resolved signature (a public function of a rule module that takes the profile and yields
findings), lint rules by their module (one rule per module under ``gpustack/lint/rules/``),
doctor check modules by their entry (takes the cluster state, yields diagnoses) and doctor
checks by the IDs their source gives a ``Diagnosis``. The planted cases put an unregistered one
into each package for one test, so the suite shows each completeness test can fail.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
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
from tests.completeness import (
    unregistered_doctor_checks,
    unregistered_lint_modules,
    unregistered_profile_rules,
    unrun_doctor_checks,
)
from tests.doctor.test_doctor import FIXTURES, L4, MIG, profile
from tests.e2e.record_doctor import RECORDED, SCENARIOS, profile_of

REPO = Path(__file__).resolve().parents[1]
#: Modules of gpustack/lint/rules/ that hold helpers the rules share, not a rule.
LINT_HELPERS = {"common"}


def profile_rule_problems() -> list[str]:
    dated = [check for _, check in rule_registry.DATED]
    return unregistered_profile_rules(
        gpustack.profile.rules, [*(r.check for r in rule_registry.RULES), *dated]
    )


def lint_rule_problems() -> list[str]:
    return unregistered_lint_modules(
        gpustack.lint.rules, [r.module for r in lint_registry.RULES], LINT_HELPERS
    )


def doctor_check_problems() -> list[str]:
    return unrun_doctor_checks(gpustack.doctor, DIAGNOSES) + unregistered_doctor_checks(
        gpustack.doctor, checks.ids()
    )


def test_every_profile_rule_function_is_registered() -> None:
    assert profile_rule_problems() == []
    assert len({(r.check.__module__, r.check.__name__) for r in rule_registry.RULES}) == len(
        rule_registry.RULES
    ), "two rows run one function"


def test_every_lint_rule_module_is_registered() -> None:
    assert lint_rule_problems() == []


def test_every_doctor_check_module_runs_and_every_check_id_is_registered() -> None:
    assert doctor_check_problems() == []


_RULE_IMPORTS = """
from collections.abc import Iterable, Iterator

from gpustack.profile import model
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile
"""

#: name -> (package, module source, the problems function, the messages, with {file} for the
#: planted module's path). Each plants one unregistered check (or a harmless helper).
PLANTS: dict[str, tuple[ModuleType, str, Callable[[], list[str]], list[str]]] = {
    "profile rule": (
        gpustack.profile.rules,
        "from __future__ import annotations\n"
        + _RULE_IMPORTS
        + """
def gpus_are_happy(p: Profile) -> Iterator[Finding]:
    yield from ()
""",
        profile_rule_problems,
        [
            "{file}: gpus_are_happy is a profile rule no row runs; add"
            ' Rule(id="gpus-are-happy", check=planted.gpus_are_happy, section=..., summary=...,'
            " fix=...) to RULES in gpustack/profile/rules/registry.py"
        ],
    ),
    "profile rule, annotations evaluated, qualified": (
        gpustack.profile.rules,
        _RULE_IMPORTS
        + """
def gpus_are_happy(profile: model.Profile) -> Iterable[Finding]:
    return []
""",
        profile_rule_problems,
        [
            "{file}: gpus_are_happy is a profile rule no row runs; add"
            ' Rule(id="gpus-are-happy", check=planted.gpus_are_happy, section=..., summary=...,'
            " fix=...) to RULES in gpustack/profile/rules/registry.py"
        ],
    ),
    "profile rule helpers": (
        gpustack.profile.rules,
        "from __future__ import annotations\n"
        + _RULE_IMPORTS
        + """
def happiness(p: Profile) -> Iterator[str]:
    yield p.name


def _private_rule(p: Profile) -> Iterator[Finding]:
    yield from ()
""",
        profile_rule_problems,
        [],
    ),
    "lint rule": (
        gpustack.lint.rules,
        """
from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.kube.pods import PodSite
from gpustack.profile.finding import Finding


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    yield from ()
""",
        lint_rule_problems,
        [
            "{file} is a lint rule module no row runs; add"
            ' LintRule(id="planted", summary=..., check=planted.check) to RULES in'
            " gpustack/lint/registry.py (check_object= for a rule about whole objects)"
        ],
    ),
    "doctor check": (
        gpustack.doctor,
        """
from __future__ import annotations

from collections.abc import Iterator

from gpustack.doctor.finding import Diagnosis
from gpustack.kube.state import ClusterState

QUOTA = "quota-exceeded"


def diagnose_quota(state: ClusterState) -> Iterator[Diagnosis]:
    if state.nodes:
        yield Diagnosis("cluster", QUOTA, "why")
    yield Diagnosis("cluster", check="gpu-is-sad", message="why")
""",
        doctor_check_problems,
        [
            "{file}: diagnose_quota yields diagnoses no run reports; add diagnose_quota to"
            " DIAGNOSES in gpustack/doctor/report.py (through a (state, profile) wrapper if it"
            " takes only the state)",
            "{file}:13: check 'quota-exceeded' is no row; add"
            ' DoctorCheck("quota-exceeded", "node|pod|controller", "<what it finds>") to CHECKS'
            " in gpustack/doctor/checks.py",
            "{file}:14: check 'gpu-is-sad' is no row; add"
            ' DoctorCheck("gpu-is-sad", "node|pod|controller", "<what it finds>") to CHECKS'
            " in gpustack/doctor/checks.py",
        ],
    ),
}


def _plant(
    package: ModuleType, source: str, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Callable[[], None]]:
    """``source`` as module ``planted`` of ``package`` (a second folder on its ``__path__``),
    and what removes it from the imported modules again."""
    file = folder / "planted.py"
    file.write_text(source.lstrip("\n"), encoding="utf-8")
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(folder)])
    importlib.invalidate_caches()

    def remove() -> None:
        sys.modules.pop(f"{package.__name__}.planted", None)
        if hasattr(package, "planted"):
            delattr(package, "planted")

    return file, remove


@pytest.mark.parametrize("case", sorted(PLANTS))
def test_a_planted_unregistered_check_names_its_row(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    package, source, problems, expected = PLANTS[case]
    file, remove = _plant(package, source, tmp_path, monkeypatch)
    request.addfinalizer(remove)
    assert problems() == [m.format(file=file) for m in expected]


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
