"""Registry completeness, derived from the packages: each check a package holds is a row.

A profile rule function, a lint rule module or a doctor check that no registry names is dead
code: nothing runs it, ``docs/`` does not list it, and the suite stays green. Each function
here finds what a package holds by looking at the package itself (its modules, their functions'
resolved annotations, the check IDs its source gives a ``Diagnosis``), never at the registry,
then compares that with the registry and returns one message per missing row, naming the row to
add and where. An empty list is a complete registry. ``tests/test_registrations.py`` runs them
on the real packages and on the packages with a planted, unregistered check.
"""

from __future__ import annotations

import ast
import collections.abc
import importlib
import inspect
import pkgutil
import typing
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

from gpustack.doctor.finding import Diagnosis
from gpustack.kube.state import ClusterState
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile

REPO = Path(__file__).resolve().parents[1]
PROFILE_REGISTRY = "RULES in gpustack/profile/rules/registry.py"
LINT_REGISTRY = "RULES in gpustack/lint/registry.py"
DOCTOR_RUNS = "DIAGNOSES in gpustack/doctor/report.py"
DOCTOR_CHECKS = "CHECKS in gpustack/doctor/checks.py"

#: What a check function returns: findings one at a time.
_YIELDING = (collections.abc.Iterator, collections.abc.Iterable, collections.abc.Generator)


def modules(package: ModuleType, skip: Iterable[str] = ()) -> list[ModuleType]:
    """Every module of ``package`` (every folder of its ``__path__``), imported, but ``skip``."""
    return [
        importlib.import_module(f"{package.__name__}.{m.name}")
        for m in pkgutil.iter_modules(package.__path__)
        if m.name not in set(skip)
    ]


def where(module: ModuleType) -> str:
    """The module's file, relative to the repository where it is in it."""
    path = Path(module.__file__ or module.__name__).resolve()
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def _public_functions(module: ModuleType) -> Iterator[tuple[str, FunctionType]]:
    for name, fn in vars(module).items():
        if not name.startswith("_") and inspect.isfunction(fn) and fn.__module__ == module.__name__:
            yield name, fn


