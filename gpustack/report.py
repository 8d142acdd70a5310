"""The one reporter module: what ``validate``, ``lint`` and ``doctor`` print.

``validate`` (a :class:`~gpustack.checker.CheckResult`) and ``lint`` (a
:class:`~gpustack.lint.check.LintResult`) render the same three formats with the same line
shapes and escaping (one ``file:line:col: $.path: message (hint) (rule: id)`` line per issue,
JSON, GitHub ``::error`` annotations titled with the rule's ID), so the two commands read alike
and one CI annotation setup serves both; ``doctor`` renders its diagnoses as text or JSON. Pure
functions from a result to a string, so the CLI only picks one and prints, and tests can assert
exact output without running the CLI.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import click

from gpustack.annotations import github_error
from gpustack.checker import Accepted, CheckResult, Issue
from gpustack.profile.document import display_path

if TYPE_CHECKING:
    from gpustack.doctor.finding import Diagnosis
    from gpustack.kube.state import ClusterState
    from gpustack.lint.check import LintResult

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
    if result.notices:
        line += f" ({_plural(len(result.notices), 'notice')})"
    return line


def issues_text(issues: Sequence[Issue], last: str, *, ok: bool, color: bool = False) -> str:
    """One ``file:line:col: $.path: message (hint) (rule: id)`` line per issue, then ``last``
    (the summary): validate's and lint's text."""
    lines = []
    for issue in issues:
        where = f"{issue.file}:{issue.line}:{issue.col}:"
        if color:
            where = click.style(where, fg="yellow", bold=True)
        lines.append(f"{where} {issue.json_path}: {issue.text()}")
    if color:
        last = click.style(last, fg="green" if ok else "red")
    lines.append(last)
    return "\n".join(lines) + "\n"


def issues_github(issues: Sequence[Issue], command: str, last: str) -> str:
    """GitHub Actions workflow commands: one ``::error`` annotation per issue (``::notice`` for
    a notice), titled with the command and the rule's ID (as the annotation's heading shows
    it), then ``last``."""
    lines = []
    for issue in issues:
        title = f"{command} ({issue.rule})" if issue.rule else command
        text = f"{issue.json_path}: {issue.text(rule=False)}"
        level = "notice" if issue.notice else "error"
        lines.append(github_error(issue.file, issue.line, issue.col, title, text, level=level))
    lines.append(last)
    return "\n".join(lines) + "\n"


def render_text(result: CheckResult, *, color: bool = False) -> str:
    """validate's notices and issues, then the summary."""
    found = (*result.notices, *result.issues)
    return issues_text(found, summary(result), ok=result.ok, color=color)


def issue_json(issue: Issue) -> dict[str, object]:
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
    return {**issue_json(accepted.issue), "reason": accepted.reason}


def render_json(result: CheckResult, *, color: bool = False) -> str:
    """A JSON object for machines: ``ok``, counts, issues, notices, accepted findings (each with its
    ``reason``), valid profiles and the summary."""
    doc = {
        "ok": result.ok,
        "filesChecked": result.files_checked,
        "filesFailed": result.files_failed,
        "issues": [issue_json(i) for i in result.issues],
        "notices": [issue_json(i) for i in result.notices],
        "accepted": [_accepted_json(a) for a in result.accepted],
        "profiles": [
            {"file": display_path(p.path), "name": p.profile.name} for p in result.profiles
        ],
        "summary": summary(result),
    }
    return json.dumps(doc, indent=2) + "\n"


def render_github(result: CheckResult, *, color: bool = False) -> str:
    """validate's issues as GitHub annotations, then the summary."""
    found = (*result.notices, *result.issues)
    return issues_github(found, "gpustack validate", summary(result))


REPORTERS: dict[str, Callable[..., str]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
}


def render(result: CheckResult, fmt: str, *, color: bool = False) -> str:
    """Render with the reporter named ``fmt`` (one of :data:`FORMATS`)."""
    return REPORTERS[fmt](result, color=color)


# --- lint ----------------------------------------------------------------------------------------


def lint_summary(result: LintResult) -> str:
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


def _lint_json(result: LintResult) -> str:
    doc = {
        "ok": result.ok,
        "profile": result.profile,
        "filesChecked": result.files_checked,
        "filesFailed": result.files_failed,
        "objects": result.objects,
        "podTemplates": result.pods,
        "issues": [issue_json(i) for i in result.issues],
        "summary": lint_summary(result),
    }
    return json.dumps(doc, indent=2) + "\n"


def render_lint(result: LintResult, fmt: str, *, color: bool = False) -> str:
    """``gpustack lint``'s report in ``fmt`` (one of :data:`FORMATS`)."""
    if fmt == "json":
        return _lint_json(result)
    if fmt == "github":
        return issues_github(result.issues, "gpustack lint", lint_summary(result))
    return issues_text(result.issues, lint_summary(result), ok=result.ok, color=color)


# --- doctor --------------------------------------------------------------------------------------


def doctor_summary(found: Sequence[Diagnosis], state: ClusterState) -> str:
    if not found:
        return f"healthy: {_plural(len(state.nodes), 'node')}, no Pending GPU pod"
    nodes = sum(d.subject.startswith("node/") or d.subject == "cluster" for d in found)
    pods = sum(d.subject.startswith("pod/") for d in found)
    rules = sum(d.subject.startswith("devicetaintrule/") for d in found)
    refused = len(found) - nodes - pods - rules
    return (
        f"{_plural(len(found), 'finding')}: {_plural(nodes, 'node')}, "
        f"{_plural(pods, 'Pending GPU pod')}"
        + (f", {_plural(refused, 'controller')} refused pods" if refused else "")
        + (f", {_plural(rules, 'DeviceTaintRule')}" if rules else "")
    )


def render_doctor(found: Sequence[Diagnosis], state: ClusterState, fmt: str) -> str:
    """``gpustack doctor``'s report: one line per diagnosis and the summary, or JSON."""
    if fmt != "json":
        return "".join(f"{d}\n" for d in found) + doctor_summary(found, state) + "\n"
    doc = {
        "ok": not found,
        "findings": [
            {"subject": d.subject, "check": d.check, "message": d.message, "hint": d.hint}
            for d in found
        ],
        "summary": doctor_summary(found, state),
    }
    return json.dumps(doc, indent=2) + "\n"
