"""GitHub Actions ``::error`` and ``::notice`` workflow commands, as ``validate`` and ``lint``
print them.

One place for the escaping GitHub requires (``%``, CR and LF in the message; also ``:`` and ``,``
in properties), so both commands' annotations read the same in a pull request.
"""

from __future__ import annotations


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_error(
    file: str, line: int, col: int, title: str, message: str, *, level: str = "error"
) -> str:
    """One annotation on ``file:line:col``, headed ``title``; ``level`` ``notice`` for a finding
    that fails nothing."""
    props = f"file={_escape_property(file)},line={line},col={col},title={_escape_property(title)}"
    return f"::{level} {props}::{_escape_data(message)}"
