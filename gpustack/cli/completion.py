"""``gpustack completion``: the shell completion script, from click's own completion."""

from __future__ import annotations

import click

from gpustack.cli.common import example, exit_statuses
from gpustack.cli.group import PROG, main

#: The variable click's completion reads, derived from the name as click derives it.
COMPLETE_VAR = f"_{PROG}_COMPLETE".replace("-", "_").upper()


@main.command(short_help="Print the shell completion script (bash, zsh or fish).")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@exit_statuses()
@example(
    "gpustack completion bash > ~/.local/share/bash-completion/completions/gpustack",
    "completion in every new bash",
)
def completion(shell: str) -> None:
    """Print the completion script for the shell: commands, options and their choices complete on
    Tab. Load it in the shell's start-up file:

    \b
      bash (~/.bashrc):  eval "$(gpustack completion bash)"
      zsh  (~/.zshrc):   eval "$(gpustack completion zsh)"
      fish:              gpustack completion fish > ~/.config/fish/completions/gpustack.fish
    """
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    assert cls is not None  # the choices are click's own shells
    script = cls(main, {}, PROG, COMPLETE_VAR).source()
    click.echo(script, nl=not script.endswith("\n"))
