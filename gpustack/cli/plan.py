"""``gpustack plan``: what the profiles' change does on the nodes, against a commit."""

from __future__ import annotations

from pathlib import Path

import click

from gpustack.cli.common import (
    example,
    exit_invalid,
    exit_statuses,
    format_option,
    out_option,
    profile_paths,
    refusals,
)
from gpustack.cli.group import main
from gpustack.exits import Exit


@main.command(short_help="Say what the profiles' change does on the nodes, against a commit.")
@profile_paths
@click.option(
    "--base",
    default="HEAD",
    show_default=True,
    help="The git ref whose committed output the change is compared with.",
)
@out_option("The output folder (its clusters/ as committed at --base is the base side).")
@format_option(
    "json",
    "github",
    help="text for people, json for machines, github for a pull-request comment (Markdown).",
)
@click.option(
    "--exit-code",
    is_flag=True,
    help=f"Exit {int(Exit.DISRUPTIVE)} when the plan replaces a pod, repartitions MIG or needs a "
    "manual step (for CI).",
)
@exit_statuses(
    "when the plan is printed", "on an invalid profile or a ref that is no commit", disruptive=True
)
@example(
    "gpustack plan --base origin/main --format github > plan.md",
    "in CI, the plan of a pull request as a comment",
)
def plan(paths: tuple[Path, ...], base: str, out: Path, fmt: str, exit_code: bool) -> None:
    """Render the profiles (files or folders, default: profiles/) in memory, compare the
    objects with the output committed at --base, and say for each cluster what the change does
    on the nodes: which DaemonSets' and Deployments' pods are replaced and how (OnDelete or
    rolling, maxUnavailable), whether GPU workloads are evicted (a driver reinstall, a MIG
    layout), whether the container runtime restarts (the toolkit), the dip in allocatable GPUs
    while a plugin rolls, which ConfigMaps change and whether their readers roll, what is only
    metadata, and the manual steps with their commands (objects to prune, moved or renamed
    objects, CRD versions dropped, OnDelete pods to delete). Nothing is written.
    """
    import json

    from gpustack.actions.plan import PlanOptions, run
    from gpustack.plan.render_json import document
    from gpustack.plan.render_text import github, text

    with refusals():
        outcome = run(PlanOptions(paths, out=out, base=base))
    if outcome.refused is not None:
        exit_invalid(outcome.refused, fmt)
    assert outcome.plan is not None
    if fmt == "json":
        click.echo(json.dumps(document(outcome.plan), indent=2))
    else:
        click.echo((github if fmt == "github" else text)(outcome.plan), nl=False)
    if exit_code and outcome.plan.disruptive:
        raise SystemExit(int(Exit.DISRUPTIVE))
