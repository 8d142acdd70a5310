"""Lint files: read -> find pod templates -> run every rule -> locate each finding.

The whole of ``gpustack lint`` minus output: it never prints, it returns a :class:`LintResult`
that :func:`gpustack.report.render_lint` renders. Issues are the checker's
:class:`~gpustack.checker.Issue` (``file:line:col``, JSON path, message, hint, rule), so both
commands print alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpustack.checker import Issue
from gpustack.lint import manifests
from gpustack.lint.context import LintContext
from gpustack.lint.pods import pod_sites
from gpustack.lint.registry import LOAD, RULES, LintRule
from gpustack.profile.loader import format_path


@dataclass(frozen=True)
class LintResult:
    """Outcome of one run: issues in file order, and what was looked at."""

    issues: tuple[Issue, ...]
    files_checked: int
    files_failed: int
    objects: int
    pods: int
    profile: str | None

    @property
    def ok(self) -> bool:
        return not self.issues


def lint(
    paths: Sequence[str],
    ctx: LintContext,
    *,
    stdin: str | None = None,
    rules: Sequence[LintRule] = RULES,
) -> LintResult:
    """Lint every file under ``paths`` (``-``: ``stdin``) with ``rules``.

    Raises ``FileNotFoundError`` for a path that does not exist.
    """
    issues: list[Issue] = []
    files = failed = objects = pods = 0
    for path in manifests.discover(paths):
        files += 1
        found: list[Issue] = []
        try:
            objs = manifests.read(path, stdin)
        except manifests.ManifestError as exc:
            file, line, col = exc.loc
            found.append(Issue(file, line, col, "$", exc.message, exc.hint, LOAD))
            objs = []
        for obj in objs:
            objects += 1
            for site in pod_sites(obj):
                pods += 1
                for rule in rules:
                    for finding in rule(site, ctx):
                        file, line, col = obj.locate(finding.path)
                        found.append(
                            Issue(
                                file,
                                line,
                                col,
                                format_path(finding.path),
                                finding.message,
                                finding.hint,
                                finding.rule,
                            )
                        )
        unique = list(dict.fromkeys(found))
        unique.sort(key=lambda i: (i.line, i.col))
        failed += bool(unique)
        issues += unique
    return LintResult(tuple(issues), files, failed, objects, pods, ctx.source)
