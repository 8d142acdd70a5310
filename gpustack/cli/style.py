"""Colour, where a terminal shows it: findings, ``synth --check`` listings and diffs, ``doctor``.

Why one module: whether to colour is one decision per output stream, made the way people expect
of a command-line tool (https://no-color.org, the ``FORCE_COLOR`` convention of CI logs), and
every command must make it alike: colour on a terminal; none in a pipe or a file, where
escape codes would garble ``grep`` and diffs of logs, under ``NO_COLOR`` (any non-empty value)
or ``TERM=dumb``; ``FORCE_COLOR`` (non-empty) colours pipes too, for CI logs that render it.
``NO_COLOR`` wins over ``FORCE_COLOR``. Machine formats (json, github, junit) are never coloured.

The styling functions take plain text and return it with ANSI codes; the commands pass the
decision to :func:`click.echo` (``color=``), which otherwise strips codes from non-terminals.
"""

from __future__ import annotations

import os
import re
from typing import IO, Any

import click

#: ``synth --check``'s listing: the kind of each change, as git colours its status letters.
_KIND_COLOURS = {"missing:": "green", "extra:": "red", "differs:": "yellow", "renamed:": "cyan"}


def colour_on(stream: IO[Any]) -> bool:
    """Whether text written to ``stream`` is coloured (see the module's docstring)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def diff(text: str) -> str:
    """A unified diff as git colours it: headers bold, hunks cyan, removals red, additions
    green."""
    lines = []
    for line in text.splitlines(keepends=True):
        body, end = line.rstrip("\n"), line[len(line.rstrip("\n")) :]
        if body.startswith(("--- ", "+++ ")):
            body = click.style(body, bold=True)
        elif body.startswith("@@"):
            body = click.style(body, fg="cyan")
        elif body.startswith("-"):
            body = click.style(body, fg="red")
        elif body.startswith("+"):
            body = click.style(body, fg="green")
        lines.append(body + end)
    return "".join(lines)


def listing(line: str) -> str:
    """One ``synth --check`` line (``differs: PATH``) with its kind coloured."""
    kind, sep, rest = line.partition(" ")
    colour = _KIND_COLOURS.get(kind)
    return f"{click.style(kind, fg=colour)}{sep}{rest}" if colour else line


_SUBJECT = re.compile(r"^(?P<subject>[^:]+): (?P<check>[a-z0-9-]+): ")


def diagnosis(line: str) -> str:
    """One ``doctor`` line (``node/gpu-1: check-id: message (hint)``): the subject as validate
    colours a position, the check ID red."""
    m = _SUBJECT.match(line)
    if m is None:
        return line
    subject = click.style(f"{m['subject']}:", fg="yellow", bold=True)
    check = click.style(f"{m['check']}:", fg="red")
    return f"{subject} {check} {line[m.end() :]}"


def doctor(report: str, *, ok: bool) -> str:
    """``doctor``'s text report: each diagnosis line, then the summary."""
    *lines, last = report.splitlines()
    return "".join(f"{diagnosis(line)}\n" for line in lines) + summary(last, ok=ok) + "\n"


def summary(line: str, *, ok: bool) -> str:
    """The closing line: green when all is well, red when not."""
    return click.style(line, fg="green" if ok else "red")
