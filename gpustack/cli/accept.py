"""``gpustack accept``: the acceptance run after a sync (manifests, then a report)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gpustack.cli.common import example, exit_invalid, exit_statuses, format_option, refusals
from gpustack.cli.group import main

if TYPE_CHECKING:
    from gpustack.actions.accept import PlanOptions


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


def _planned(profile_path: Path, **kw: Any) -> PlanOptions:
    """The options of :func:`_plan_options` as the actions' :class:`PlanOptions`."""
    from gpustack.actions.accept import PlanOptions

    return PlanOptions(
        profile_path,
        nodes=kw["nodes"],
        state=kw["state_path"],
        tolerance=kw["tolerance"],
        min_busbw=kw["min_busbw"],
    )


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
    from gpustack.actions.accept import ManifestsOptions, manifests
    from gpustack.synth.serialize import dump_yaml

    with refusals():
        outcome = manifests(ManifestsOptions(_planned(profile_path, **kw), image))
    if outcome.refused is not None:
        exit_invalid(outcome.refused)
    if outcome.unpinned:
        click.echo(
            "note: without --state the Jobs cannot be pinned to nodes: apply them one at a time"
            " on idle GPU nodes, or write them with --state so one apply checks each node once",
            err=True,
        )
    docs = [dump_yaml(doc).decode("utf-8") for doc in outcome.objects]
    click.echo("---\n".join(docs), nl=False)


@accept.command("report")
@_plan_options
@click.argument(
    "logs", type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path)
)
@format_option("json", "junit")
@exit_statuses("when every check passed", "on any failure (or an invalid profile or state)")
@example(
    "kubectl logs -n gpustack-system -l app.kubernetes.io/component=acceptance --all-containers"
    " --tail=-1 | gpustack accept report profiles/h100-prod-east.yaml -",
    "the run's verdict from its pods' logs",
)
def report(profile_path: Path, logs: Path, fmt: str, **kw: Any) -> None:
    """Report on the run from its pods' logs (LOGS: a file, - for stdin)."""
    import sys

    from gpustack.accept.report import RENDERERS
    from gpustack.actions.accept import ReportOptions, report

    with refusals():
        outcome = report(ReportOptions(_planned(profile_path, **kw), logs))
    if outcome.refused is not None:
        exit_invalid(outcome.refused, fmt)
    click.echo(RENDERERS[fmt](list(outcome.results)), nl=False)
    if not outcome.ok:
        sys.exit(1)
