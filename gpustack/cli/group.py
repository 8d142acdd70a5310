"""The ``gpustack`` command group, which each command module registers on. Its own module, so
the commands import it without importing the package that imports them all."""

from __future__ import annotations

import click

from gpustack import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpustack")
def main() -> None:
    """Validate GPU stack profiles and synthesize their Kubernetes manifests."""
