"""Reporters: render a :class:`~gpustack.checker.CheckResult` as text, JSON or GitHub annotations.

Pure functions from a result to a string, so the CLI only picks one and prints, and tests can
assert exact output without running the CLI.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import click

from gpustack.annotations import github_error
from gpustack.checker import Accepted, CheckResult, Issue, display_path

FORMATS = ("text", "json", "github")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def summary(result: CheckResult) -> str:
    """One line: ``2 errors in 1 of 5 profiles`` or ``5 profiles valid``, and how many findings
    accept comments excuse (``(1 finding accepted)``), so accepts never go unnoticed."""
    if result.ok:
        line = f"{_plural(result.files_checked, 'profile')} valid"
    else:
        errors = _plural(len(result.issues), "error")
        line = f"{errors} in {result.files_failed} of {_plural(result.files_checked, 'profile')}"
    if result.accepted:
        line += f" ({_plural(len(result.accepted), 'finding')} accepted)"
    return line


def render_text(result: CheckResult, *, color: bool = False) -> str:
    """One ``file:line:col: $.path: message (hint) (rule: id)`` line per issue, then the
    summary."""
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


def _issue_json(issue: Issue) -> dict[str, object]:
    return {
        "file": issue.file,
        "line": issue.line,
        "col": issue.col,
        "jsonPath": issue.json_path,
        "message": issue.message,
        "hint": issue.hint,
        "rule": issue.rule,
    }


def _accepted_json(accepted: Accepted) -> dict[str, object]:
    return {**_issue_json(accepted.issue), "reason": accepted.reason}


def render_json(result: CheckResult, *, color: bool = False) -> str:
    """A JSON object for machines: ``ok``, counts, issues, accepted findings (each with its
    ``reason``), valid profiles and the summary."""
    doc = {
        "ok": result.ok,
        "filesChecked": result.files_checked,
        "filesFailed": result.files_failed,
        "issues": [_issue_json(i) for i in result.issues],
        "accepted": [_accepted_json(a) for a in result.accepted],
        "profiles": [
            {"file": display_path(p.path), "name": p.profile.name} for p in result.profiles
        ],
        "summary": summary(result),
    }
    return json.dumps(doc, indent=2) + "\n"


def render_github(result: CheckResult, *, color: bool = False) -> str:
    """GitHub Actions workflow commands: one ``::error`` annotation per issue, titled with the
    rule's ID (as the annotation's heading shows it), then the summary."""
    lines = []
    for issue in result.issues:
        title = f"gpustack validate ({issue.rule})" if issue.rule else "gpustack validate"
        text = f"{issue.json_path}: {issue.text(rule=False)}"
        lines.append(github_error(issue.file, issue.line, issue.col, title, text))
    lines.append(summary(result))
    return "\n".join(lines) + "\n"


REPORTERS: dict[str, Callable[..., str]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
}


def render(result: CheckResult, fmt: str, *, color: bool = False) -> str:
    """Render with the reporter named ``fmt`` (one of :data:`FORMATS`)."""
    return REPORTERS[fmt](result, color=color)
