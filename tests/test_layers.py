"""The package's floors: every top-level package or module of gpustack stands on one floor of
:data:`FLOORS`, and imports only from floors below its own.

Why a table and not only the forbidden lists of ``test_imports.py``: those say what one package
must never import; a table says where each package stands, so an import that runs back up (the
synthesis calling the GitOps delivery built on it, the CLI importing the site generator that
documents the CLI) fails wherever it appears, a package that imports its neighbour on the same
floor fails, and a new package fails until someone decides where it stands. Imports are read
with :mod:`ast`, function bodies and ``TYPE_CHECKING`` blocks included: a lazy import is still a
dependency, and a circle through one is still a circle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "gpustack"

#: Bottom first. A unit may import only units of lower floors.
FLOORS: tuple[tuple[str, ...], ...] = (
    # no gpustack import at all: the reader's limits, the declaration library, exit codes, the
    # names NVIDIA's DRA driver publishes, torchrun's command line, the Argo CD plugin's thin
    # client of its warm renderer
    (
        "annotations",
        "dra_upstream",
        "emitters",
        "exits",
        "fields",
        "limits",
        "render_client",
        "scan",
        "torchrun",
    ),
    # our device plugin and DRA driver: their config types are a file format the profile uses
    ("plugin",),
    # the profile: load, merge, validate, the typed model, the catalog, the component registry
    # and the rules
    ("profile",),
    # what stands on the profile: the checker, the floor for reading Kubernetes objects
    # what a check of profiles returns (issues, accepted findings, the profiles that passed)
    ("check_result",),
    ("checker", "kube"),
    # the features side by side, and the constructs that write objects
    ("accept", "constructs", "doctor", "images", "lint", "nodestate", "plan", "scaffold"),
    # rendering to files, reports of findings, the conformance tables
    ("conformance", "report", "synth"),
    # what is built on synthesis: the GitOps delivery; the readiness graph as a drawing
    ("explain", "gitops"),
    # what the commands do, without click
    ("actions",),
    # the Argo CD plugin's warm renderer: the plugin's action in a long-lived process
    ("renderer",),
    # click
    ("cli",),
    # entry points: ``python -m gpustack`` and the site generator, which documents the CLI
    ("__main__", "docsite"),
)


def units(package: Path) -> list[str]:
    """The package's top-level units: each subpackage and each module but ``__init__``."""
    found = [p.name for p in package.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    found += [p.stem for p in package.glob("*.py") if p.stem != "__init__"]
    return sorted(found)


def unit_imports(path: Path, package: str = "gpustack") -> set[str]:
    """The top-level units of ``package`` that the file imports, wherever the import stands."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module == package:  # ``from gpustack import limits``
                names = [f"{package}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == package and len(parts) > 1:
                found.add(parts[1])
    return found


def files_of(package: Path, unit: str) -> Iterator[Path]:
    folder = package / unit
    yield from sorted(folder.rglob("*.py")) if folder.is_dir() else [package / f"{unit}.py"]


def wrong_imports(package: Path, floors: tuple[tuple[str, ...], ...]) -> list[str]:
    """Each import of a unit on the importer's floor or above, as ``file -> unit (floor)``."""
    floor_of: Mapping[str, int] = {u: i for i, floor in enumerate(floors) for u in floor}
    wrong = []
    for unit in units(package):
        for path in files_of(package, unit):
            for used in sorted(unit_imports(path, package.name) - {unit}):
                if used in floor_of and floor_of[used] >= floor_of[unit]:
                    where = path.relative_to(package.parent)
                    wrong.append(f"{where} -> {used} (floor {floor_of[used] + 1})")
    return wrong


def test_every_unit_has_a_floor() -> None:
    placed = {u for floor in FLOORS for u in floor}
    missing = sorted(set(units(PACKAGE)) - placed)
    assert missing == [], f"add each to the floor of FLOORS it stands on: {missing}"
    gone = sorted(placed - set(units(PACKAGE)))
    assert gone == [], f"remove from FLOORS, the package has no such unit: {gone}"


def test_imports_go_down_only() -> None:
    assert wrong_imports(PACKAGE, FLOORS) == []


@pytest.mark.parametrize(
    ("source", "floors", "want"),
    [
        # a lazy import back up, inside a function
        (
            "def f():\n    from gpustack.top import x\n",
            (("low",), ("top",)),
            ["gpustack/low.py -> top (floor 2)"],
        ),
        # a neighbour on the same floor, in a TYPE_CHECKING block
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import gpustack.top\n",
            (("low", "top"),),
            ["gpustack/low.py -> top (floor 1)"],
        ),
        # ``from gpustack import top`` names the unit too
        ("from gpustack import top\n", (("low",), ("top",)), ["gpustack/low.py -> top (floor 2)"]),
        # down is fine
        ("import gpustack.top\n", (("top",), ("low",)), []),
    ],
)
def test_the_floor_check_finds_an_upward_import(
    tmp_path: Path, source: str, floors: tuple[tuple[str, ...], ...], want: list[str]
) -> None:
    package = tmp_path / "gpustack"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "top.py").write_text("", encoding="utf-8")
    (package / "low.py").write_text(source, encoding="utf-8")
    assert wrong_imports(package, floors) == want
