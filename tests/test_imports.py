"""Imports run one way: profile (model, rules, derivations) below checker and report, below the
actions, below the CLI.

Why a test: a single import upward (the profile package reaching for the checker, rules for a
construct) makes validation load cdk8s or ties the rules to how manifests are rendered, and
nothing else would notice. Imports are read with :mod:`ast`, so imports inside functions count
as well; the table says, per package, which modules it must never import. The features that read
Kubernetes objects (:data:`FEATURES`) stand side by side on :mod:`gpustack.kube`: none imports
another, and kube imports none of them.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Collection, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "gpustack"

#: The features that read Kubernetes objects, each on the floor above :mod:`gpustack.kube`.
FEATURES = ("lint", "doctor", "nodestate", "accept", "conformance", "images", "plan")

#: What gpustack.kube may never import: a feature, or the writing, synthesis, GitOps and CLI
#: layers above it (function-level imports too: :func:`imports` reads every one).
KUBE_FORBIDDEN = (
    *(f"gpustack.{feature}" for feature in FEATURES),
    "gpustack.constructs",
    "gpustack.synth",
    "gpustack.gitops",
    "gpustack.cli",
    "click",
    "cdk8s",
    "constructs",
)

#: What a feature that reads objects and derivations never imports (doctor, lint, plan): the
#: profile rules, how objects are written or rendered, the CLI.
READS_OBJECTS = (
    "gpustack.constructs",
    "gpustack.profile.rules",
    "gpustack.synth",
    "gpustack.cli",
    "click",
    "cdk8s",
    "constructs",
)

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
    # objects are made from gpustack's own API values (constructs/k8s.py) and cdk8s' ApiObject:
    # cdk8s-plus (the largest JavaScript library, and run-time type checks) is not loaded
    "constructs": (
        "gpustack.profile.rules",
        "gpustack.checker",
        "gpustack.report",
        "cdk8s_plus_33",
    ),
    # the library under the CLI: it reports through return values and SynthError, never click;
    # it renders and writes: the actions (and the GitOps delivery they run) stand above it
    "synth": ("gpustack.cli", "click", "gpustack.actions", "gpustack.gitops"),
    # what the commands do, without click: the CLI maps their outcomes to output
    "actions": ("gpustack.cli", "click"),
    "gitops": ("gpustack.cli", "click"),
    # the warm renderer runs the plugin's action for calls on its socket: never the CLI, so it
    # answers as ``gpustack template --argocd`` does without being a click command
    "renderer": ("gpustack.cli", "click"),
    # the plugin's thin client starts in a bare Python: it imports nothing that renders
    "render_client": (
        "gpustack.actions",
        "gpustack.renderer",
        "gpustack.synth",
        "gpustack.profile",
        "gpustack.cli",
        "click",
        "cdk8s",
    ),
    # doctor reads the cluster's state and derivations: the same limits as lint
    "doctor": READS_OBJECTS,
    # the profile against its nodes: the checker's results and doctor's state, never cdk8s
    "nodestate": (
        "gpustack.constructs",
        "gpustack.synth",
        "gpustack.cli",
        "click",
        "cdk8s",
        "constructs",
    ),
    # the acceptance run writes plain dicts: no constructs, no cdk8s, no click
    "accept": (
        "gpustack.constructs",
        "gpustack.synth",
        "gpustack.cli",
        "click",
        "cdk8s",
        "constructs",
    ),
    # the plan compares rendered objects: it reads them as plain data, never renders them
    "plan": READS_OBJECTS,
    # the floor for reading Kubernetes objects, below every feature that reads them: it knows
    # none of them, nor how objects are written, synthesized, shipped or asked for
    "kube": KUBE_FORBIDDEN,
    # lint reads manifests and derivations: never the profile rules, the constructs or cdk8s
    "lint": READS_OBJECTS,
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


@pytest.mark.parametrize(
    ("folder", "source", "want"),
    [
        # the profile reaching for the checker, or cdk8s, inside a function
        (
            "profile",
            "import os\n"
            "def f():\n"
            "    from gpustack.checker import check_paths\n"
            "    import cdk8s.x\n",
            ["cdk8s.x", "gpustack.checker", "gpustack.checker.check_paths"],
        ),
        # a reader in gpustack.kube that reaches into a feature, even inside a function
        (
            "kube",
            "from gpustack.profile.loader import JsonPath\n"
            "def f():\n"
            "    from gpustack.doctor.finding import Diagnosis\n"
            "    import gpustack.gitops.repo\n",
            [
                "gpustack.doctor.finding",
                "gpustack.doctor.finding.Diagnosis",
                "gpustack.gitops.repo",
            ],
        ),
        # rendering that reaches up for the action that runs it, or the GitOps delivery built on it
        (
            "synth",
            "from gpustack.synth.plan import Plan\n"
            "def f():\n"
            "    from gpustack.gitops.delivery import delivery_files\n"
            "    import gpustack.actions.synth\n",
            [
                "gpustack.actions.synth",
                "gpustack.gitops.delivery",
                "gpustack.gitops.delivery.delivery_files",
            ],
        ),
    ],
)
def test_a_planted_import_breaks_the_folder_s_rule(
    tmp_path: Path, folder: str, source: str, want: list[str]
) -> None:
    """Each rule of :data:`FORBIDDEN` sees imports inside functions too."""
    probe = tmp_path / "probe.py"
    probe.write_text(source, encoding="utf-8")
    assert _hits(imports(probe), FORBIDDEN[folder]) == want


#: The only packages that may import gpustack.actions: the CLI, which maps options to an
#: action's and its outcome to output, the Argo CD plugin's warm renderer, which does the same
#: for a ``generate`` call that arrives on its socket, and the actions themselves.
ACTION_USERS = ("cli", "renderer", "actions")


def action_importers(package: Path) -> list[str]:
    """The modules of ``package`` (a ``gpustack`` folder) outside :data:`ACTION_USERS` that
    import :mod:`gpustack.actions`: a feature or the library calling up into a command's work."""
    return sorted(
        str(f.relative_to(package))
        for f in package.rglob("*.py")
        if f.relative_to(package).parts[0] not in ACTION_USERS
        and _hits(imports(f), ("gpustack.actions",))
    )


