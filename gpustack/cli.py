"""The ``gpustack`` command line: wiring only.

Each command turns options into calls of the library and results into output and exit codes.
User errors exit 1 (``click.ClickException``), usage errors exit 2, and expected failures never
print a traceback. Heavy modules (cdk8s, Node) are imported inside ``synth`` only, so that
``validate`` stays fast and Node-free.
"""

from __future__ import annotations

from pathlib import Path

import click

from gpustack import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gpustack")
def main() -> None:
    """Validate GPU stack profiles and synthesize their Kubernetes manifests."""


# --- validate: owned by the profile/validation work -------------------------------------------

DEFAULT_PROFILES = "profiles"


@main.command()
@click.argument(
    "paths",
    nargs=-1,
    type=click.Path(exists=True, file_okay=True, dir_okay=True, path_type=Path),
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="text for people, json for machines, github for Actions annotations.",
)
def validate(paths: tuple[Path, ...], fmt: str) -> None:
    """Check profiles (files or folders, default: profiles/) against the schema and the
    compatibility rules. Exit 0 when all are valid, 1 when any is not.

    Folders are searched for *.yaml/*.yml; names starting with "_" (bases for `extends`) are
    skipped. Colour follows the terminal and NO_COLOR.
    """
    import os
    import sys

    from gpustack.checker import check_paths, discover
    from gpustack.report import render

    if not paths:
        default = Path(DEFAULT_PROFILES)
        if not default.is_dir():
            raise click.UsageError(f"no PATH given and no {DEFAULT_PROFILES}/ folder here")
        paths = (default,)
    if not discover(list(paths)):
        raise click.UsageError(f"no *.yaml profiles found in {', '.join(map(str, paths))}")
    result = check_paths(list(paths))
    color = fmt == "text" and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    click.echo(render(result, fmt, color=color), nl=False, color=color)
    if not result.ok:
        sys.exit(1)


# --- synth: owned by the constructs/synthesis work --------------------------------------------
