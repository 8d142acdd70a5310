"""``gpustack doctor``: why a cluster shows no GPUs, or a GPU pod is Pending."""

from __future__ import annotations

from pathlib import Path

import click

from gpustack.cli import style
from gpustack.cli.common import color, example, exit_invalid, exit_statuses, format_option, refusals
from gpustack.cli.group import main


@main.command(short_help="Explain why a cluster shows no GPUs or a GPU pod is Pending.")
@click.option(
    "--profile",
    "profile_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="The cluster's profile.",
)
@click.option(
    "--state",
    "state_path",
    type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path),
    help="Output of `kubectl get nodes,pods,daemonsets,events,resourceclaims,resourceslices,"
    "deviceclasses,devicetaintrules -A -o json` (- for stdin; without devicetaintrules where "
    "device taints are not served, without the last four on clusters before 1.34).",
)
@click.option("--kubectl", "use_kubectl", is_flag=True, help="Run kubectl to read the state.")
@click.option("--context", "kube_context", help="kubectl context (with --kubectl).")
@format_option("json")
@exit_statuses("when healthy", "on any finding (or an invalid profile)")
@example(
    "gpustack doctor --profile profiles/h100-prod-east.yaml --kubectl --context prod-east",
    "why the cluster of that profile shows no GPUs, read with kubectl",
)
def doctor(
    profile_path: Path,
    state_path: Path | None,
    use_kubectl: bool,
    kube_context: str | None,
    fmt: str,
) -> None:
    """Diagnose the GPU stack of a cluster from its state: per node (not selected, driver or
    toolkit not ready, device plugin missing or crash-looping, no allocatable GPUs, MIG layout
    not applied) and per Pending GPU pod (nodes with the resource, nodes excluded by taints or
    selectors, requests larger than any node; an unallocated ResourceClaim: no DeviceClass, no
    ResourceSlice of its driver, no device that matches its selectors). kubectl runs only with
    --kubectl (read-only: get/list).
    """
    import sys

    from gpustack.actions.doctor import DoctorOptions, run
    from gpustack.report import render_doctor

    options = DoctorOptions(profile_path, state_path, use_kubectl, kube_context)
    with refusals():
        outcome = run(options)
    if outcome.refused is not None:
        exit_invalid(outcome.refused, fmt)
    assert outcome.cluster is not None
    _echo(render_doctor(outcome.findings, outcome.cluster, fmt), fmt, ok=outcome.ok)
    if not outcome.ok:
        sys.exit(1)


def _echo(report: str, fmt: str, *, ok: bool) -> None:
    coloured = color(fmt)
    click.echo(style.doctor(report, ok=ok) if coloured else report, nl=False, color=coloured)


# --- synth: owned by the constructs/synthesis work --------------------------------------------
