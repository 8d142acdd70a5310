"""``gpustack validate``: profiles against the schema and the rules."""

from __future__ import annotations

from pathlib import Path

import click

from gpustack.cli.common import (
    color,
    example,
    exit_statuses,
    format_option,
    profile_paths,
    refusals,
)
from gpustack.cli.group import main
from gpustack.cli.state import state_options


@main.command(short_help="Check profiles against the schema and the compatibility rules.")
@profile_paths
@format_option(
    "json", "github", help="text for people, json for machines, github for Actions annotations."
)
@state_options
@exit_statuses("when all are valid", "when any is not")
@example(
    "gpustack validate profiles/ --format github",
    "in CI, each finding as an annotation on its line of the pull request",
)
def validate(
    paths: tuple[Path, ...],
    fmt: str,
    state_path: Path | None,
    use_kubectl: bool,
    kube_context: str | None,
) -> None:
    """Check profiles (files or folders, default: profiles/) against the schema and the
    compatibility rules.

    With --state FILE or --kubectl (one profile), every assumption the profile makes about
    the nodes its cluster.nodeSelector picks is checked against them (docs/node-rules.md).

    Folders are searched for *.yaml/*.yml; names starting with "_" (bases for `extends`) are
    skipped, and so are Kubernetes manifests (each named on stderr). Colour follows the
    terminal, NO_COLOR, FORCE_COLOR and TERM=dumb.
    """
    import sys

    from gpustack.actions.validate import ValidateOptions, run
    from gpustack.report import render

    options = ValidateOptions(
        paths,
        state=state_path,
        kubectl=use_kubectl,
        context=kube_context,
        on_note=_note,  # on stderr: stdout stays one report (json, annotations)
    )
    with refusals():
        result = run(options).result
    colored = color(fmt)
    click.echo(render(result, fmt, color=colored), nl=False, color=colored)
    if not result.ok:
        sys.exit(1)


def _note(line: str) -> None:
    click.echo(line, err=True)


# --- init: a first profile ---------------------------------------------------------------------
