"""Validation as an action: :class:`ValidateOptions` in, :func:`run`, :class:`ValidateOutcome` out.

What ``gpustack validate`` does, without click: find the profiles (the paths, or
``profiles/``), check them against the schema and the rules (:func:`gpustack.checker.check_paths`)
and, given a node state, against the nodes each picks (:mod:`gpustack.nodestate`). Invalid
profiles are the outcome (``result.ok`` false), not a refusal: the action refuses only when it
has nothing to check or cannot read the state (:mod:`gpustack.actions.errors`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gpustack.actions.errors import BadOptions, NothingFound, Refused

if TYPE_CHECKING:
    from gpustack.checker import CheckResult
    from gpustack.kube.state import ClusterState

#: Where ``validate`` (and ``init``) look for profiles when given no path.
DEFAULT_PROFILES = "profiles"


def _ignore(_: str) -> None:
    return None


@dataclass(frozen=True)
class ValidateOptions:
    """What to check (``gpustack validate``'s options).

    - ``paths``: profile files or folders (none: ``profiles/``, which must exist).
    - ``state``: a recorded node state (``-``: standard input) or AICR snapshot; ``kubectl``:
      read it with kubectl instead (``context``: its context). Either checks the one profile
      given against its nodes.
    - ``on_note``: gets each file skipped (not a profile) and each base noted, as the check
      finds them and before the state is read, so a refusal of the state comes after them.
    """

    paths: tuple[Path, ...] = ()
    state: Path | None = None
    kubectl: bool = False
    context: str | None = None
    on_note: Callable[[str], None] = field(default=_ignore, compare=False)


@dataclass(frozen=True)
class ValidateOutcome:
    """The check's result, node findings included (``result.ok``: every profile is valid)."""

    options: ValidateOptions
    result: CheckResult

    @property
    def ok(self) -> bool:
        return self.result.ok


def run(options: ValidateOptions) -> ValidateOutcome:
    """Check ``options.paths`` (and, with a state, the profile against its nodes)."""
    from gpustack.checker import check_paths

    paths = _paths(options.paths)
    result = check_paths(list(paths))
    if result.skipped and not result.files_checked:  # one line, not one per manifest
        raise NothingFound(_no_profiles(paths, len(result.skipped)))
    for skipped in result.skipped:
        options.on_note(f"{skipped.file}: skipped: {skipped.what}")
    for base in result.bases:
        options.on_note(f"{base.file}: note: {base.what}")
    return ValidateOutcome(options, _against_nodes(result, options))


def _paths(given: tuple[Path, ...]) -> tuple[Path, ...]:
    """The paths to check: ``given``, or ``profiles/``; refused when they hold no YAML."""
    from gpustack.scan import scan

    if not given:
        default = Path(DEFAULT_PROFILES)
        if not default.is_dir():
            raise NothingFound(f"no PATH given and no {DEFAULT_PROFILES}/ folder here")
        given = (default,)
    found = scan(list(given))
    if not found.files and not found.unreadable:
        raise NothingFound(f"no *.yaml profiles found in {', '.join(map(str, given))}")
    return given


def _no_profiles(paths: tuple[Path, ...], skipped: int) -> str:
    files = f"{skipped} file" if skipped == 1 else f"{skipped} files"
    return (
        f"no profiles in {', '.join(map(str, paths))}: {files} skipped, none is a gpustack"
        f" profile (give the profiles, e.g. `gpustack validate {DEFAULT_PROFILES}/`)"
    )


def _against_nodes(result: CheckResult, options: ValidateOptions) -> CheckResult:
    """``result`` checked against the node state (unchanged when none is given); refused
    unless exactly one profile was checked and one source given (a state is one cluster's)."""
    if options.state is None and not options.kubectl:
        return result
    from gpustack.nodestate.validate import check_against

    if options.state is not None and options.kubectl:
        raise BadOptions("give one of --state FILE or --kubectl, not both")
    if result.files_checked != 1:
        raise BadOptions(
            f"--state/--kubectl check one profile against its cluster; {result.files_checked}"
            " were given (name the cluster's profile file)"
        )
    return check_against(result, _read_state(options))


def _read_state(options: ValidateOptions) -> ClusterState:
    from gpustack.nodestate.source import SourceError, from_kubectl, read

    try:
        if options.kubectl:
            return from_kubectl(options.context)
        assert options.state is not None
        return read(options.state, "<stdin>" if str(options.state) == "-" else str(options.state))
    except SourceError as exc:
        raise Refused(str(exc)) from None