def _shaped(fn: FunctionType, first: type, yields: type) -> bool | str:
    """Whether ``fn``'s first parameter is a ``first`` and it yields ``yields`` objects, by its
    resolved annotations (so ``Profile``, ``model.Profile`` and either with or without
    ``from __future__ import annotations`` are alike); a message where they do not resolve."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception as err:  # a name only imported under TYPE_CHECKING, a typo
        return f"its annotations do not resolve ({err}); import what they name"
    params = list(inspect.signature(fn).parameters)
    returns = hints.get("return")
    return (
        bool(params)
        and hints.get(params[0]) is first
        and typing.get_origin(returns) in _YIELDING
        and typing.get_args(returns)[:1] == (yields,)
    )


def _kebab(name: str) -> str:
    return name.replace("_", "-")


def _short(module: ModuleType) -> str:
    return module.__name__.rpartition(".")[2]


def unregistered_profile_rules(
    package: ModuleType, checks: Iterable[Callable[..., Any]]
) -> list[str]:
    """Every public function of a module of ``package`` that takes a :class:`Profile` and
    yields :class:`Finding` objects is the ``check`` of one row of ``checks`` (the registry's),
    and every row's check is such a function."""
    registered = {(c.__module__, c.__name__) for c in checks}
    found: set[tuple[str, str]] = set()
    problems = []
    for module in modules(package, skip={"registry"}):
        for name, fn in _public_functions(module):
            shaped = _shaped(fn, Profile, Finding)
            if isinstance(shaped, str):
                problems.append(f"{where(module)}: {name}: {shaped}")
            elif shaped:
                found.add((module.__name__, name))
                if (module.__name__, name) not in registered:
                    problems.append(
                        f"{where(module)}: {name} is a profile rule no row runs; add"
                        f' Rule(id="{_kebab(name)}", check={_short(module)}.{name},'
                        f" section=..., summary=..., fix=...) to {PROFILE_REGISTRY}"
                    )
    problems += [
        f"{module}.{name} is run by a row of {PROFILE_REGISTRY} but is no public function"
        f" (p: Profile) -> Iterator[Finding] of {package.__name__}; move it there"
        for module, name in sorted(registered - found)
    ]
    return problems


def unregistered_lint_modules(
    package: ModuleType, rule_modules: Iterable[str], helpers: Iterable[str]
) -> list[str]:
    """Every module of ``package`` but ``helpers`` is one rule (its ``check``), run by a row
    (``rule_modules``: the module of each row's check), and every row's module is one of them."""
    registered = set(rule_modules)
    found = modules(package, skip=helpers)
    problems = [
        f"{where(m)} is a lint rule module no row runs; add"
        f' LintRule(id="{_kebab(_short(m))}", summary=..., check={_short(m)}.check) to'
        f" {LINT_REGISTRY} (check_object= for a rule about whole objects)"
        for m in found
        if m.__name__ not in registered
    ]
    problems += [
        f"{name} is run by a row of {LINT_REGISTRY} but is no module of {package.__name__}"
        for name in sorted(registered - {m.__name__ for m in found})
    ]
    return problems


def _called(runs: Iterable[Callable[..., Any]]) -> set[tuple[str, str]]:
    """The functions ``runs`` are, and those they call by a global name (a wrapper that adapts
    a check module's signature runs that module)."""
    out = set()
    for run in runs:
        out.add((run.__module__, run.__name__))
        code = getattr(run, "__code__", None)
        for name in code.co_names if code else ():
            target = getattr(run, "__globals__", {}).get(name)
            if inspect.isfunction(target):
                out.add((target.__module__, target.__name__))
    return out


def unrun_doctor_checks(package: ModuleType, runs: Iterable[Callable[..., Any]]) -> list[str]:
    """Every public function of a module of ``package`` that takes a :class:`ClusterState` and
    yields :class:`Diagnosis` objects (a check module's entry) is run by ``runs``
    (``DIAGNOSES``)."""
    called = _called(runs)
    problems = []
    for module in modules(package, skip={"report"}):
        for name, fn in _public_functions(module):
            shaped = _shaped(fn, ClusterState, Diagnosis)
            if isinstance(shaped, str):
                problems.append(f"{where(module)}: {name}: {shaped}")
            elif shaped and (module.__name__, name) not in called:
                problems.append(
                    f"{where(module)}: {name} yields diagnoses no run reports; add {name} to"
                    f" {DOCTOR_RUNS} (through a (state, profile) wrapper if it takes only the"
                    " state)"
                )
    return problems


def _check_ids(module: ModuleType) -> list[tuple[int, str]]:
    """``(line, id)`` of each check ID the module's source gives a ``Diagnosis``: the string
    literals of its ``check`` argument, or the module's string constant it names. An ID read
    from an attribute (the components' readiness checks) is the components registry's row."""
    found = []
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if called != "Diagnosis":
            continue
        given = [k.value for k in node.keywords if k.arg == "check"] + node.args[1:2]
        for arg in given:
            for part in ast.walk(arg):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    found.append((node.lineno, part.value))
                elif isinstance(part, ast.Name) and isinstance(vars(module).get(part.id), str):
                    found.append((node.lineno, vars(module)[part.id]))
    return sorted(found)


def unregistered_doctor_checks(package: ModuleType, check_ids: Iterable[str]) -> list[str]:
    """Every check ID a module of ``package`` gives a ``Diagnosis`` is a row of ``check_ids``
    (``CHECKS``): :class:`Diagnosis` refuses any other, but only when a cluster state makes
    one."""
    registered = set(check_ids)
    return [
        f"{where(module)}:{line}: check {check!r} is no row; add"
        f' DoctorCheck("{check}", "node|pod|controller", "<what it finds>") to {DOCTOR_CHECKS}'
        for module in modules(package, skip={"checks"})
        for line, check in _check_ids(module)
        if check not in registered
    ]