def test_only_the_cli_imports_the_actions() -> None:
    assert action_importers(PACKAGE) == []


def test_the_action_rule_refuses_an_import_outside_the_cli(tmp_path: Path) -> None:
    for name, text in {
        "cli/synth.py": "from gpustack.actions.synth import run\n",
        "actions/doctor.py": "from gpustack.actions.errors import Refused\n",
        "lint/check.py": "def f():\n    from gpustack.actions import validate\n",
        "report.py": "import gpustack.actions.doctor\n",
        "scan.py": "from gpustack.checker import check_paths\n",
    }.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert action_importers(tmp_path) == ["lint/check.py", "report.py"]


#: What no feature imports: the actions that orchestrate the features, and the CLI above them.
ABOVE_FEATURES = ("gpustack.actions", "gpustack.cli")


@pytest.mark.parametrize("feature", FEATURES)
def test_features_import_neither_actions_nor_cli(feature: str) -> None:
    wrong = {
        str(f.relative_to(PACKAGE)): hits
        for f in sorted((PACKAGE / feature).rglob("*.py"))
        if (hits := _hits(imports(f), ABOVE_FEATURES))
    }
    assert wrong == {}, f"{feature} is called by an action; it calls none"


def test_the_feature_rule_refuses_an_action_or_cli_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import click\n"
        "from gpustack.cli.common import color\n"
        "def f():\n"
        "    from gpustack.actions.accept import plan\n",
        encoding="utf-8",
    )
    assert _hits(imports(probe), ABOVE_FEATURES) == [
        "gpustack.actions.accept",
        "gpustack.actions.accept.plan",
        "gpustack.cli.common",
        "gpustack.cli.common.color",
    ]


#: All the package modules the profile package may import: what it is built on. The component
#: registry lives inside it (gpustack.profile.components), so nothing above it is reached for,
#: at module level or inside a function.
PROFILE_FLOOR = (
    "gpustack.profile",
    "gpustack.fields",
    "gpustack.limits",
    "gpustack.dra_upstream",
    "gpustack.plugin.config",
)


def _above_profile(found: set[str]) -> list[str]:
    """The package modules in ``found`` above the profile package's floor (``from gpustack
    import __version__`` reads the package itself)."""
    return sorted(
        m
        for m in found
        if m.split(".")[0] == "gpustack"
        and m not in ("gpustack", "gpustack.__version__")
        and not _hits({m}, PROFILE_FLOOR)
    )


