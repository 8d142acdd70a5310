"""Schema patterns, matched in Python as JSON Schema means them.

A JSON Schema ``pattern`` is an ECMA-262 regular expression, where ``$`` (without the multiline
flag) matches only at the very end of the string. In Python's ``re``, ``$`` also matches just
before a final newline, so ``^[a-z]+$`` accepts ``"lab\\n"``: a cluster name with a newline
passes, becomes a folder name and lands in manifests the API server rejects (issue #11, item 9).
Editors (yaml-language-server) and ECMA-conformant validators already read our patterns right;
:func:`compiled` makes gpustack's own checks (the profile validator, strict decoding) agree.
"""

from __future__ import annotations

import re
from functools import cache


def python_pattern(pattern: str) -> str:
    """``pattern`` with every end-of-input ``$`` (outside a character class, not escaped)
    written as Python's ``\\Z``, so a final newline is not skipped over."""
    out: list[str] = []
    in_class = False
    escaped = False
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "$":
            out.append(r"\Z")
            continue
        out.append(ch)
    return "".join(out)


@cache
def compiled(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled with ECMA-262's meaning of ``$`` (search semantics, as in JSON
    Schema: a pattern is anchored only where it says ``^`` and ``$``)."""
    return re.compile(python_pattern(pattern))
