"""The plugin image ships only grpcio, protobuf, PyYAML and nvidia-ml-py: keep imports to those.

Inside gpustack, the plugin imports only its own package, :mod:`gpustack.fields` (the field
declarations its config is derived from), which itself imports only the standard library,
:mod:`gpustack.limits` (how every entry point reads a file), standard library and PyYAML only,
and :mod:`gpustack.dra_upstream` (the facts of NVIDIA's DRA driver the simulated one publishes
by, which the constructs, lint and doctor read too), standard library only.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

PLUGIN = REPO / "gpustack" / "plugin"
FIELDS = sorted((REPO / "gpustack" / "fields").glob("*.py"))
ALLOWED_THIRD_PARTY = {"grpc", "google", "yaml", "pynvml"}
#: The plugin's modules, and the one module outside it that it reads files with.
MODULES = [
    *sorted(p for p in PLUGIN.rglob("*.py") if "_pb2" not in p.name),
    REPO / "gpustack" / "limits.py",
]
#: Modules outside the plugin that it imports and that import nothing but the standard library.
STDLIB_ONLY = [*FIELDS, REPO / "gpustack" / "dra_upstream.py"]


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            if node.module == "gpustack":  # from gpustack import dra_upstream
                names.update(f"gpustack.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(REPO / "gpustack")))
def test_module_imports_only_allowed_packages(path: Path) -> None:
    for name in imported_modules(path):
        top = name.split(".")[0]
        if top == "gpustack":
            assert name in (
                "gpustack",
                "gpustack.plugin",
                "gpustack.fields",
                "gpustack.limits",
                "gpustack.dra_upstream",
            ) or name.startswith(("gpustack.plugin.", "gpustack.fields.")), name
        else:
            assert top in sys.stdlib_module_names or top in ALLOWED_THIRD_PARTY, name


@pytest.mark.parametrize("path", STDLIB_ONLY, ids=lambda p: p.name)
def test_fields_imports_only_the_standard_library(path: Path) -> None:
    names = imported_modules(path)
    assert names  # the walk found its imports
    for name in names:
        top = name.split(".")[0]
        assert top in sys.stdlib_module_names or name.startswith("gpustack.fields"), name


def test_runtime_import_pulls_in_nothing_else() -> None:
    code = (
        "import sys, gpustack.plugin.main, gpustack.plugin.testkubelet, "
        "gpustack.plugin.backends.simulated, gpustack.plugin.dra.main, "
        "gpustack.plugin.dra.testkubelet\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} & "
        "{'jsonschema', 'click', 'cdk8s', 'constructs', 'jinja2', 'pynvml'})\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # pynvml too: it is loaded only when the nvml backend is selected.
    assert out.stdout.strip() == ""
