"""``gpustack accept``: the acceptance run after a sync (manifests, then a report)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from gpustack.cli.common import example, exit_statuses, load_profile
from gpustack.cli.group import main


def _plan_options(f: Any) -> Any:
    for option in reversed(
        [
            click.argument(
                "profile_path",
                metavar="PROFILE",
                type=click.Path(exists=True, dir_okay=False, path_type=Path),
            ),
            click.option("--nodes", type=click.IntRange(1), help="GPU nodes per plugin config."),
            click.option(
                "--state",
                "state_path",
                type=click.Path(exists=True, dir_okay=False, path_type=Path),
                help="Name the nodes from a recorded state (as validate --state reads it): each"
                " check's pod is pinned to its node.",
            ),
            click.option(
                "--tolerance",
                type=click.FloatRange(0, 1, max_open=True),
                default=0.2,
                show_default=True,
                help="Share the bus bandwidth may fall short of the interconnect's.",
            ),
            click.option("--min-busbw", type=click.FloatRange(0), help="Threshold in GB/s."),
        ]
    ):
        f = option(f)
    return f


def _plan(profile_path: Path, fmt: str = "text", **kw: Any) -> tuple[Any, list[Any]]:
    from gpustack.accept.plan import NothingToAccept, plan

    profile, _ = load_profile(profile_path, fmt)
    cluster = None
    if kw["state_path"] is not None:
        from gpustack.nodestate.source import SourceError, read

        try:
            cluster = read(kw["state_path"], str(kw["state_path"]))
        except SourceError as exc:
            raise click.ClickException(str(exc)) from None
    try:
        found = plan(
            profile, cluster, kw["nodes"], tolerance=kw["tolerance"], min_busbw=kw["min_busbw"]
        )
    except NothingToAccept as exc:
        raise click.ClickException(f"{profile_path}: {exc}") from None
    return profile, found


@main.group(short_help="Acceptance run after a sync: GPU checks and NCCL bandwidth.")
@example(
    "gpustack accept manifests profiles/h100-prod-east.yaml | kubectl apply --server-side -f -",
    "start the acceptance run, then read it with `gpustack accept report`",
)
def accept() -> None:
    """Check that the synced stack delivers what the profile promises: `manifests` writes the
    Jobs (apply them), `report` reads their logs (exit 1 on any failure)."""


@accept.command("manifests")
@_plan_options
@click.option("--image", help="Image with PyTorch (default: the examples' image).")
@exit_statuses(failed="on an invalid profile or state")
@example(
    "gpustack accept manifests profiles/h100-prod-east.yaml | kubectl apply --server-side -f -",
    "start the acceptance run on the cluster of that profile",
)
def manifests(profile_path: Path, image: str | None, **kw: Any) -> None:
    """Write the acceptance run's objects for PROFILE to stdout (YAML)."""
    from gpustack.accept.manifests import objects
    from gpustack.synth.serialize import dump_yaml

    profile, groups = _plan(profile_path, **kw)
    if any(g.nodes > 1 and not g.hosts for g in groups):
        click.echo(
            "note: without --state the Jobs cannot be pinned to nodes: apply them one at a time"
            " on idle GPU nodes, or write them with --state so one apply checks each node once",
            err=True,
        )
    docs = [dump_yaml(doc).decode("utf-8") for doc in objects(profile, groups, image)]
    click.echo("---\n".join(docs), nl=False)


@accept.command("report")
@_plan_options
@click.argument(
    "logs", type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path)
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "junit"]),
    default="text",
    show_default=True,
)
@exit_statuses("when every check passed", "on any failure (or an invalid profile or state)")
@example(
    "kubectl logs -n gpustack-system -l app.kubernetes.io/component=acceptance --all-containers"
    " --tail=-1 | gpustack accept report profiles/h100-prod-east.yaml -",
    "the run's verdict from its pods' logs",
)
def report(profile_path: Path, logs: Path, fmt: str, **kw: Any) -> None:
    """Report on the run from its pods' logs (LOGS: a file, - for stdin)."""
    import sys

    from gpustack import limits
    from gpustack.accept.report import MAX_LOG_BYTES, RENDERERS, parse_logs

    _, groups = _plan(profile_path, fmt, **kw)
    shown = "<stdin>" if str(logs) == "-" else str(logs)
    try:
        text = limits.read_text(logs, MAX_LOG_BYTES, what="log", lenient=True)
    except limits.Refused as exc:
        raise click.ClickException(f"{shown}: {exc}") from None
    results = parse_logs(text, groups)
    click.echo(RENDERERS[fmt](results), nl=False)
    if not all(r.ok for r in results):
        sys.exit(1)
