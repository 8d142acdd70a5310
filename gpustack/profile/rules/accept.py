"""Accept comments: a profile knowingly keeps a rule's finding, with a reason, in plain sight.

Why comments and not a profile field: the reason sits on the line it excuses, where a reviewer
reads it in the diff, and the profile's data (and so the schema and the synthesized manifests)
stays what it was. Why so strict: an accept that outlives its finding, names the wrong rule or
gives no reason is itself reported, so accepts cannot rot or hide more than they say.

Syntax, as a comment at the end of the line a finding points at, or on a line of its own
directly above it (further comment lines may sit between)::

    kubernetesVersion: "1.37"  # gpustack: accept kubernetes-version-supported -- canary pool

    # gpustack: accept workload-cuda-fits-driver -- cuda-compat is installed on these nodes
    image: nvcr.io/nvidia/pytorch:25.08-py3

Several IDs may be given, separated by commas. Only rules marked ``acceptable`` in
:mod:`gpustack.profile.rules.registry` can be accepted; schema and YAML errors never can.

The comments are read from the raw text: PyYAML drops comments, and any ``#`` that starts a YAML
comment (at a line's start or after a space) counts. A ``# gpustack:`` inside a quoted string
would be read as a directive too; no profile field has a reason to hold one.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from gpustack.profile.rules.registry import ALL, get

#: ``# gpustack: <body>`` where the ``#`` starts a YAML comment.
_DIRECTIVE = re.compile(r"(?:^|[ \t])#[ \t]*gpustack:(?P<body>.*)$")
_IDS = re.compile(r"[,\s]+")
SYNTAX = "# gpustack: accept <rule-id> -- <reason>"


@dataclass(frozen=True)
class Accept:
    """One well-formed accept comment: at ``line`` (1-based, its ``#`` at ``col``), for the
    findings of ``rules`` on line ``target``."""

    file: str
    line: int
    col: int
    target: int
    rules: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Malformed:
    """A ``# gpustack:`` comment that accepts nothing, and why; ``target`` as for
    :class:`Accept`."""

    file: str
    line: int
    col: int
    target: int
    message: str
    hint: str


@dataclass(frozen=True)
class Directives:
    """What one file's comments say."""

    accepts: tuple[Accept, ...] = ()
    malformed: tuple[Malformed, ...] = ()


NONE = Directives()


def _is_comment_line(line: str) -> bool:
    return line.lstrip().startswith("#")


class _Bad(Exception):
    def __init__(self, message: str, hint: str = f"write {SYNTAX}") -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


def _check_ids(ids: list[str]) -> None:
    """Raise :class:`_Bad` for an ID no rule has, or one of a rule that cannot be accepted."""
    known = [d.id for d in ALL]
    for rule_id in ids:
        described = get(rule_id)
        if described is None:
            close = difflib.get_close_matches(rule_id, known, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}?" if close else "docs/rules.md lists every rule ID"
            raise _Bad(f"unknown rule {rule_id!r}", hint)
        if not described.acceptable:
            raise _Bad(
                f"rule {rule_id} cannot be accepted",
                "fix what it reports; docs/rules.md marks the rules a profile may accept",
            )


def _read(body: str) -> tuple[tuple[str, ...], str]:
    """The rule IDs and the reason of a directive's text after ``gpustack:``."""
    verb, _, rest = body.strip().partition(" ")
    if verb != "accept":
        raise _Bad(f"unknown gpustack comment {body.strip()!r}")
    ids_text, dashes, reason = rest.partition("--")
    ids = [i for i in _IDS.split(ids_text.strip()) if i]
    if not ids:
        raise _Bad("an accept names no rule")
    if not dashes or not reason.strip():
        raise _Bad(
            "an accept needs a reason after --", f"e.g. {SYNTAX.replace('<rule-id>', ids[0])}"
        )
    _check_ids(ids)
    return tuple(ids), reason.strip()


def _target(lines: list[str], number: int) -> int:
    """The line an accept on line ``number`` is for: its own when it ends a line of YAML, else
    the next line that is not a comment."""
    if not _is_comment_line(lines[number - 1]):
        return number
    target = number + 1
    while target <= len(lines) and _is_comment_line(lines[target - 1]):
        target += 1
    return target


def parse(file: str, text: str) -> Directives:
    """Every ``# gpustack:`` comment of a file: the accepts, and those that are malformed."""
    if "gpustack:" not in text:
        return NONE  # the common case: one substring search, no line splitting
    lines = text.splitlines()
    accepts: list[Accept] = []
    malformed: list[Malformed] = []
    for index, line in enumerate(lines):
        match = _DIRECTIVE.search(line)
        if match is None:
            continue
        number, col = index + 1, line.index("#", match.start()) + 1
        target = _target(lines, number)
        try:
            ids, reason = _read(match.group("body"))
        except _Bad as bad:
            malformed.append(Malformed(file, number, col, target, bad.message, bad.hint))
            continue
        accepts.append(Accept(file, number, col, target, ids, reason))
    return Directives(tuple(accepts), tuple(malformed))


def unused_message(accept: Accept, rule_id: str) -> tuple[str, str]:
    """Message and hint for an accept of ``rule_id`` that matched no finding."""
    return (
        f"nothing to accept: rule {rule_id} reports nothing on line {accept.target}",
        "remove the accept; the finding it was for is gone",
    )