def test_profile_imports_only_its_floor() -> None:
    wrong = {
        str(f.relative_to(PACKAGE)): hits
        for f in sorted((PACKAGE / "profile").rglob("*.py"))
        if (hits := _above_profile(imports(f)))
    }
    assert wrong == {}, f"profile may import only {PROFILE_FLOOR}"


def test_the_profile_rule_refuses_the_old_registry_and_a_late_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from gpustack import __version__, fields\n"
        "from gpustack.profile import components\n"
        "from gpustack import components as old\n"
        "def f():\n"
        "    from gpustack.kube.objects import Obj\n"
        "    import gpustack.doctor\n",
        encoding="utf-8",
    )
    assert _above_profile(imports(probe)) == [
        "gpustack.components",
        "gpustack.doctor",
        "gpustack.kube.objects",
        "gpustack.kube.objects.Obj",
    ]


def _other_features(feature: str) -> tuple[str, ...]:
    return tuple(f"gpustack.{other}" for other in FEATURES if other != feature)


@pytest.mark.parametrize("feature", FEATURES)
def test_features_stand_side_by_side(feature: str) -> None:
    """No feature imports another: what two of them read in common belongs in gpustack.kube."""
    wrong = {
        str(f.relative_to(PACKAGE)): hits
        for f in sorted((PACKAGE / feature).rglob("*.py"))
        if (hits := _hits(imports(f), _other_features(feature)))
    }
    assert wrong == {}, f"move what {feature} reads from another feature into gpustack.kube"


def test_the_feature_rule_refuses_a_sibling_import(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from gpustack.accept import plan\n"
        "def f():\n"
        "    from gpustack.nodestate.checks import Check\n",
        encoding="utf-8",
    )
    assert _hits(imports(probe), _other_features("accept")) == [
        "gpustack.nodestate.checks",
        "gpustack.nodestate.checks.Check",
    ]


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    found = {}
    for f in PACKAGE.rglob("*.py"):
        parts = list(f.relative_to(PACKAGE.parent).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return found


def module_edges(path: Path, modules: Collection[str]) -> set[str]:
    """The package's modules ``path`` imports, wherever (``TYPE_CHECKING`` blocks and function
    bodies too: each is a dependency, and a circle through one is still a circle). ``from
    package import submodule`` depends on the submodule only, as Python resolves it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = {f"{node.module}.{alias.name}" for alias in node.names}
            found |= subs & set(modules)
            if not subs <= set(modules):
                found.add(node.module)
    return found & set(modules)


def circles(graph: Mapping[str, Collection[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle() -> None:
    modules = _modules()
    graph = {m: module_edges(f, modules) - {m} for m, f in modules.items()}
    assert circles(graph) == []


def test_the_circle_check_finds_a_circle(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.b import B\n")
    b.write_text("def f():\n    from p import a\n")
    modules = {"p.a": a, "p.b": b}
    graph = {m: module_edges(f, modules) - {m} for m, f in modules.items()}
    assert graph == {"p.a": {"p.b"}, "p.b": {"p.a"}}
    assert circles(graph) == [["p.a", "p.b"]]


#: What starting cdk8s loads: the jsii runtime (which starts Node) and the libraries on it.
_NODE = ("jsii", "cdk8s", "constructs")


def test_construct_helpers_import_without_starting_node() -> None:
    """Each constructs module that does not import cdk8s itself (labels, placement...) imports
    without starting Node: the package's ``__init__`` loads the synthesis only when asked."""
    modules = _modules()
    helpers = sorted(
        m
        for m, f in modules.items()
        if m.startswith("gpustack.constructs.") and not _hits(imports(f), _NODE)
    )
    assert "gpustack.constructs.labels" in helpers
    code = (
        "import importlib, sys\n"
        f"for m in {helpers!r}:\n"
        "    importlib.import_module(m)\n"
        f"    node = sorted(n for n in sys.modules if n.split('.')[0] in {_NODE!r})\n"
        "    if node:\n"
        "        sys.exit(f'importing {m} started Node: {node[:3]}')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_torchrun_line_stands_below_its_users() -> None:
    """gpustack.torchrun is imported by the constructs and by accept, which may not import each
    other: it imports nothing of gpustack, so it can never pull either one into the other."""
    found = imports(PACKAGE / "torchrun.py")
    assert found, "the module imports at least its typing helpers"
    assert _hits(found, ("gpustack",)) == []
