"""What a check of profiles returns: each problem located (:class:`Issue`), the findings accept
comments excuse, the profiles that passed, and the files that were no profile.

Why its own module: these are the checker's answer, which every reporter and command reads;
:mod:`gpustack.checker` is how the answer is found (and re-exports these names).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpustack.profile.model import Profile


@dataclass(frozen=True)
class Issue:
    """One problem, located: ``file:line:col: json_path: message (hint) (rule: id)``."""

    file: str
    line: int
    col: int
    json_path: str
    message: str
    hint: str | None = None
    rule: str | None = None
    #: It informs and fails nothing (see :attr:`gpustack.profile.finding.Finding.notice`).
    notice: bool = False

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: {self.json_path}: {self.text()}"

    def text(self, *, rule: bool = True) -> str:
        """What follows the JSON path: ``message (hint) (rule: id)``; without the rule's ID for
        reports that show it elsewhere."""
        hint = f" ({self.hint})" if self.hint else ""
        rule_id = f" (rule: {self.rule})" if rule and self.rule else ""
        return f"{'notice: ' * self.notice}{self.message}{hint}{rule_id}"


@dataclass(frozen=True)
class Accepted:
    """A rule's finding that the profile accepts, with the reason its accept comment gives."""

    issue: Issue
    reason: str


@dataclass(frozen=True)
class LoadedProfile:
    """A profile that passed every check, with the file it came from."""

    path: Path
    profile: Profile
    #: The files it was read from: the profile first, then the bases it was merged from.
    files: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Skipped:
    """A file found in a folder that is not a profile: ``what`` says what it is instead."""

    file: str
    what: str


@dataclass(frozen=True)
class CheckResult:
    """Outcome of one check run.

    ``files_checked`` counts profiles (bases reached through ``extends`` are not counted);
    ``files_failed`` how many of them had at least one issue. ``accepted`` are findings that
    accept comments excuse: they fail nothing.
    """

    profiles: tuple[LoadedProfile, ...]
    issues: tuple[Issue, ...]
    files_checked: int
    files_failed: int = 0
    accepted: tuple[Accepted, ...] = ()
    #: Files in the folders checked that are not profiles (Kubernetes manifests); not counted.
    skipped: tuple[Skipped, ...] = ()
    #: Complete profiles (with ``metadata.name``) under a ``_`` folder, where bases live: neither
    #: checked nor synthesized, and each worth a note (:func:`base_note`).
    bases: tuple[Skipped, ...] = ()
    #: Findings that fail nothing (a release past its end of life): printed, never counted.
    notices: tuple[Issue, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.issues
