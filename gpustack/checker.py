"""Check profiles: load -> merge ``extends`` -> schema -> semantic rules -> accepts -> model.

This is the whole of ``gpustack validate`` minus output: it never prints, it returns a
:class:`CheckResult` that a reporter renders. It imports nothing from cdk8s and never starts
Node, so validation stays fast enough for a pre-commit hook.

Every issue names the rule that found it (``load``, ``schema`` or a registered rule's ID). A
rule finding that a ``# gpustack: accept`` comment on its line excuses moves from the issues to
:attr:`CheckResult.accepted` (see :mod:`gpustack.profile.rules.accept`).

A file found in a folder that does not load as a profile but is a Kubernetes manifest (every
document has an ``apiVersion`` and ``kind``, none of them gpustack's) is no profile with errors:
it is listed in :attr:`CheckResult.skipped`, so ``validate dist/`` says what it skipped instead of
reporting every key of every manifest. A file named explicitly gets one issue saying the same.
Finding the files is :mod:`gpustack.scan`'s business.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from gpustack import limits
from gpustack.check_result import Accepted, CheckResult, Issue, LoadedProfile, Skipped
from gpustack.profile.document import (
    Document,
    JsonPath,
    Loc,
    ProfileError,
    display_path,
    format_path,
)
from gpustack.profile.explain import schema_findings
from gpustack.profile.finding import Finding
from gpustack.profile.kubernetes_releases import judged_on
from gpustack.profile.loader import ProfileLoader, profiles_root
from gpustack.profile.model import Profile
from gpustack.profile.rules import accept, cross_profile_findings, dated_findings, rule_findings
from gpustack.profile.rules.registry import ACCEPT, LOAD, SCHEMA
from gpustack.profile.strays import base_note, cluster_name, manifest_kinds
from gpustack.scan import scan

__all__ = ["Accepted", "CheckResult", "Issue", "LoadedProfile", "Skipped", "check_paths"]


#: An issue and, for a rule's finding located in a base, the profile it was found for.
_Found = tuple[Issue, str | None]


def _issue(doc: Document, finding: Finding, *, rule: str, merged: bool = False) -> _Found:
    """Locate a finding. ``merged``: it is about the profile as a whole (a rule), so when it
    points into a shared base, remember the profile: others extending that base may be fine."""
    file, line, col = doc.locate(finding.path, key=finding.at_key)
    path = format_path(finding.path)
    issue = Issue(file, line, col, path, finding.message, finding.hint, rule, finding.notice)
    return issue, (doc.file if merged and file != doc.file else None)


def _name_profiles(issue: Issue, profiles: list[str]) -> Issue:
    if not profiles:
        return issue
    which = f"profile{'s' if len(profiles) > 1 else ''} {', '.join(profiles)}"
    return dataclasses.replace(issue, message=f"{issue.message} [in {which}]")


@dataclass
class _Outcome:
    """One profile file after load, schema and rules: its issues so far, and for a profile
    that reached the rules, its document, model and the files it was read from."""

    file: Path
    found: list[_Found]
    doc: Document | None = None
    profile: Profile | None = None
    files: tuple[str, ...] = ()


@dataclass
class _Read:
    """What reading the paths given found: each file's outcome, the files skipped (with why),
    the bases met, and whether every path given was a whole profiles root (see
    ``_Accepts.unused``)."""

    outcomes: list[_Outcome] = dataclasses.field(default_factory=list)
    skipped: list[Skipped] = dataclasses.field(default_factory=list)
    bases: dict[Path, Skipped] = dataclasses.field(default_factory=dict)
    seen: set[Path] = dataclasses.field(default_factory=set)
    whole_roots: bool = True
    today: date = dataclasses.field(default_factory=judged_on)


def check_paths(
    paths: Sequence[Path],
    *,
    skip: Callable[[Path], bool] | None = None,
    today: date | None = None,
) -> CheckResult:
    """Check every profile under ``paths`` and collect all issues (see module docstring).

    The profiles root that ``extends`` may not leave is :func:`profiles_root` of each path given.
    ``skip`` (used by ``synth``) names profile files not to read at all, because a previous run
    checked the very same bytes; the run then counts as not covering whole roots. ``today``
    dates the end-of-life findings (default: :func:`judged_on`, ``GPUSTACK_TODAY`` or the
    clock's day).
    """
    loader = ProfileLoader()
    read = _Read(today=today or judged_on())
    accepts = _Accepts()
    for given in paths:
        _read_given(loader, given, skip, read, accepts)
    accepted = accepts.apply(read.outcomes)
    accepts.report(read.outcomes, whole_roots=read.whole_roots)
    return dataclasses.replace(
        _gathered(read.outcomes),
        accepted=tuple(accepted),
        skipped=tuple(read.skipped),
        bases=tuple(read.bases.values()),
    )


def _read_given(
    loader: ProfileLoader,
    given: Path,
    skip: Callable[[Path], bool] | None,
    read: _Read,
    accepts: _Accepts,
) -> None:
    """Check each profile file under one path given, adding to ``read``; each document is
    kept only as far as what follows the reading needs it (:meth:`_Accepts.needed`)."""
    root = profiles_root(given)
    read.whole_roots = read.whole_roots and given.is_dir() and given.resolve() == root
    found = scan([given])
    for base in found.bases:
        name = cluster_name(base)
        if name is not None and limits.real_path(base) not in read.bases:
            read.bases[limits.real_path(base)] = Skipped(
                display_path(base), base_note(base, given, name)
            )
    for folder, why in found.unreadable:
        read.outcomes.append(_Outcome(folder, [(_unreadable_folder(folder, why), None)]))
        read.whole_roots = False
    for file in found.files:
        if skip is not None and skip(file):
            # before resolving its path: ten thousand realpath calls were a tenth of a fleet's
            # no-op (issue #37), and a file skipped twice is skipped all the same
            read.whole_roots = False
            continue
        if limits.real_path(file) in read.seen:
            continue  # named twice (a folder and a file in it): check it once
        read.seen.add(limits.real_path(file))
        outcome = _check_one(loader, file, root, read.today)
        if outcome.doc is not None and not accepts.needed(outcome.files):
            outcome.doc = _slim(outcome.doc)
        what = manifest_kinds(file) if outcome.doc is None and outcome.found else None
        if what is None:
            read.outcomes.append(outcome)
        elif given.is_dir():
            read.skipped.append(Skipped(display_path(file), f"not a gpustack profile ({what})"))
        else:
            read.outcomes.append(_Outcome(file, [(_not_a_profile(file, what), None)]))


#: The paths of a document the checks after reading still locate when no comment of its files
#: is an accept (:func:`~gpustack.profile.rules.profiles.cross_profile_findings`: the name).
_KEPT_PATHS: tuple[JsonPath, ...] = ((), ("metadata",), ("metadata", "name"))


def _slim(doc: Document) -> Document:
    """``doc`` with only the positions of :data:`_KEPT_PATHS`: a fleet's documents are all
    held until the cross-profile rules ran, and their data and the position of every path
    set the high-water mark of ``synth`` for 10,000 clusters (issue #37)."""
    where: dict[JsonPath, tuple[Loc, Loc]] = {
        p: doc.where[p] for p in _KEPT_PATHS if p in doc.where
    }
    return Document(data={}, where=where, file=doc.file)


def _unreadable_folder(folder: Path, why: str) -> Issue:
    return Issue(
        display_path(folder),
        1,
        1,
        "$",
        f"cannot read this folder: {why}; its profiles were not checked",
        "make it readable, or move it out of the profiles folder",
        LOAD.id,
    )


def _gathered(outcomes: list[_Outcome]) -> CheckResult:
    """The result of ``outcomes``: each issue once, with the profiles it was found for, the
    profiles that passed (the cross-profile rules included), and the counts."""
    issues: dict[Issue, list[str]] = {}

    def add(found: _Found) -> None:
        profiles = issues.setdefault(found[0], [])
        if found[1] is not None and found[1] not in profiles:
            profiles.append(found[1])

    documents: list[tuple[Path, Document, Profile]] = []
    read_from: dict[Path, tuple[Path, ...]] = {}
    for outcome in outcomes:
        for one in sorted(outcome.found, key=_order):
            add(one)
        if not _errors(outcome) and outcome.doc is not None and outcome.profile is not None:
            documents.append((outcome.file, outcome.doc, outcome.profile))
            read_from[outcome.file] = tuple(Path(f) for f in outcome.files)
    failed_files: set[Path] = set()
    for file, doc, finding in cross_profile_findings(documents):
        add(_issue(doc, finding, rule=finding.rule or "", merged=True))
        failed_files.add(file)
    loaded = [
        LoadedProfile(path=file, profile=profile, files=read_from[file])
        for file, _doc, profile in documents
        if file not in failed_files
    ]
    named = [_name_profiles(issue, profiles) for issue, profiles in issues.items()]
    return CheckResult(
        profiles=tuple(loaded),
        issues=tuple(i for i in named if not i.notice),
        files_checked=len(outcomes),
        files_failed=sum(1 for o in outcomes if _errors(o)) + len(failed_files),
        notices=tuple(i for i in named if i.notice),
    )


def _errors(outcome: _Outcome) -> bool:
    return any(not issue.notice for issue, _ in outcome.found)


def _not_a_profile(file: Path, what: str) -> Issue:
    return Issue(
        display_path(file),
        1,
        1,
        "$",
        f"not a gpustack profile ({what})",
        "validate checks profiles (apiVersion: gpustack.dev/v1alpha1, kind: Profile); name "
        "a profile, or a folder, where manifests are skipped",
        LOAD.id,
    )


def _check_one(loader: ProfileLoader, file: Path, root: Path, today: date) -> _Outcome:
    display = display_path(file)
    try:
        doc = loader.load(file, display, root)
    except ProfileError as exc:
        line_file, line, col = exc.loc
        issue = Issue(
            line_file, line, col, format_path(exc.json_path), exc.message, exc.hint, LOAD.id
        )
        return _Outcome(file, [(issue, None)])
    found = schema_findings(doc.data, doc.written)
    if found:
        return _Outcome(file, [_issue(doc, f, rule=SCHEMA.id) for f in found])
    profile = Profile.from_dict(doc.data)
    found = [*rule_findings(profile), *dated_findings(profile, today)]
    rules_found = [_issue(doc, f, rule=f.rule or "", merged=True) for f in found]
    files = {doc.file: None}  # the profile first, then the bases it was merged from
    files.update((value[0], None) for value, _key in doc.where.values())
    return _Outcome(file, rules_found, doc, profile, tuple(files))


def _order(found: _Found) -> tuple[str, int, int, str]:
    issue = found[0]
    return (issue.file, issue.line, issue.col, issue.json_path)


class _Accepts:
    """The accept comments of every file that profiles reaching the rules were read from."""

    def __init__(self) -> None:
        self._files: dict[str, accept.Directives] = {}
        self._used: set[tuple[accept.Accept, str]] = set()
        self._rules_ran_everywhere = True

    def directives(self, file: str) -> accept.Directives:
        found = self._files.get(file)
        if found is None:
            try:
                text = limits.decode(limits.read_limited(Path(file)))
            except limits.Refused:
                text = ""  # the loader read it a moment ago; without it there is no comment
            found = self._files[file] = accept.parse(file, text)
        return found

    def needed(self, files: Sequence[str]) -> bool:
        """Whether a comment in one of ``files`` is an accept (or meant as one): only then do
        :meth:`apply` and :meth:`report` look at the document beyond its name."""
        return any(d.accepts or d.malformed for d in map(self.directives, files))

    def apply(self, outcomes: list[_Outcome]) -> list[Accepted]:
        """Move each rule finding an accept excuses out of its profile's issues."""
        accepted: dict[Issue, Accepted] = {}
        for outcome in outcomes:
            if outcome.doc is None:
                self._rules_ran_everywhere = False
                continue
            by_line: dict[tuple[str, int], list[accept.Accept]] = {}
            for file in outcome.files:
                for one in self.directives(file).accepts:
                    by_line.setdefault((file, one.target), []).append(one)
            if not by_line:
                continue
            kept: list[_Found] = []
            for found in outcome.found:
                issue = found[0]
                match = next(
                    (
                        one
                        for one in by_line.get((issue.file, issue.line), ())
                        if issue.rule in one.rules
                    ),
                    None,
                )
                if match is None:
                    kept.append(found)
                    continue
                self._used.add((match, issue.rule or ""))
                accepted.setdefault(issue, Accepted(issue, match.reason))
            outcome.found = kept
        return list(accepted.values())

    def report(self, outcomes: list[_Outcome], *, whole_roots: bool) -> None:
        """Add to each profile the broken accepts of its files, and the unused ones.

        An accept in the profile's own file is unused when no finding matched it. One in a base
        is reported unused only when the run checked whole profiles roots and every profile
        reached the rules: otherwise a profile that needs it may not have been checked.
        """
        for outcome in outcomes:
            if outcome.doc is None:
                continue
            for file in outcome.files:
                directives = self.directives(file)
                for bad in directives.malformed:
                    where = (file, bad.line, bad.col)
                    outcome.found.append(
                        self._issue(outcome.doc, where, bad.target, bad.message, bad.hint)
                    )
                if file != outcome.doc.file and not (whole_roots and self._rules_ran_everywhere):
                    continue
                for one in directives.accepts:
                    for rule_id in one.rules:
                        if (one, rule_id) not in self._used:
                            message, hint = accept.unused_message(one, rule_id)
                            where = (file, one.line, one.col)
                            outcome.found.append(
                                self._issue(outcome.doc, where, one.target, message, hint)
                            )

    @staticmethod
    def _issue(
        doc: Document, where: tuple[str, int, int], target: int, message: str, hint: str
    ) -> _Found:
        """An issue about a comment at ``where``, with the JSON path of the line it is for:
        the first key on that line (the innermost, for ``- name: x``), else ``$``."""
        file, line, col = where
        keys = [
            (key[2], -len(path), path)
            for path, (_value, key) in doc.where.items()
            if path and key[0] == file and key[1] == target
        ]
        path = min(keys)[2] if keys else ()
        return Issue(file, line, col, format_path(path), message, hint, ACCEPT.id), None
