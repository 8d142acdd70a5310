"""The ``gpustack`` command group, which each command module registers on. Its own module, so
the commands import it without importing the package that imports them all."""

from __future__ import annotations

import sys
from typing import Any

import click

from gpustack import __version__
from gpustack.exits import INTERRUPTED, Exit
from gpustack.profile.kubernetes_releases import BadToday

#: The command's name (its script, ``--version``, ``python -m gpustack`` and completion).
PROG = "gpustack"


class Group(click.Group):
    """click's group, but Ctrl-C (SIGINT) exits :attr:`Exit.INTERRUPTED` with one line, where
    click prints "Aborted!" and exits 1, as a failure would; a malformed ``GPUSTACK_TODAY`` is a
    usage error (exit 2, one line), wherever a command first needs the day."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo(INTERRUPTED, err=True)
            # Ctrl-C also stopped the children of this process group (cdk8s' Node): their
            # clean-up at exit fails, and that is no news to whoever pressed it
            sys.unraisablehook = _ignore
            ctx.exit(Exit.INTERRUPTED)
        except BadToday as bad:
            raise click.UsageError(str(bad)) from None


def _ignore(_: object) -> None:
    return None


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name=PROG)
def main() -> None:
    """Validate GPU stack profiles and synthesize their Kubernetes manifests."""
