"""``gpustack validate``: profiles against the schema and the rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gpustack.cli.common import DEFAULT_PROFILES, NothingToDo, color, count, example, exit_statuses
from gpustack.cli.group import main
from gpustack.nodestate.cli import against_nodes, state_options


@main.command(short_help="Check profiles against the schema and the compatibility rules.")
@click.argument(
    "paths",
    nargs=-1,
    type=click.Path(exists=True, file_okay=True, dir_okay=True, path_type=Path),
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="text for people, json for machines, github for Actions annotations.",
)
@state_options
@exit_statuses("when all are valid", "when any is not")
@example(
    "gpustack validate profiles/ --format github",
    "in CI, each finding as an annotation on its line of the pull request",
)
def validate(paths: tuple[Path, ...], fmt: str, **node_state: Any) -> None:
    """Check profiles (files or folders, default: profiles/) against the schema and the
    compatibility rules.

    With --state FILE or --kubectl (one profile), every assumption the profile makes about
    the nodes its cluster.nodeSelector picks is checked against them (docs/node-rules.md).

    Folders are searched for *.yaml/*.yml; names starting with "_" (bases for `extends`) are
    skipped, and so are Kubernetes manifests (each named on stderr). Colour follows the
    terminal, NO_COLOR, FORCE_COLOR and TERM=dumb.
    """
    import sys

    from gpustack.checker import check_paths
    from gpustack.report import render
    from gpustack.scan import scan

    if not paths:
        default = Path(DEFAULT_PROFILES)
        if not default.is_dir():
            raise NothingToDo(f"no PATH given and no {DEFAULT_PROFILES}/ folder here")
        paths = (default,)
    found = scan(list(paths))
    if not found.files and not found.unreadable:
        raise NothingToDo(f"no *.yaml profiles found in {', '.join(map(str, paths))}")
    result = check_paths(list(paths))
    if result.skipped and not result.files_checked:  # one line, not one per manifest
        raise _no_profiles(paths, len(result.skipped))
    for skipped in result.skipped:  # on stderr: stdout stays one report (json, annotations)
        click.echo(f"{skipped.file}: skipped: {skipped.what}", err=True)
    for base in result.bases:
        click.echo(f"{base.file}: note: {base.what}", err=True)
    result = against_nodes(result, **node_state)
    colored = color(fmt)
    click.echo(render(result, fmt, color=colored), nl=False, color=colored)
    if not result.ok:
        sys.exit(1)


def _no_profiles(paths: tuple[Path, ...], skipped: int) -> NothingToDo:
    return NothingToDo(
        f"no profiles in {', '.join(map(str, paths))}: {count(skipped, 'file')} skipped, none "
        f"is a gpustack profile (give the profiles, e.g. `gpustack validate {DEFAULT_PROFILES}/`)"
    )


# --- init: a first profile ---------------------------------------------------------------------
