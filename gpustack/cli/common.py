"""What several commands share: colour, loading one profile, an action's refusals, counting
nouns."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from gpustack.exits import Exit, statuses

if TYPE_CHECKING:
    from gpustack.checker import CheckResult
    from gpustack.profile.model import Profile


class NothingToDo(click.UsageError):
    """A usage error in one line (``Error: …``, exit 2) where the command found nothing to work
    on (no profiles in a folder, no ``profiles/`` here): the message says what to give instead,
    so click's usage line and help hint would only push it out of sight."""

    def show(self, file: IO[Any] | None = None) -> None:
        click.ClickException.show(self, file)


@contextmanager
def refusals() -> Iterator[None]:
    """An action's refusals (:mod:`gpustack.actions.errors`) as the command line shows them:
    a refused input exits 1 (``Error: …``), options that do not go together are a usage error
    (exit 2, with the usage line), and nothing to work on a usage error in one line."""
    from gpustack.actions.errors import BadOptions, NothingFound, Refused

    try:
        yield
    except Refused as exc:
        raise click.ClickException(str(exc)) from None
    except BadOptions as exc:
        raise click.UsageError(str(exc)) from None
    except NothingFound as exc:
        raise NothingToDo(str(exc)) from None


def color(fmt: str) -> bool:
    """Whether a command's report in ``fmt`` on stdout is coloured (text only; see
    :mod:`gpustack.cli.style`)."""
    import sys

    from gpustack.cli.style import colour_on

    return fmt == "text" and colour_on(sys.stdout)


def load_profile(path: Path, fmt: str = "text") -> tuple[Profile, str]:
    """The validated profile at ``path`` and its display name; exit 1 with validate's report
    when it is not valid (see :func:`exit_invalid` for ``fmt``)."""
    from gpustack.checker import check_paths
    from gpustack.profile.document import display_path

    result = check_paths([path])
    if not result.ok or len(result.profiles) != 1:
        exit_invalid(result, fmt)
    return result.profiles[0].profile, display_path(path)


def exit_invalid(result: CheckResult, fmt: str = "text") -> NoReturn:
    """validate's report of ``result`` on stderr, and exit 1: what every command does with a
    profile that does not validate. A command asked for ``--format json`` (or ``github``)
    also gets validate's document in that format on stdout, where its program reads."""
    import sys

    from gpustack.cli.style import colour_on
    from gpustack.report import FORMATS, render, render_text

    if fmt != "text" and fmt in FORMATS:
        click.echo(render(result, fmt), nl=False)
    coloured = colour_on(sys.stderr)
    click.echo(render_text(result, color=coloured), err=True, nl=False, color=coloured)
    sys.exit(1)


F = TypeVar("F", bound=Callable[..., object])


def exit_statuses(
    ok: str | None = None,
    failed: str | None = None,
    *,
    stale: bool = False,
    disruptive: bool = False,
) -> Callable[[F], F]:
    """Append the command's exit statuses, from :mod:`gpustack.exits`, to its docstring (its
    ``--help``): ``ok`` and ``failed`` say what 0 and 1 mean for it; ``stale`` adds 3,
    ``disruptive`` 4."""

    def add(f: F) -> F:
        import inspect

        said = {s: text for s, text in ((Exit.OK, ok), (Exit.FAILED, failed)) if text}
        listed = statuses(said, stale=stale, disruptive=disruptive)
        f.__doc__ = f"{inspect.cleandoc(f.__doc__ or '')}\n\n{listed}"
        return f

    return add


def format_option(*more: str, help: str | None = None) -> Callable[[F], F]:
    """The ``--format`` option (into ``fmt``): ``text``, the default, for people, then the
    machine formats ``more`` this command writes, so every command spells it the same way."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", *more]),
        default="text",
        show_default=True,
        help=help,
    )


#: What :func:`example` puts before a command's example in its ``--help``.
EXAMPLE = "Example, "


def example(command: str, what: str) -> Callable[[F], F]:
    """Append one real example to the command's docstring (its ``--help``): ``what`` it does,
    then ``command`` on a line of its own that click does not rewrap (``\\b``), so it can be
    copied. Below :func:`exit_statuses`, so the exit statuses stay last. Every example is run,
    or parsed where it needs a cluster, by tests/cli/test_help_examples.py."""

    def add(f: F) -> F:
        import inspect

        doc = inspect.cleandoc(f.__doc__ or "")
        f.__doc__ = f"{doc}\n\n{EXAMPLE}{what}:\n\n\b\n    {command}"
        return f

    return add


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def profile_paths(f: F) -> F:
    """The ``PATHS`` argument of the commands that read profiles: files or folders, each must
    exist (none: the command's default folder)."""
    kind = click.Path(exists=True, file_okay=True, dir_okay=True, path_type=Path)
    return click.argument("paths", nargs=-1, type=kind)(f)


#: ``--format`` of the commands whose ``github`` format is workflow annotations (validate, lint).
annotations_format = format_option(
    "json", "github", help="text for people, json for machines, github for Actions annotations."
)


def out_option(help: str) -> Callable[[F], F]:
    """``--out``: the output folder, ``dist`` by default."""
    kind = click.Path(file_okay=False, path_type=Path)
    return click.option("--out", type=kind, default=Path("dist"), show_default=True, help=help)
