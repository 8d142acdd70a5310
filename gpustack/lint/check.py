"""Lint files: read -> find pod templates -> run every rule -> locate each finding.

The whole of ``gpustack lint`` minus output: it never prints, it returns a :class:`LintResult`
that :func:`gpustack.report.render_lint` renders. Issues are the checker's
:class:`~gpustack.checker.Issue` (``file:line:col``, JSON path, message, hint, rule), so both
commands print alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from gpustack.checker import Issue
from gpustack.kube import claims, manifests
from gpustack.kube.pods import pod_sites
from gpustack.lint.context import LintContext
from gpustack.lint.registry import LOAD, RULES, LintRule
from gpustack.profile.document import format_path
from gpustack.profile.finding import Finding


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
    loaded: list[tuple[str, list[manifests.Manifest], list[Issue]]] = []
    for path in manifests.discover(paths):
        found: list[Issue] = []
        try:
            objs = manifests.read(path, stdin)
        except manifests.ManifestError as exc:
            file, line, col = exc.loc
            found.append(Issue(file, line, col, "$", exc.message, exc.hint, LOAD))
            objs = []
        loaded.append((path, objs, found))
    # a pod of one file may use a claim template or DeviceClass of another: index them all first
    ctx = replace(ctx, defined=claims.index(o for _, objs, _ in loaded for o in objs))
    issues: list[Issue] = []
    failed = objects = pods = 0
    for _, objs, found in loaded:
        for obj in objs:
            objects += 1
            for rule in rules:
                found += _located(obj, rule.on_object(obj, ctx))
            for site in pod_sites(obj):
                pods += 1
                for rule in rules:
                    found += _located(obj, rule(site, ctx))
        unique = list(dict.fromkeys(found))
        unique.sort(key=lambda i: (i.line, i.col))
        failed += bool(unique)
        issues += unique
    return LintResult(tuple(issues), len(loaded), failed, objects, pods, ctx.source)


def _located(obj: manifests.Manifest, findings: Iterable[Finding]) -> list[Issue]:
    out = []
    for finding in findings:
        file, line, col = obj.locate(finding.path)
        out.append(
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
    return out
