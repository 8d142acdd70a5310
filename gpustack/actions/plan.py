"""``gpustack plan`` as an action: :class:`PlanOptions` in, :func:`run`, :class:`PlanOutcome`
out.

The head side is what the profiles render now (validated and rendered as ``synth`` does, held
in memory: the output folder is not written); the base side is the output committed at a git
ref (:mod:`gpustack.actions.plan_base`). :mod:`gpustack.plan` compares them. Given profile
paths, only their clusters are compared; given none, every profile of ``profiles/`` against
every committed cluster folder, so a profile deleted shows as its cluster removed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpustack.actions.errors import NothingFound
from gpustack.actions.plan_base import committed_clusters
from gpustack.actions.synth import NoProfiles, SynthOptions, render, resolve
from gpustack.checker import CheckResult, check_paths
from gpustack.plan.compare import compare
from gpustack.plan.model import Plan
from gpustack.synth.pipeline import Source

#: How the head side is named in the plan.
HEAD = "working tree"


@dataclass(frozen=True)
class PlanOptions:
    """What to compare (``gpustack plan``'s options).

    - ``paths``: profile files or folders (none: ``profiles/``).
    - ``out``: the output folder whose committed ``clusters/`` is the base.
    - ``base``: the git ref of the base side.
    - ``jobs``: processes rendering (``None``: the CPU count).
    """

    paths: tuple[Path, ...] = ()
    out: Path = Path("dist")
    base: str = "HEAD"
    jobs: int | None = None


@dataclass(frozen=True)
class PlanOutcome:
    """The plan, or the validation result that refused a profile (nothing was compared)."""

    options: PlanOptions
    plan: Plan | None = None
    refused: CheckResult | None = None


def run(options: PlanOptions) -> PlanOutcome:
    """Render the profiles, read the base, compare: see the module's docstring."""
    synth = SynthOptions(paths=options.paths, out=options.out, jobs=options.jobs)
    try:
        inputs = resolve(synth)
    except NoProfiles as exc:
        raise NothingFound(str(exc)) from None
    result = check_paths(list(inputs.paths))
    if not result.ok:
        return PlanOutcome(options, refused=result)
    if not result.profiles:
        raise NothingFound(f"no profiles in {', '.join(map(str, inputs.paths))}")
    base = committed_clusters(options.out, options.base)
    sources = [Source(p.path, p.profile, packaged=inputs.packaged) for p in result.profiles]
    head = {
        c.output.name: {f.path: f.content for f in c.output.files} for c in render(sources, synth)
    }
    if options.paths:  # only the clusters of the profiles given
        base = {name: files for name, files in base.items() if name in head}
    return PlanOutcome(options, plan=compare(base, head, (options.base, HEAD)))
