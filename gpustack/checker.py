"""Check profiles: load -> merge ``extends`` -> schema -> semantic rules -> typed model.

This is the whole of ``gpustack validate`` minus output: it never prints, it returns a
:class:`CheckResult` that a reporter renders. It imports nothing from cdk8s and never starts
Node, so validation stays fast enough for a pre-commit hook.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gpustack.profile.explain import schema_findings
from gpustack.profile.finding import Finding
from gpustack.profile.loader import (
    Document,
    ProfileError,
    ProfileLoader,
    format_path,
    profiles_root,
)
from gpustack.profile.model import Profile
from gpustack.profile.rules import cross_profile_findings, rule_findings

PROFILE_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Issue:
    """One problem, located: ``file:line:col: json_path: message (hint)``."""

    file: str
    line: int
    col: int
    json_path: str
    message: str
    hint: str | None = None

    def __str__(self) -> str:
        tail = f" ({self.hint})" if self.hint else ""
        return f"{self.file}:{self.line}:{self.col}: {self.json_path}: {self.message}{tail}"


@dataclass(frozen=True)
class LoadedProfile:
    """A profile that passed every check, with the file it came from."""

    path: Path
    profile: Profile


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one check run.

    ``files_checked`` counts profiles (bases reached through ``extends`` are not counted);
    ``files_failed`` how many of them had at least one issue.
    """

    profiles: tuple[LoadedProfile, ...]
    issues: tuple[Issue, ...]
    files_checked: int
    files_failed: int = 0

    @property
    def ok(self) -> bool:
        return not self.issues


def _is_hidden(part: str) -> bool:
    return part.startswith("_") or part.startswith(".")


def discover(paths: Sequence[Path]) -> list[Path]:
    """Profile files for ``paths``: files as given; folders searched recursively for
    ``*.yaml``/``*.yml`` (sorted), skipping anything under a ``_``- or ``.``-prefixed name inside
    the folder, which is where bases for ``extends`` live (``profiles/_bases/``). A broken
    symlink is kept, so that checking it reports it instead of silently dropping a profile.

    Raises ``FileNotFoundError`` for a path that does not exist.
    """
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inner = [
                p
                for p in path.rglob("*")
                if p.suffix in PROFILE_SUFFIXES
                and (p.is_file() or (p.is_symlink() and not p.exists()))
                and not any(_is_hidden(part) for part in p.relative_to(path).parts)
            ]
            found.extend(sorted(inner))
        elif path.exists():
            found.append(path)
        else:
            raise FileNotFoundError(str(path))
    unique: dict[Path, None] = {}
    for p in found:
        unique.setdefault(p, None)
    return list(unique)


#: An issue and, for a rule's finding located in a base, the profile it was found for.
_Found = tuple[Issue, str | None]


def _issue(doc: Document, finding: Finding, *, merged: bool = False) -> _Found:
    """Locate a finding. ``merged``: it is about the profile as a whole (a rule), so when it
    points into a shared base, remember the profile: others extending that base may be fine."""
    file, line, col = doc.locate(finding.path, key=finding.at_key)
    issue = Issue(file, line, col, format_path(finding.path), finding.message, finding.hint)
    return issue, (doc.file if merged and file != doc.file else None)


def _name_profiles(issue: Issue, profiles: list[str]) -> Issue:
    if not profiles:
        return issue
    which = f"profile{'s' if len(profiles) > 1 else ''} {', '.join(profiles)}"
    return dataclasses.replace(issue, message=f"{issue.message} [in {which}]")


def display_path(path: Path) -> str:
    """A profile's path as every report shows it (relative ones normalised)."""
    return os.path.normpath(path) if not path.is_absolute() else str(path)


def check_paths(paths: Sequence[Path]) -> CheckResult:
    """Check every profile under ``paths`` and collect all issues (see module docstring).

    The profiles root that ``extends`` may not leave is :func:`profiles_root` of each path given.
    """
    loader = ProfileLoader()
    issues: dict[Issue, list[str]] = {}  # each issue once, with the profiles it was found for

    def add(found: _Found) -> None:
        profiles = issues.setdefault(found[0], [])
        if found[1] is not None and found[1] not in profiles:
            profiles.append(found[1])

    loaded: list[LoadedProfile] = []
    documents: list[tuple[Path, Document, Profile]] = []
    failed = 0
    checked = 0
    seen: set[Path] = set()
    for given in paths:
        root = profiles_root(given)
        for file in discover([given]):
            if file.resolve() in seen:
                continue  # named twice (a folder and a file in it): check it once
            seen.add(file.resolve())
            checked += 1
            found = _check_one(loader, file, root)
            if isinstance(found, list):
                failed += 1
                for one in found:
                    add(one)
            else:
                doc, profile = found
                documents.append((file, doc, profile))
    failed_files: set[Path] = set()
    for file, doc, finding in cross_profile_findings(documents):
        add(_issue(doc, finding, merged=True))
        failed_files.add(file)
    for file, _doc, profile in documents:
        if file not in failed_files:
            loaded.append(LoadedProfile(path=file, profile=profile))
    return CheckResult(
        profiles=tuple(loaded),
        issues=tuple(_name_profiles(issue, profiles) for issue, profiles in issues.items()),
        files_checked=checked,
        files_failed=failed + len(failed_files),
    )


def _check_one(
    loader: ProfileLoader, file: Path, root: Path
) -> list[_Found] | tuple[Document, Profile]:
    display = display_path(file)
    try:
        doc = loader.load(file, display, root)
    except ProfileError as exc:
        line_file, line, col = exc.loc
        issue = Issue(line_file, line, col, format_path(exc.json_path), exc.message, exc.hint)
        return [(issue, None)]
    found = schema_findings(doc.data, doc.written)
    if found:
        return sorted((_issue(doc, f) for f in found), key=_order)
    profile = Profile.from_dict(doc.data)
    found = rule_findings(profile)
    if found:
        return sorted((_issue(doc, f, merged=True) for f in found), key=_order)
    return doc, profile


def _order(found: _Found) -> tuple[str, int, int, str]:
    issue = found[0]
    return (issue.file, issue.line, issue.col, issue.json_path)
