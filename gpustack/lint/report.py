"""Render a :class:`~gpustack.lint.check.LintResult` as text, JSON or GitHub annotations.

The same three formats, line shapes and escaping as ``gpustack validate``
(:mod:`gpustack.report`): an issue is printed by :meth:`~gpustack.checker.Issue.text`, so the
two commands read alike and one CI annotation setup serves both.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import click

from gpustack.annotations import github_error
from gpustack.lint.check import LintResult

FORMATS = ("text", "json", "github")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary(result: LintResult) -> str:
    """``2 errors in 1 of 3 files (5 objects, 4 pod templates)`` or ``3 files clean (...)``;
    without a profile it says which rules did not run."""
    seen = f"({_plural(result.objects, 'object')}, {_plural(result.pods, 'pod template')})"
    if result.ok:
        line = f"{_plural(result.files_checked, 'file')} clean {seen}"
    else:
        errors = _plural(len(result.issues), "error")
        line = (
            f"{errors} in {result.files_failed} of {_plural(result.files_checked, 'file')} {seen}"
        )
    if result.profile is None:
        line += "; without --profile the rules that need it did not run"
    return line


def render_text(result: LintResult, *, color: bool = False) -> str:
    lines = []
    for issue in result.issues:
        where = f"{issue.file}:{issue.line}:{issue.col}:"
        if color:
            where = click.style(where, fg="yellow", bold=True)
        lines.append(f"{where} {issue.json_path}: {issue.text()}")
    last = summary(result)
    if color:
        last = click.style(last, fg="green" if result.ok else "red")
    lines.append(last)
    return "\n".join(lines) + "\n"


def render_json(result: LintResult, *, color: bool = False) -> str:
    doc = {
        "ok": result.ok,
        "profile": result.profile,
        "filesChecked": result.files_checked,
        "filesFailed": result.files_failed,
        "objects": result.objects,
        "podTemplates": result.pods,
        "issues": [
            {
                "file": i.file,
                "line": i.line,
                "col": i.col,
                "jsonPath": i.json_path,
                "message": i.message,
                "hint": i.hint,
                "rule": i.rule,
            }
            for i in result.issues
        ],
        "summary": summary(result),
    }
    return json.dumps(doc, indent=2) + "\n"


def render_github(result: LintResult, *, color: bool = False) -> str:
    lines = []
    for issue in result.issues:
        title = f"gpustack lint ({issue.rule})"
        text = f"{issue.json_path}: {issue.text(rule=False)}"
        lines.append(github_error(issue.file, issue.line, issue.col, title, text))
    lines.append(summary(result))
    return "\n".join(lines) + "\n"


REPORTERS: dict[str, Callable[..., str]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
}


def render(result: LintResult, fmt: str, *, color: bool = False) -> str:
    return REPORTERS[fmt](result, color=color)
