"""``gpustack images``: the images the synthesized clusters pull."""

from __future__ import annotations

from pathlib import Path

import click

from gpustack.cli.common import example, exit_statuses, refusals
from gpustack.cli.group import main
from gpustack.images.formats import FORMATS


@main.command(short_help="List the images the synthesized clusters pull, for mirroring.")
@click.argument("profiles", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="list",
    show_default=True,
    help="list: one reference per line; json: per cluster, with sources and users; oc-mirror: "
    "an ImageSetConfiguration (v2alpha1); skopeo: a `skopeo sync --src yaml` file.",
)
@click.option(
    "--cluster",
    "cluster",
    metavar="NAME",
    help="Only the cluster of this name (default: every cluster of the profiles).",
)
@exit_statuses(failed="on a missing path, an invalid profile or an unknown --cluster")
@example(
    "gpustack images profiles/airgapped-mirror.yaml --format oc-mirror",
    "the images an air-gapped cluster needs, as oc-mirror's image set",
)
def images(profiles: tuple[Path, ...], fmt: str, cluster: str | None) -> None:
    """List exactly the images the clusters of PROFILES (files or folders, default: profiles/)
    pull: every container, init container and ephemeral container image of the manifests
    `gpustack synth` writes, rendered in memory (nothing is written), digests included where
    pinned.

    With cluster.imageRegistry set, an image the registry moved is listed as `SOURCE MIRROR`:
    the upstream reference to copy, then the reference the manifests pull from the mirror.
    """
    from gpustack.actions.images import ImagesOptions, run
    from gpustack.images.formats import render

    with refusals():
        outcome = run(ImagesOptions(profiles, cluster=cluster))
    click.echo(render(fmt, outcome.clusters), nl=False)
