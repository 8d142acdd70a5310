"""Imports run one way: profile (model, rules, derivations) below checker and report, below CLI.

Why a test: a single import upward (the profile package reaching for the checker, rules for a
construct) makes validation load cdk8s or ties the rules to how manifests are rendered, and
nothing else would notice. Imports are read with :mod:`ast`, so imports inside functions count
as well; the table says, per package, which modules it must never import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "gpustack"

#: folder (relative to gpustack/) -> module prefixes nothing in it may import
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "profile": (
        "gpustack.constructs",
        "gpustack.synth",
        "gpustack.cli",
        "gpustack.checker",
        "gpustack.report",
        "gpustack.scaffold",
        "cdk8s",
        "cdk8s_plus_33",
        "constructs",
    ),
    "profile/rules": ("gpustack.constructs",),
    # the declaration library under both file formats: it knows neither of them
    "fields": (
        "gpustack.profile",
        "gpustack.plugin",
        "gpustack.constructs",
        "gpustack.synth",
        "gpustack.checker",
        "cdk8s",
    ),
    "constructs": ("gpustack.profile.rules", "gpustack.checker", "gpustack.report"),
    # the library under the CLI: it reports through return values and SynthError, never click
    "synth": ("gpustack.cli", "click"),
    "gitops": ("gpustack.cli", "click"),
    # doctor reads the cluster's state and derivations: the same limits as lint
    "doctor": (
        "gpustack.constructs",
        "gpustack.profile.rules",
        "gpustack.synth",
        "gpustack.cli",
        "cdk8s",
        "cdk8s_plus_33",
        "constructs",
    ),
    # the profile against its nodes: the checker's results and doctor's state, never cdk8s
    "nodestate": ("gpustack.constructs", "gpustack.synth", "cdk8s", "cdk8s_plus_33", "constructs"),
    # the acceptance run writes plain dicts: no constructs, no cdk8s, no click
    "accept": (
        "gpustack.constructs",
        "gpustack.synth",
        "gpustack.cli",
        "click",
        "cdk8s",
        "cdk8s_plus_33",
        "constructs",
    ),
    # lint reads manifests and derivations: never the profile rules, the constructs or cdk8s
    "lint": (
        "gpustack.constructs",
        "gpustack.profile.rules",
        "gpustack.synth",
        "gpustack.cli",
        "cdk8s",
        "cdk8s_plus_33",
        "constructs",
    ),
}


def imports(path: Path) -> set[str]:
    """Every module a file imports (``from x import y`` counts as ``x`` and ``x.y``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _hits(found: set[str], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(m for m in found if any(m == f or m.startswith(f"{f}.") for f in forbidden))


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_imports_run_one_way(folder: str) -> None:
    files = sorted((PACKAGE / folder).rglob("*.py"))
    assert files, folder
    wrong = {
        str(f.relative_to(PACKAGE)): hits
        for f in files
        if (hits := _hits(imports(f), FORBIDDEN[folder]))
    }
    assert wrong == {}


def test_the_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import os\ndef f():\n    from gpustack.checker import check_paths\n    import cdk8s.x\n",
        encoding="utf-8",
    )
    assert _hits(imports(probe), FORBIDDEN["profile"]) == [
        "cdk8s.x",
        "gpustack.checker",
        "gpustack.checker.check_paths",
    ]
