"""``gpustack init``: a first profile for a cluster, and its schemas."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gpustack.actions.validate import DEFAULT_PROFILES
from gpustack.cli.common import example, exit_statuses
from gpustack.cli.group import main

if TYPE_CHECKING:
    from gpustack.scaffold import SchemaWrite


class _Products(click.Choice[str]):
    """``--product``'s choices, listed on first use: listing them imports the validator and the
    catalog, which every other command (``template`` above all) should not pay for at start-up
    (issue #23)."""

    def __init__(self) -> None:
        self._listed: tuple[str, ...] | None = None
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        if self._listed is None:
            from gpustack.scaffold import products

            self._listed = tuple(products())
        return self._listed

    @choices.setter
    def choices(self, _: object) -> None:
        """click's own ``__init__`` sets the (empty) choices given; the listing is ours."""


class _Product(_Products):
    """The products, listed in --help and completed by the shell; an unknown one gets
    validate's did-you-mean rather than click's bare list."""

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> str:
        if value in self.choices:
            return str(value)
        from gpustack.scaffold import product_hint

        self.fail(
            f"{value!r} is not a product gpustack knows ({product_hint(str(value))})", param, ctx
        )


@main.command(short_help="Write a first profile for a cluster, and its schemas.")
@click.argument("name")
@click.option(
    "--product",
    type=_Product(),
    required=True,
    help="GPU product on the nodes (as in gpus.product).",
)
@click.option(
    "--gpus-per-node",
    type=click.IntRange(1, 16),
    default=1,
    show_default=True,
    help="GPUs on each node.",
)
@click.option(
    "--example-gpus",
    type=click.IntRange(1, 16),
    default=1,
    show_default=True,
    help="GPUs the example job asks for (at most --gpus-per-node).",
)
@click.option(
    "--profiles",
    "profiles_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(DEFAULT_PROFILES),
    show_default=True,
    help="Folder to write NAME.yaml into; the schemas go to its parent's schemas/.",
)
@exit_statuses("when written", "when the profile exists, cannot be written or would not be valid")
@example(
    "gpustack init gpu-east --product H100-SXM5-80GB --gpus-per-node 8",
    "a profile for a cluster of 8-GPU H100 nodes, written to profiles/gpu-east.yaml",
)
def init(
    name: str, product: str, gpus_per_node: int, example_gpus: int, profiles_dir: Path
) -> None:
    """Write a first profile, PROFILES/NAME.yaml, for a cluster called NAME.

    It sets the GPU product, GPUs per node, the driver and one PyTorch example job (one GPU
    unless --example-gpus says more), and leaves
    everything else to the schema's defaults; it is validated before it is written, and an
    existing file is never replaced. The profile schemas are written beside PROFILES (in
    ../schemas/, where the editor modeline points) unless a file there is not gpustack's.
    """
    from gpustack.scaffold import (
        ProfileExists,
        argument_errors,
        create_profile,
        profile_text,
        schema_ref,
        write_schemas,
    )

    target = profiles_dir / f"{name}.yaml"
    _schemas_folder_usable(profiles_dir)
    text = profile_text(name, product, gpus_per_node, schema_ref(profiles_dir), example_gpus)
    try:
        result = create_profile(target, text)
    except ProfileExists:
        raise click.ClickException(
            f"{target} exists; choose another NAME or edit that file"
        ) from None
    except OSError as exc:
        raise click.ClickException(f"cannot write {target}: {exc.strerror or exc}") from None
    if not result.ok:  # e.g. a NAME that is no DNS label; nothing was written
        raise click.ClickException("\n".join(argument_errors(result)))
    click.echo(f"wrote {target}")
    for done in _schemas(write_schemas, profiles_dir, target):
        if done.action == "kept":
            click.echo(f"kept {done.path} (not gpustack's schema; the modeline needs it)", err=True)
        elif done.action != "unchanged":
            click.echo(f"{done.action} {done.path}")
    click.echo(f"next: gpustack validate {profiles_dir} && gpustack synth")


def _schemas_folder_usable(profiles_dir: Path) -> None:
    """Refuse, before anything is written, a file where the schemas' folder goes."""
    from gpustack.scaffold import schemas_blocked

    if (blocked := schemas_blocked(profiles_dir.parent)) is not None:
        raise click.ClickException(f"{blocked}; move it away, or name another --profiles")


def _schemas(
    write: Callable[[Path], list[SchemaWrite]], profiles_dir: Path, target: Path
) -> list[SchemaWrite]:
    """What ``write`` (:func:`gpustack.scaffold.write_schemas`) did beside ``profiles_dir``; a
    failure to write is one line (the profile ``target`` is written already)."""
    try:
        return write(profiles_dir.parent)
    except OSError as exc:
        raise click.ClickException(
            f"wrote {target}, but not the schemas: {exc.strerror or exc} ({exc.filename})"
        ) from None
