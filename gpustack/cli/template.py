"""``gpustack template``: one cluster's manifests on stdout."""

from __future__ import annotations

from pathlib import Path

import click

from gpustack.cli import main


@main.command(short_help="Print one profile's manifests as a YAML stream, in install order.")
@click.argument(
    "profile", type=click.Path(exists=True, file_okay=True, dir_okay=False, path_type=Path)
)
def template(profile: Path) -> None:
    """Print the manifests `gpustack synth` writes for PROFILE's cluster folder as one YAML
    stream on stdout, in the order of its kustomization.yaml (install order), writing nothing.

    For pipes (`| kubeconform`, `| kubectl diff -f -`) and for rendering inside Argo CD. The
    profile is validated first: on an issue the findings go to stderr and the exit status is 1.
    """
    import sys

    from gpustack.checker import check_paths
    from gpustack.report import render_text
    from gpustack.synth.errors import SynthError
    from gpustack.synth.pipeline import Source, synthesize_clusters
    from gpustack.synth.stream import yaml_stream

    result = check_paths([profile])
    if not result.ok or len(result.profiles) != 1:
        click.echo(render_text(result), err=True, nl=False)
        sys.exit(1)
    (loaded,) = result.profiles
    try:
        (cluster,) = synthesize_clusters([Source(loaded.path, loaded.profile)], Path("dist"))
    except SynthError as exc:
        raise click.ClickException(str(exc)) from exc
    sys.stdout.buffer.write(yaml_stream(cluster.output))
    sys.stdout.buffer.flush()
