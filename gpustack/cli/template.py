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
    import sys

    from gpustack.synth.errors import SynthError
    from gpustack.synth.node import start_cdk8s

    # Node and cdk8s' JavaScript libraries load (in Node) while Python imports the validator
    # and reads the profile: most of one render's start-up (issue #23). A missing Node is
    # reported by the rendering, after validation, as before.
    with contextlib.suppress(SynthError):
        start_cdk8s()

    from gpustack.actions.synth import render_one
    from gpustack.report import render_text
    from gpustack.synth.stream import yaml_stream

    if argocd:
        if profile is not None:
            raise click.UsageError("--argocd takes the profile from Argo CD's parameters")
        profile = _argocd_profile()
    elif profile is None:
        raise click.UsageError("Missing argument 'PROFILE'.")
    try:
        rendered = render_one(profile)
    except SynthError as exc:
        raise click.ClickException(str(exc)) from exc
    if rendered.refused is not None:
        if argocd:
            raise click.ClickException(_one_line(render_text(rendered.refused), _source_path()))
        exit_invalid(rendered.refused)
    assert rendered.cluster is not None
    sys.stdout.buffer.write(yaml_stream(rendered.cluster.output))
    sys.stdout.buffer.flush()


def _argocd_profile() -> Path:
    """The profile file the Application's parameters name, checked to exist; one-line
    :class:`click.ClickException` otherwise (Argo CD shows a failing command's stderr)."""
    from gpustack.gitops.argocd_plugin import ParameterError, check_inside, profile_parameter

    try:
        name = profile_parameter(os.environ)
        check_inside(name)
    except ParameterError as exc:
        message = str(exc).replace("source path;", f"source path {_source_path()!r};", 1)
        raise click.ClickException(message) from None
    return Path(name)


def _source_path() -> str:
    """The Application's source path in the repository (Argo CD runs the command there)."""
    from gpustack.gitops.argocd_plugin import SOURCE_PATH_ENV

    return os.environ.get(SOURCE_PATH_ENV) or "."


def _one_line(report: str, source_path: str) -> str:
    """validate's report (one line per finding, then a summary) as one line: the first
    finding, its file named from the repository root, and how many more there are."""
    import posixpath

    lines = report.rstrip("\n").split("\n")
    findings, summary = lines[:-1], lines[-1]
    if not findings:
        return summary
    file, colon, rest = findings[0].partition(":")
    if colon and not file.startswith("/"):
        file = posixpath.normpath(posixpath.join(source_path, file))
    more = f" ({summary}; `gpustack validate` lists them)" if len(findings) > 1 else ""
    return f"{file}{colon}{rest}{more}"
