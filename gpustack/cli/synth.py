"""``gpustack synth``: profiles to GitOps-ready manifests under ``dist/``."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpustack.cli import style
from gpustack.cli.common import (
    NothingToDo,
    color,
    count,
    example,
    exit_invalid,
    exit_statuses,
    format_option,
    profile_paths,
)
from gpustack.cli.group import main
from gpustack.exits import Exit

if TYPE_CHECKING:
    from gpustack.actions.synth import SynthOptions, SynthOutcome


@main.command(short_help="Synthesize profiles into GitOps-ready manifests under dist/.")
@profile_paths
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("dist"),
    show_default=True,
    help="Output folder; cluster folders go to OUT/clusters/<metadata.name>/.",
)
@click.option(
    "--check",
    is_flag=True,
    help=f"Write nothing; exit {int(Exit.STALE)} and list every file that is out of date.",
)
@click.option(
    "--base",
    metavar="REF",
    default=None,
    help="With --check: trust only what is committed at git REF (e.g. origin/main in CI, HEAD "
    "in a pre-commit hook): a cluster is skipped only when its profile and bases are the files "
    "committed at REF and its folder is as REF's index records; every other cluster is "
    "synthesized and compared, and so is the whole index, provenance included.",
)
@click.option(
    "--full",
    is_flag=True,
    help="With --check: trust no index; synthesize every cluster and compare (a release gate).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Replace what gpustack did not write: folders it did not create, and files in its "
    "folders edited by hand (each is named in a warning).",
)
@click.option(
    "--prune",
    is_flag=True,
    help="Delete the folders of clusters whose profile was deleted or renamed, or is no profile "
    "any more (a GitOps tool that prunes then uninstalls the stack from that cluster).",
)
@click.option(
    "--default-profile",
    is_flag=True,
    help="Synthesize the packaged default profile, a complete stack to look at (without it, a "
    "run with no PATH and no profiles/ here is refused).",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1, None),
    default=None,
    help="Processes synthesizing changed clusters in parallel (default: the CPU count).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing but warnings and errors.")
@format_option("json", help="json: one document on stdout, per cluster its status and files.")
@click.option("--diff", is_flag=True, help="With --check: show a unified diff of each change.")
@exit_statuses("when done (or up to date)", stale=True)
@example(
    "gpustack synth --check --diff",
    "in a pull request, what a run would change in dist/ (writes nothing; exit 3 if anything)",
)
def synth(
    paths: tuple[Path, ...],
    out: Path,
    check: bool,
    base: str | None,
    full: bool,
    force: bool,
    prune: bool,
    default_profile: bool,
    jobs: int | None,
    quiet: bool,
    fmt: str,
    diff: bool,
) -> None:
    """Synthesize the GPU stack of each profile (default: profiles/) into OUT.

    Every profile is validated first; if any has an issue, nothing is written. Each cluster
    folder is written aside and swapped in whole, so readers never see a half-written one, and
    files of removed components disappear. A cluster whose profile was deleted or renamed is
    removed only with --prune (without it the run lists the folders and writes nothing); clusters
    of existing profiles left out of PATHS are kept. Files edited by hand in gpustack's folders
    are named and kept unless --force. Without PATH and profiles/ the run is refused, unless
    --default-profile asks for the packaged default profile. A run waits for another one
    writing OUT.

    A cluster whose profile, bases and gpustack are unchanged since the run recorded in the
    index, and whose folder is exactly as written, is neither validated nor synthesized again.
    """
    _refuse_usage(paths, default_profile, check, diff, base, full)
    options = _options(paths, out, check, diff, force, prune, default_profile, jobs)
    options = replace(options, base=base, full=full)
    progress = sys.stderr.isatty() and not quiet and fmt == "text"
    outcome = _run(replace(options, progress=progress, quiet=quiet, on_note=_note))
    if outcome.refused is not None:
        exit_invalid(outcome.refused, fmt)
    if check:
        _report_check(outcome, fmt, quiet)
    else:
        _report_write(outcome, fmt, quiet)


def _refuse_usage(
    paths: tuple[Path, ...],
    default_profile: bool,
    check: bool,
    diff: bool,
    base: str | None,
    full: bool,
) -> None:
    """Options that do not go together: a usage error (exit 2)."""
    if default_profile and paths:
        raise click.UsageError("--default-profile synthesizes the packaged profile; give no PATH")
    if diff and not check:
        raise click.UsageError("--diff shows what --check finds; add --check")
    if (base is not None or full) and not check:
        raise click.UsageError("--base and --full say what --check trusts; add --check")
    if base is not None and full:
        raise click.UsageError("--full trusts nothing, --base a commit's index: give one")


def _options(
    paths: tuple[Path, ...],
    out: Path,
    check: bool,
    diff: bool,
    force: bool,
    prune: bool,
    default_profile: bool,
    jobs: int | None,
) -> SynthOptions:
    from gpustack.actions.synth import SynthOptions

    def waiting() -> None:
        click.echo(f"gpustack: waiting for another gpustack synth writing {out}", err=True)

    return SynthOptions(
        paths=paths,
        out=out,
        check=check,
        diff=diff,
        force=force,
        prune=prune,
        default_profile=default_profile,
        jobs=jobs,
        on_wait=waiting,
    )


def _note(text: str) -> None:
    click.echo(text, err=True)


def _run(options: SynthOptions) -> SynthOutcome:
    """The action, its refusals as one-line errors (exit 1) and usage errors (exit 2)."""
    from gpustack.actions.synth import NoProfiles, run
    from gpustack.synth.errors import SynthError

    try:
        return run(options)
    except SynthError as exc:
        raise click.ClickException(str(exc)) from exc
    except NoProfiles as exc:
        raise NothingToDo(str(exc)) from None


def _report_check(outcome: SynthOutcome, fmt: str, quiet: bool) -> None:
    """``--check``: the out-of-date files (text or JSON), their diffs, exit 3 when any."""
    from gpustack.synth.report import STALE, check_json, check_lines, stale_error

    plan, out = outcome.plan, outcome.options.out
    assert plan is not None
    coloured = color(fmt)
    if fmt == "json":
        doc = check_json(plan, outcome.differences, outcome.gitops, outcome.renamed)
        doc["problems"] = list(outcome.problems)
        doc["upToDate"] = doc["upToDate"] and not outcome.problems
        click.echo(json.dumps(doc, indent=2))
    elif not quiet:
        for line in [*outcome.problems, *check_lines(plan, outcome.stale, outcome.renamed)]:
            click.echo(style.listing(line) if coloured else line, color=coloured)
    if outcome.options.diff:
        diffs = outcome.diffs
        click.echo(style.diff(diffs) if coloured else diffs, nl=False, color=coloured)
    if outcome.stale or outcome.problems:
        click.echo(
            stale_error(
                plan,
                len(outcome.stale),
                len(outcome.problems),
                _update_command(outcome.options),
            ),
            err=True,
        )
        sys.exit(STALE)
    if fmt == "text" and not quiet:
        click.echo(f"{out} is up to date ({count(len(plan.write) + len(plan.kept), 'cluster')})")


def _update_command(options: SynthOptions) -> str:
    """The ``gpustack synth`` that writes what this ``--check`` compared: its PATHs, ``--out``
    and ``--default-profile``, none of the options that only say how to check."""
    import shlex

    words = ["gpustack", "synth", *map(str, options.paths)]
    if options.out != Path("dist"):
        words += ["--out", str(options.out)]
    if options.default_profile:
        words.append("--default-profile")
    return shlex.join(words)


def _report_write(outcome: SynthOutcome, fmt: str, quiet: bool) -> None:
    """A write: hand edits overwritten (always), then the clusters written and removed."""
    from gpustack.synth.report import write_json, write_lines

    plan, out = outcome.plan, outcome.options.out
    assert plan is not None
    for path in plan.overwrites:
        click.echo(f"gpustack: warning: overwrote {path}, edited by hand (--force)", err=True)
    if fmt == "json":
        doc = write_json(plan, outcome.written, outcome.unchanged, outcome.removed, outcome.gitops)
        click.echo(json.dumps({**doc, "rollout": list(outcome.rollout)}, indent=2))
        return
    if quiet:
        return
    for line in write_lines(plan, outcome.written, outcome.removed, outcome.renamed):
        click.echo(line)
    for kind, path in outcome.gitops:
        click.echo(f"{kind} {path}")
    click.echo(
        f"{out}: {count(len(outcome.written), 'cluster')} written, "
        f"{len(outcome.unchanged)} unchanged, {len(outcome.removed)} removed"
        + (
            f"; {len(outcome.forgotten)} index entries without a folder dropped"
            * bool(outcome.forgotten)
        )
    )
    for note in outcome.rollout:
        click.echo(note)
