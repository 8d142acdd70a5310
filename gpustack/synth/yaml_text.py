"""Write a manifest's YAML text directly, byte for byte what PyYAML's pure emitter writes.

Turning objects into YAML was a third of a cold fleet's time, nearly all of it PyYAML's
representer, serializer and resolver in Python (libyaml only writes the final events). gpustack
writes a small subset of YAML: block mappings and sequences, flow style only for an empty map or
list, no tags, anchors or folding, literal blocks for multi-line strings. That subset takes one
pass over the objects here, and each distinct string's text is worked out once per process.

The text must be the reference's exactly (:mod:`gpustack.synth.serialize`: the pure emitter with
our representers), or files would change depending on how they were written. So this module
follows the emitter's own rules where they matter (which scalar styles a string allows, when a key
is "simple", how a literal block is indented and chomped, what a double-quoted string escapes),
and where the subset ends (a float, a long or multi-line key, an empty key, a line separator
character, any type but the JSON ones) :func:`emit` returns ``None`` and the caller writes the
document with PyYAML. ``tests/synth/test_yaml_text.py`` compares both on every committed file and
on arbitrary documents.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import yaml

from gpustack.synth.quoting import ambiguous

#: Line breaks as the emitter counts them; any but ``\n`` ends the subset.
_OTHER_BREAKS = frozenset("\x85\u2028\u2029")
_BREAKS = "\n\x85\u2028\u2029"
#: What counts as whitespace around an indicator (``: ``, `` #``).
_SPACE = "\0 \t\r\n\x85\u2028\u2029"
#: Indicators that keep a plain scalar from starting with them.
_LEADING = "#,[]{}&*!|>'\"%@`"
#: A key whose text is this long or longer (counting the 5 of its ``!!str`` tag) is written as a
#: complex key (``? key``): outside the subset.
_SIMPLE_KEY_MAX = 128 - len("!!str")
_ESCAPES = {
    "\0": "0",
    "\x07": "a",
    "\x08": "b",
    "\t": "t",
    "\n": "n",
    "\x0b": "v",
    "\x0c": "f",
    "\r": "r",
    "\x1b": "e",
    '"': '"',
    "\\": "\\",
    "\x85": "N",
    "\u2028": "L",
    "\u2029": "P",
}
_STR_TAG = "tag:yaml.org,2002:str"
#: The tag PyYAML reads a plain scalar as (``(True, False)``: as written plain).
_resolve: Callable[[type[yaml.Node], str, tuple[bool, bool]], str] = (
    yaml.resolver.Resolver().resolve
)
#: Scalar texts already worked out: a fleet repeats its strings thousands of times.
_VALUES: dict[str, str] = {}
_KEYS: dict[str, str] = {}
_CACHE_MAX = 65536
#: Texts of nested maps and lists lately written, by identity, indentation and whether their
#: first line follows ``- ``. Clusters of a fleet share most of their objects' subtrees (the
#: constructs' render cache hands out the same read-only dicts, and stamping a cluster's labels
#: copies only the dicts on the way to its label maps), so a shared subtree is written once.
#: Each entry pins its object, so an id is not reused while it is here.
_SUBTREES: dict[tuple[int, int, bool], tuple[object, str, bool]] = {}
_SUBTREES_MAX = 8192


class _Outside(Exception):
    """The document leaves the subset: the caller writes it with PyYAML."""


def _unicode(ch: str) -> bool:
    """Whether the emitter writes ``ch`` as it is (``allow_unicode``), not as an escape."""
    return (
        ch == "\x85"
        or "\xa0" <= ch <= "\ud7ff"
        or "\ue000" <= ch <= "\ufffd"
        or "\U00010000" <= ch < "\U0010ffff"
    ) and ch != "\ufeff"


def _styles(s: str) -> tuple[bool, bool, bool]:
    """Which styles the emitter allows for non-empty ``s``: block plain, single-quoted, literal
    block (double-quoted is always allowed)."""
    n = len(s)
    indicators = s.startswith(("---", "..."))
    special = breaks = False
    edge = False  # a space or line break first or last
    break_space = space_break = trailing_space = False
    previous = ""  # " " after a space, "\n" after a line break
    before_space = True
    for i, ch in enumerate(s):
        after_space = i + 1 >= n or s[i + 1] in _SPACE
        if i == 0:
            if ch in _LEADING or (ch in "?:-" and after_space):
                indicators = True
        elif (ch == ":" and after_space) or (ch == "#" and before_space):
            indicators = True
        if not (ch == "\n" or " " <= ch <= "~" or _unicode(ch)):
            special = True
        if ch == " ":
            edge = edge or i == 0 or i == n - 1
            trailing_space = i == n - 1
            break_space = break_space or previous == "\n"
            previous = " "
        elif ch in _BREAKS:
            breaks = True
            edge = edge or i == 0 or i == n - 1
            space_break = space_break or previous == " "
            previous = "\n"
        else:
            previous = ""
        before_space = ch in _SPACE
    bad = space_break or special
    plain = not (edge or break_space or bad or breaks or indicators)
    return plain, not (break_space or bad), not (trailing_space or bad)


def _double_quoted(s: str) -> str:
    parts = ['"']
    for ch in s:
        if ch in _ESCAPES:
            parts.append("\\" + _ESCAPES[ch])
        elif " " <= ch <= "~" or (_unicode(ch) and ch not in _OTHER_BREAKS and ch <= "\ufffd"):
            parts.append(ch)
        elif ch <= "\xff":
            parts.append(f"\\x{ord(ch):02X}")
        elif ch <= "\uffff":
            parts.append(f"\\u{ord(ch):04X}")
        else:
            parts.append(f"\\U{ord(ch):08X}")
    parts.append('"')
    return "".join(parts)


def _quoted(s: str, single: bool) -> str:
    if single:
        if any(ch in _OTHER_BREAKS for ch in s):
            raise _Outside  # the emitter folds line breaks inside single quotes its own way
        return "'" + s.replace("'", "''") + "'"
    return _double_quoted(s)


def _inline(s: str, *, key: bool) -> str:
    """The one-line text of string ``s`` with no ``\\n``, as a key or as a value."""
    if not s:
        if key:
            raise _Outside  # an empty key is a complex key
        return "''"
    plain, single, _ = _styles(s)
    if key and (len(s) >= _SIMPLE_KEY_MAX or any(ch in _OTHER_BREAKS for ch in s)):
        raise _Outside
    if plain and not ambiguous(s) and _resolve(yaml.ScalarNode, s, (True, False)) == _STR_TAG:
        return s
    return _quoted(s, single)


def _literal(s: str, indent: str) -> tuple[str, bool]:
    """A multi-line string at ``indent``, from its indicator (after ``key: `` or ``- ``) to its
    last line break; and whether it keeps its trailing line breaks (``|+``), which then need the
    document end marker if nothing follows."""
    if any(ch in _OTHER_BREAKS for ch in s):
        raise _Outside
    _, _, block = _styles(s)
    if not block:
        return _double_quoted(s) + "\n", False
    hints = "2" if s[0] in " \n" else ""
    if s[-1] != "\n":
        hints += "-"
    elif len(s) == 1 or s[-2] == "\n":
        hints += "+"
    lines = [indent + line if line else line for line in s.split("\n")]
    body = "\n".join(lines)
    return "|" + hints + "\n" + body + ("" if s[-1] == "\n" else "\n"), hints.endswith("+")


def _scalar(value: object, indent: str) -> tuple[str, bool]:
    """A scalar value's text up to its last line break, and whether it is a ``|+`` block."""
    if type(value) is str:
        if "\n" in value:
            return _literal(value, indent)
        found = _VALUES.get(value)
        if found is None:
            if len(_VALUES) >= _CACHE_MAX:
                _VALUES.clear()
            found = _VALUES[value] = _inline(value, key=False) + "\n"
        return found, False
    kind = type(value)
    if kind is bool:
        return ("true\n" if value else "false\n"), False
    if kind is int:
        return f"{value}\n", False
    if value is None:
        return "null\n", False
    raise _Outside  # a float (the emitter's spelling of it is its own) or no JSON type


