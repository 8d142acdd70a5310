"""The acceptance run as two actions, sharing one plan: :func:`manifests` and :func:`report`.

``gpustack accept manifests`` writes the run's Jobs, ``gpustack accept report`` reads their
logs; both first plan the run the same way (:class:`PlanOptions`: the profile, its nodes named
by a recorded state or only counted, the bandwidth thresholds), so the report expects exactly
the checks the manifests started. The work is :mod:`gpustack.accept`'s (plan, objects, log
parsing); these actions only load the inputs and turn their failures into refusals
(:mod:`gpustack.actions.errors`): a cluster with nothing to check
(:class:`gpustack.accept.plan.NothingToAccept`), a state or log that cannot be read. An invalid
profile is the outcome's ``refused``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpustack.accept.expect import DEFAULT_TOLERANCE
from gpustack.actions.errors import Refused
from gpustack.actions.profile import load_one

if TYPE_CHECKING:
    from gpustack.accept.expect import Group
    from gpustack.accept.report import Result
    from gpustack.checker import CheckResult
    from gpustack.kube.state import ClusterState
    from gpustack.profile.model import Profile


@dataclass(frozen=True)
class PlanOptions:
    """How the run is planned (the options both commands share).

    - ``profile``: the cluster's profile.
    - ``nodes``: GPU nodes per plugin config, when no ``state`` names them (default 1).
    - ``state``: a recorded state whose nodes each check is pinned to.
    - ``tolerance``: share the bus bandwidth may fall short of the interconnect's;
      ``min_busbw``: a threshold in GB/s instead.
    """

    profile: Path
    nodes: int | None = None
    state: Path | None = None
    tolerance: float = DEFAULT_TOLERANCE
    min_busbw: float | None = None


@dataclass(frozen=True)
class Planned:
    """The profile and the run's groups; or, with ``refused``, why the profile is not valid."""

    refused: CheckResult | None = None
    profile: Profile | None = None
    groups: tuple[Group, ...] = ()


def plan(options: PlanOptions) -> Planned:
    """The run's groups for ``options.profile`` (each naming its nodes, given a state)."""
    from gpustack.accept.plan import NothingToAccept
    from gpustack.accept.plan import plan as plan_groups

    loaded = load_one(options.profile)
    if loaded.profile is None:
        return Planned(refused=loaded.result)
    cluster = _read_state(options.state) if options.state is not None else None
    try:
        found = plan_groups(
            loaded.profile,
            cluster,
            options.nodes,
            tolerance=options.tolerance,
            min_busbw=options.min_busbw,
        )
    except NothingToAccept as exc:
        raise Refused(f"{options.profile}: {exc}") from None
    return Planned(profile=loaded.profile, groups=tuple(found))


def _read_state(path: Path) -> ClusterState:
    from gpustack.nodestate.source import SourceError, read

    try:
        return read(path, str(path))
    except SourceError as exc:
        raise Refused(str(exc)) from None


@dataclass(frozen=True)
class ManifestsOptions:
    """``gpustack accept manifests``: the plan, and the image with PyTorch (``None``: the
    examples' image)."""

    plan: PlanOptions
    image: str | None = None


@dataclass(frozen=True)
class ManifestsOutcome:
    """The run's objects (plain dicts, in apply order) and the groups they check; or
    ``refused``."""

    options: ManifestsOptions
    refused: CheckResult | None = None
    groups: tuple[Group, ...] = ()
    objects: tuple[dict[str, Any], ...] = ()

    @property
    def unpinned(self) -> bool:
        """Whether a check spans nodes no state named: its Jobs cannot be pinned, so one apply
        may run two checks on one node (the user is told to apply them one at a time)."""
        return any(g.nodes > 1 and not g.hosts for g in self.groups)


def manifests(options: ManifestsOptions) -> ManifestsOutcome:
    """The objects that start the acceptance run of ``options.plan``."""
    from gpustack.accept.manifests import objects

    planned = plan(options.plan)
    if planned.profile is None:
        return ManifestsOutcome(options, refused=planned.refused)
    made = objects(planned.profile, list(planned.groups), options.image)
    return ManifestsOutcome(options, groups=planned.groups, objects=tuple(made))


@dataclass(frozen=True)
class ReportOptions:
    """``gpustack accept report``: the plan, and the run's pod logs (``-``: standard input)."""

    plan: PlanOptions
    logs: Path


@dataclass(frozen=True)
class ReportOutcome:
    """One result per check the plan expects (a missing one fails); or ``refused``."""

    options: ReportOptions
    refused: CheckResult | None = None
    results: tuple[Result, ...] = ()

    @property
    def ok(self) -> bool:
        return self.refused is None and all(r.ok for r in self.results)


def report(options: ReportOptions) -> ReportOutcome:
    """The verdict of the run of ``options.plan`` from its logs, read within their limit."""
    from gpustack import limits
    from gpustack.accept.report import MAX_LOG_BYTES, parse_logs

    planned = plan(options.plan)
    if planned.profile is None:
        return ReportOutcome(options, refused=planned.refused)
    logs = options.logs
    try:
        text = limits.read_text(logs, MAX_LOG_BYTES, what="log", lenient=True)
    except limits.Refused as exc:
        shown = "<stdin>" if str(logs) == "-" else str(logs)
        raise Refused(f"{shown}: {exc}") from None
    return ReportOutcome(options, results=tuple(parse_logs(text, list(planned.groups))))
