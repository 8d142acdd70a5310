"""``gpustack validate``: profiles against the schema and the rules."""

from __future__ import annotations

from pathlib import Path

import click

from gpustack.cli import main
from gpustack.cli.common import DEFAULT_PROFILES, count


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
@click.option(
    "--state",
    "state_path",
    type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path),
    help="Also check the profile against its nodes: output of `kubectl get"
    " nodes,pods,daemonsets,events -A -o json` (- for stdin).",
)
@click.option("--kubectl", "use_kubectl", is_flag=True, help="As --state, read by kubectl.")
@click.option("--context", "kube_context", help="kubectl context (with --kubectl).")
def validate(
    paths: tuple[Path, ...],
    fmt: str,
    state_path: Path | None = None,
    use_kubectl: bool = False,
    kube_context: str | None = None,
) -> None:
    """Check profiles (files or folders, default: profiles/) against the schema and the
    compatibility rules. Exit 0 when all are valid, 1 when any is not, 2 on usage errors.

    With --state FILE or --kubectl (one profile), every assumption the profile makes about
    the nodes its cluster.nodeSelector picks is checked against them (docs/node-rules.md).

    Folders are searched for *.yaml/*.yml; names starting with "_" (bases for `extends`) are
    skipped, and so are Kubernetes manifests (each named on stderr). Colour follows the
    terminal, NO_COLOR and TERM=dumb.
    """
    import os
    import sys

    from gpustack.checker import check_paths
    from gpustack.report import render
    from gpustack.scan import scan

    if not paths:
        default = Path(DEFAULT_PROFILES)
        if not default.is_dir():
            raise click.UsageError(f"no PATH given and no {DEFAULT_PROFILES}/ folder here")
        paths = (default,)
    found = scan(list(paths))
    if not found.files and not found.unreadable:
        raise click.UsageError(f"no *.yaml profiles found in {', '.join(map(str, paths))}")
    result = check_paths(list(paths))
    for skipped in result.skipped:  # on stderr: stdout stays one report (json, annotations)
        click.echo(f"{skipped.file}: skipped: {skipped.what}", err=True)
    if result.skipped and not result.files_checked:
        raise click.UsageError(
            f"no profiles in {', '.join(map(str, paths))}: {count(len(result.skipped), 'file')} "
            "skipped, none is a gpustack profile"
        )
    if state_path is not None or use_kubectl:
        from gpustack.nodestate.cli import against_nodes

        result = against_nodes(result, state_path, use_kubectl, kube_context)
    color = (
        fmt == "text"
        and sys.stdout.isatty()
        and not os.environ.get("NO_COLOR")
        and os.environ.get("TERM") != "dumb"
    )
    click.echo(render(result, fmt, color=color), nl=False, color=color)
    if not result.ok:
        sys.exit(1)


# --- init: a first profile ---------------------------------------------------------------------
