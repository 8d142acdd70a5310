"""The CLI reference: click's own help of every ``gpustack`` command, at a fixed width.

Rendered through click (not by running the program), so the page is exactly what ``--help``
prints on any terminal of 80 columns or more, whatever the terminal of the person regenerating it.
"""

from __future__ import annotations

import click

from gpustack.cli import main
from gpustack.exits import MEANING, Exit

#: click wraps help at its cap of 80 columns less 2 on any terminal at least that wide.
WIDTH = 80 - 2


def _walk(
    command: click.Command, path: tuple[str, ...], parent: click.Context | None
) -> list[tuple[tuple[str, ...], str]]:
    settings = dict(command.context_settings)
    ctx = click.Context(
        command, info_name=path[-1], parent=parent, terminal_width=WIDTH, **settings
    )
    out = [(path, command.get_help(ctx))]
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                out += _walk(sub, (*path, name), ctx)
    return out


def render() -> str:
    """``docs/reference/cli.md``: one section per command, its ``--help`` as printed."""
    lines = [
        "# CLI",
        "",
        "Generated from the commands' own help by `python -m gpustack.docsite`; do not edit by"
        " hand. Each section is what `--help` prints.",
        "",
        "## Exit statuses",
        "",
        "The same for every command (`gpustack/exits.py`); each command's help says what 0 and 1",
        "mean for it.",
        "",
        "| Status | Meaning |",
        "| --- | --- |",
        *(f"| {int(s)} | {MEANING[s]} |" for s in Exit),
        "",
    ]
    for path, text in _walk(main, ("gpustack",), None):
        level = "#" * min(len(path) + 1, 4)
        shown = [f"$ {' '.join(path)} --help", *text.rstrip().splitlines()]
        lines += [f"{level} `{' '.join(path)}`", "", "```console", *shown, "```", ""]
    return "\n".join(lines)
