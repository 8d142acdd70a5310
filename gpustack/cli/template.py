"""``gpustack template``: one cluster's manifests on stdout."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import click

from gpustack.cli.common import example, exit_invalid, exit_statuses
from gpustack.cli.group import main


@main.command(short_help="Print one profile's manifests as a YAML stream, in install order.")
@click.argument(
    "profile",
    required=False,
    type=click.Path(exists=True, file_okay=True, dir_okay=False, path_type=Path),
)
@click.option(
    "--argocd",
    is_flag=True,
    help="Run as Argo CD's config management plugin: the profile is the Application's "
    "`profile` parameter (ARGOCD_APP_PARAMETERS), relative to the working directory (its "
    "source path); every error is one line on stderr.",
)
@exit_statuses(failed="on an invalid profile")
@example(
    "gpustack template profiles/lab-1gpu.yaml | kubectl apply --server-side --dry-run=server -f -",
    "the API server checks every object without creating it",
)
def template(profile: Path | None, argocd: bool) -> None:
    """Print the manifests `gpustack synth` writes for PROFILE's cluster folder as one YAML
    stream on stdout, in the order of its kustomization.yaml (install order), writing nothing.

    For pipes (`| kubeconform`, `| kubectl diff -f -`) and for rendering inside Argo CD. The
    profile is validated first: on an issue the findings go to stderr.
    """
    from gpustack.synth.errors import SynthError
    from gpustack.synth.node import start_cdk8s

    # Node and cdk8s' JavaScript libraries load (in Node) while Python imports the validator
    # and reads the profile: most of one render's start-up (issue #23). A missing Node is
    # reported by the rendering, after validation, as before.
    with contextlib.suppress(SynthError):
        start_cdk8s()

    if argocd:
        if profile is not None:
            raise click.UsageError("--argocd takes the profile from Argo CD's parameters")
        _argocd()
    elif profile is None:
        raise click.UsageError("Missing argument 'PROFILE'.")
    else:
        _one(profile)


def _argocd() -> None:
    """The plugin's ``generate`` in this process (the warm renderer runs the same action)."""
    import sys

    from gpustack.actions.argocd import generate

    done = generate(os.environ)
    if done.error is not None:
        raise click.ClickException(done.error)
    sys.stdout.buffer.write(done.stdout)
    sys.stdout.buffer.flush()


def _one(profile: Path) -> None:
    """Validate and render ``profile``; its findings on stderr when it is refused."""
    import sys

    from gpustack.actions.synth import render_one
    from gpustack.synth.errors import SynthError
    from gpustack.synth.stream import yaml_stream

    try:
        rendered = render_one(profile)
    except SynthError as exc:
        raise click.ClickException(str(exc)) from exc
    if rendered.refused is not None:
        exit_invalid(rendered.refused)
    assert rendered.cluster is not None
    sys.stdout.buffer.write(yaml_stream(rendered.cluster.output))
    sys.stdout.buffer.flush()