def _key(key: object) -> str:
    if type(key) is not str:
        raise _Outside
    found = _KEYS.get(key)
    if found is None:
        if "\n" in key:
            raise _Outside
        if len(_KEYS) >= _CACHE_MAX:
            _KEYS.clear()
        found = _KEYS[key] = _inline(key, key=True) + ":"
    return found


Append = Callable[[str], None]
#: Writes a nested map or list: ``nest(value, indent, out, inline, writer)``.
Nest = Callable[[Any, str, Append, bool, "Writer"], bool]
Writer = Callable[[Any, str, Append, bool, Nest], bool]


def _nested(value: Any, indent: str, out: Append, inline: bool, write: Writer) -> bool:
    """A nested map or list written out."""
    return write(value, indent, out, inline, _nested)


def _remembered(value: Any, indent: str, out: Append, inline: bool, write: Writer) -> bool:
    """A nested map or list written once per object (see :data:`_SUBTREES`)."""
    key = (id(value), len(indent), inline)
    found = _SUBTREES.get(key)
    if found is not None and found[0] is value:
        out(found[1])
        return found[2]
    parts: list[str] = []
    open_ended = write(value, indent, parts.append, inline, _remembered)
    text = "".join(parts)
    if len(_SUBTREES) >= _SUBTREES_MAX:
        _SUBTREES.clear()
    _SUBTREES[key] = (value, text, open_ended)
    out(text)
    return open_ended


