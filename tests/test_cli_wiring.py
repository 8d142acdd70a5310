"""The CLI is wiring: options into a library call, its outcome into text, JSON and an exit
status. Work that grows in a command (a flow of phases, a report) belongs in the library, where
``template``, the Argo CD plugin and tests can call it; a long function in ``gpustack/cli/`` is
the sign that it did not move."""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[1] / "gpustack" / "cli"
#: The most lines (``def`` to its last line, docstring included) a CLI function may have.
MAX_LINES = 40


def long_functions(path: Path, limit: int = MAX_LINES) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        f"{path.name}:{node.lineno}: {node.name} is {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_no_cli_function_is_over_40_lines() -> None:
    files = sorted(CLI.glob("*.py"))
    assert files
    assert [f for path in files for f in long_functions(path)] == []


def test_the_size_check_finds_a_long_function(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n" + "    x = 1\n" * 40 + "\ndef g():\n    pass\n")
    assert long_functions(probe) == ["probe.py:1: f is 41 lines"]


def test_the_validate_report_and_exit_stands_once() -> None:
    """``render_text`` of an invalid profile goes out through one helper
    (``gpustack.cli.common.exit_invalid``); ``init`` folds it into its own error."""
    users = sorted(p.name for p in CLI.glob("*.py") if "sys.exit(1)" in p.read_text())
    assert "common.py" in users
    text = {p.name: p.read_text() for p in CLI.glob("*.py")}
    echo = "click.echo(render_text("
    assert [name for name, body in text.items() if echo in body] == ["common.py"]
