"""``gpustack explain``: a profile's readiness and placement graph, as text or Mermaid."""

from __future__ import annotations

from pathlib import Path

import click

from gpustack.cli.common import example, exit_invalid, exit_statuses
from gpustack.cli.group import main


@main.command(short_help="Show which pod waits for which file and which labels place the stack.")
@click.argument(
    "profile", type=click.Path(exists=True, file_okay=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--graph",
    is_flag=True,
    help="Print the graph as a Mermaid flowchart (paste it into a Markdown file, or a "
    "```mermaid block on GitHub or GitLab, to see the picture).",
)
@exit_statuses(failed="on an invalid profile")
@example(
    "gpustack explain --graph profiles/h100-prod-east.yaml > graph.md",
    "the cluster's graph as Mermaid, to paste into a pull request",
)
def explain(profile: Path, graph: bool) -> None:
    """Print PROFILE's readiness and placement graph: each pod of the stack, the readiness
    files it waits for and who writes them, and who writes the node labels that select the GPU
    nodes (the graph the readiness and node-label rules of `gpustack validate` check).

    The profile is validated first: on an issue the findings go to stderr.
    """
    from gpustack import explain as diagrams
    from gpustack.checker import check_paths

    result = check_paths([profile])
    if not result.ok or not result.profiles:
        exit_invalid(result)
    loaded = result.profiles[0].profile
    click.echo(diagrams.mermaid(loaded) if graph else diagrams.text(loaded), nl=False)