def _mapping(m: Mapping[Any, Any], indent: str, out: Append, inline: bool, nest: Nest) -> bool:
    """A non-empty block mapping's entries at ``indent`` (the first one on the current line
    when ``inline``: after ``- ``); whether it ended with a ``|+`` block."""
    open_ended = False
    deeper = indent + "  "
    for k, v in m.items():
        if inline:
            inline = False
        else:
            out(indent)
        out(_key(k))
        kind = type(v)
        if kind is dict:
            if v:
                out("\n")
                open_ended = nest(v, deeper, out, False, _mapping)
                continue
            out(" {}\n")
        elif kind is list or kind is tuple:
            if v:
                out("\n")
                # indentless, as PyYAML writes a list in a map
                open_ended = nest(v, indent, out, False, _sequence)
                continue
            out(" []\n")
        else:
            text, open_ended = _scalar(v, deeper)
            out(" ")
            out(text)
            continue
        open_ended = False
    return open_ended


def _sequence(
    items: list[Any] | tuple[Any, ...], indent: str, out: Append, inline: bool, nest: Nest
) -> bool:
    """A non-empty block sequence's items at ``indent`` (see :func:`_mapping`)."""
    open_ended = False
    deeper = indent + "  "
    for v in items:
        if inline:
            inline = False
        else:
            out(indent)
        out("- ")
        kind = type(v)
        if kind is dict:
            if v:
                open_ended = nest(v, deeper, out, True, _mapping)
                continue
            out("{}\n")
        elif kind is list or kind is tuple:
            if v:
                open_ended = nest(v, deeper, out, True, _sequence)
                continue
            out("[]\n")
        else:
            text, open_ended = _scalar(v, deeper)
            out(text)
            continue
        open_ended = False
    return open_ended


def emit(document: Mapping[str, Any], *, shared: bool = False) -> str | None:
    """``document``'s YAML text as the reference writes it, or ``None`` where it leaves the
    subset this module writes (see the module docstring).

    ``shared``: the document is read-only, and parts of it may recur in later documents (the
    layout's manifests): each nested map or list is written once per object, and its text
    reused while the object lives (:data:`_SUBTREES`). Never for objects that change."""
    if not document:
        return "{}\n"
    parts: list[str] = []
    try:
        open_ended = _mapping(document, "", parts.append, False, _remembered if shared else _nested)
    except _Outside:
        return None
    if open_ended:
        parts.append("...\n")
    return "".join(parts)
