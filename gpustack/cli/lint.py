"""``gpustack lint``: GPU pitfalls in the team's own Kubernetes manifests."""

from __future__ import annotations

from pathlib import Path

import click

from gpustack.cli.common import color, example, exit_statuses, format_option, load_profile
from gpustack.cli.group import main


@main.command(short_help="Find GPU pitfalls in Kubernetes manifests (the team's own workloads).")
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--profile",
    "profile_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The cluster's profile: turns on the rules that compare with it.",
)
@format_option(
    "json", "github", help="text for people, json for machines, github for Actions annotations."
)
@click.option(
    "--disable",
    "disabled",
    multiple=True,
    metavar="RULE",
    help="Skip a rule by its ID (repeatable).",
)
@exit_statuses("when clean", "on any finding (or an invalid profile)")
@example(
    "gpustack lint dist/clusters/lab-1gpu/examples/ --profile profiles/lab-1gpu.yaml",
    "a cluster's jobs checked against its profile",
)
def lint(
    paths: tuple[str, ...], profile_path: Path | None, fmt: str, disabled: tuple[str, ...]
) -> None:
    """Lint Kubernetes manifests (files, folders of *.yaml/*.yml, or - for stdin) for GPU
    pitfalls: Pod, Job, CronJob, Deployment, StatefulSet, DaemonSet, ReplicaSet, Kubeflow
    PyTorchJob/MPIJob and Ray RayCluster/RayJob pod templates, and the ResourceClaims,
    ResourceClaimTemplates, DeviceClasses and ComputeDomains they use (across all the files
    given).

    Without --profile only the rules that hold on any cluster run; with it, the resources,
    capacity, taints, node labels, driver and runtime classes of the profile are checked too.
    """
    import sys

    from gpustack.lint.check import lint as run_lint
    from gpustack.lint.context import LintContext, from_profile, generic
    from gpustack.lint.registry import BY_ID, RULES
    from gpustack.report import render_lint as render

    unknown = sorted(set(disabled) - set(BY_ID))
    if unknown:
        raise click.UsageError(f"unknown rule {unknown[0]!r}; rules: {', '.join(BY_ID)}")
    ctx: LintContext = generic()
    if profile_path is not None:
        profile, shown = load_profile(profile_path, fmt)
        ctx = from_profile(profile, shown)
    stdin = _stdin() if "-" in paths else None
    rules = [r for r in RULES if r.id not in disabled]
    try:
        result = run_lint(paths, ctx, stdin=stdin, rules=rules)
    except FileNotFoundError as exc:
        raise click.UsageError(f"no such file or folder: {exc.args[0]}") from None
    if result.files_checked == 0:
        raise click.UsageError(f"no *.yaml manifests found in {', '.join(paths)}")
    colored = color(fmt)
    click.echo(render(result, fmt, color=colored), nl=False, color=colored)
    if not result.ok:
        sys.exit(1)


def _stdin() -> str:
    """The manifests on standard input, through the same limits as files (one line if not)."""
    import sys

    from gpustack.kube import manifests

    try:
        return manifests.read_stdin(sys.stdin.buffer)
    except manifests.ManifestError as exc:
        raise click.ClickException(f"<stdin>: {exc.message}") from None
