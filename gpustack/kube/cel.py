"""A small reader of the CEL that DRA selectors are written in: which device attributes and
capacities an expression reads, and the literal each is compared with.

Not a CEL parser: a regex reader of the forms NVIDIA's docs and DeviceClasses use,
``device.attributes['gpu.nvidia.com'].productName``, ``device.attributes["gpu.nvidia.com"]
["productName"]``, ``device.capacity['gpu.nvidia.com'].memory`` and ``device.driver``, each
optionally compared (``==``, ``!=``, ``<``, ...) with a literal (a string, an int, a bool,
``semver('...')``). An expression it cannot read (unbalanced quotes or brackets) yields nothing,
so lint and doctor never report on a guess. :func:`evaluate` decides the simplest selectors,
``&&`` of ``==``/``!=`` comparisons, for one published device, and says "don't know" for the
rest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

#: Kinds of a literal: the four DeviceAttribute members, and ``double`` (no attribute has it).
LiteralKind = Literal["string", "int", "bool", "version", "double"]

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_REF = re.compile(
    r"device\s*\.\s*(?P<field>attributes|capacity)\s*\[\s*(?P<q>['\"])(?P<domain>[^'\"\\]*)(?P=q)"
    r"\s*\]\s*(?:\.\s*(?P<dotted>"
    + _NAME
    + r")|\[\s*(?P<q2>['\"])(?P<keyed>[^'\"\\]*)(?P=q2)\s*\])"
)
_DRIVER = re.compile(r"device\s*\.\s*driver\b")
_OP = r"(?P<op>==|!=|<=|>=|<|>)"
_LITERAL = (
    r"(?P<lit>semver\(\s*(?P<vq>['\"])(?P<version>[^'\"\\]*)(?P=vq)\s*\)"
    r"|'(?P<s1>[^'\\]*)'|\"(?P<s2>[^\"\\]*)\"|(?P<bool>true|false)\b"
    r"|(?P<double>-?\d+\.\d*(?:[eE][-+]?\d+)?)|(?P<int>-?\d+)(?![\d.eExX]))"
)
_AFTER = re.compile(r"\s*" + _OP + r"\s*" + _LITERAL + r"(?!\s*[.(\[])")
_BEFORE = re.compile(_LITERAL + r"\s*" + _OP + r"\s*$")
_PAIRS = {")": "(", "]": "[", "}": "{"}
#: k8s.io/api resource/v1 types.go ``CELSelectorExpressionMaxLength``: the API server refuses a
#: longer selector, so one is not read at all (and reading stays linear in what it may hold).
MAX_LENGTH = 10 * 1024
#: How far before a read a ``literal op`` is looked for.
_LOOK_BACK = 256


@dataclass(frozen=True)
class Comparison:
    """``<ref> op literal`` (or ``literal op <ref>``): the literal's kind and value."""

    op: str
    kind: LiteralKind
    value: Any
    text: str


@dataclass(frozen=True)
class Ref:
    """One read of a device attribute or capacity (``field``) of ``domain`` named ``name``."""

    field: Literal["attributes", "capacity"]
    domain: str
    name: str
    compared: Comparison | None = None

    @property
    def qualified(self) -> str:
        return f"{self.domain}/{self.name}"

    def show(self) -> str:
        return f"device.{self.field}['{self.domain}'].{self.name}"


def _strings(expr: str) -> list[tuple[int, int]] | None:
    """Spans of the string literals; ``None`` when a string or bracket is left open (or the
    expression is longer than the API server accepts)."""
    if len(expr) > MAX_LENGTH:
        return None
    spans: list[tuple[int, int]] = []
    stack: list[str] = []
    i = 0
    while i < len(expr):
        ch = expr[i]
        if ch in "'\"":
            end = i + 1
            while end < len(expr) and expr[end] != ch:
                end += 2 if expr[end] == "\\" else 1
            if end >= len(expr):
                return None
            spans.append((i, end + 1))
            i = end + 1
            continue
        if ch in "([{":
            stack.append(ch)
        elif ch in _PAIRS and (not stack or stack.pop() != _PAIRS[ch]):
            return None
        i += 1
    return None if stack else spans


def readable(expr: Any) -> bool:
    """Whether ``expr`` is a string this reader can follow (balanced quotes and brackets)."""
    return isinstance(expr, str) and _strings(expr) is not None


def _literal(match: re.Match[str]) -> tuple[LiteralKind, Any]:
    if match.group("version") is not None:
        return "version", match.group("version")
    for group in ("s1", "s2"):
        if match.group(group) is not None:
            return "string", match.group(group)
    if match.group("bool") is not None:
        return "bool", match.group("bool") == "true"
    if match.group("double") is not None:
        return "double", float(match.group("double"))
    return "int", int(match.group("int"))


def _compared(expr: str, start: int, end: int) -> Comparison | None:
    after = _AFTER.match(expr, end)
    if after is not None:
        kind, value = _literal(after)
        return Comparison(after.group("op"), kind, value, after.group("lit"))
    before = _BEFORE.search(expr[max(0, start - _LOOK_BACK) : start])
    if before is not None:
        kind, value = _literal(before)
        return Comparison(before.group("op"), kind, value, before.group("lit"))
    return None


def _inside(spans: list[tuple[int, int]], at: int) -> bool:
    return any(a <= at < b for a, b in spans)


def refs(expr: Any) -> list[Ref]:
    """Every attribute and capacity read of ``expr``, in order; none when it is unreadable."""
    spans = _strings(expr) if isinstance(expr, str) else None
    if spans is None:
        return []
    assert isinstance(expr, str)
    out = []
    for m in _REF.finditer(expr):
        if _inside(spans, m.start()):
            continue
        name = m.group("dotted") or m.group("keyed") or ""
        field: Literal["attributes", "capacity"] = (
            "attributes" if m.group("field") == "attributes" else "capacity"
        )
        out.append(Ref(field, m.group("domain"), name, _compared(expr, m.start(), m.end())))
    return out


def driver(expr: Any) -> str | None:
    """The driver ``expr`` demands with ``device.driver == '...'``, if it does."""
    spans = _strings(expr) if isinstance(expr, str) else None
    if spans is None:
        return None
    assert isinstance(expr, str)
    for m in _DRIVER.finditer(expr):
        if _inside(spans, m.start()):
            continue
        found = _compared(expr, m.start(), m.end())
        if found is not None and found.op == "==" and found.kind == "string":
            return str(found.value)
    return None


def attribute_equals(expr: Any, domain: str, name: str) -> str | None:
    """The string ``expr`` demands of an attribute with ``==`` (``type == 'mig'``), if any."""
    for ref in refs(expr):
        c = ref.compared
        if ref.field != "attributes" or (ref.domain, ref.name) != (domain, name):
            continue
        if c is not None and c.op == "==" and c.kind == "string":
            return str(c.value)
    return None


# --- evaluating the simplest selectors ----------------------------------------------------------

_SIMPLE_REF = re.compile(r"^(?:" + _REF.pattern + r"|(?P<drv>device\s*\.\s*driver))$")


def _split_and(expr: str) -> list[str] | None:
    """The top-level ``&&`` terms of ``expr``; ``None`` when it holds ``||``, ``!``, ``?`` or
    a call (anything but a conjunction of comparisons)."""
    spans = _strings(expr)
    if spans is None:
        return None
    chars = list(expr)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    plain = "".join(chars)
    if re.search(r"\|\||\?|![^=]|\w\s*\(", plain.replace("semver(", "semver_")):
        return None
    terms, depth, last = [], 0, 0
    for i, ch in enumerate(plain):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and plain.startswith("&&", i):
            terms.append(expr[last:i])
            last = i + 2
    terms.append(expr[last:])
    return [t.strip() for t in terms]


def _unwrap(term: str) -> str:
    """``term`` without parentheses around all of it (``(a == 'x')`` -> ``a == 'x'``)."""
    while term.startswith("(") and term.endswith(")"):
        depth = 0
        for i, ch in enumerate(term):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0 and i < len(term) - 1:
                return term  # the first parenthesis closes before the end: (a) == (b)
        term = term[1:-1].strip()
    return term


def _value_of(device: Mapping[str, Any], driver_name: str, ref: re.Match[str]) -> Any:
    if ref.group("drv"):
        return ("string", driver_name)
    domain = ref.group("domain")
    name = ref.group("dotted") or ref.group("keyed") or ""
    field = ref.group("field")
    table = device.get(field)
    if not isinstance(table, Mapping):
        return None
    entry = table.get(name) if domain == driver_name else None
    if entry is None:
        entry = table.get(f"{domain}/{name}")
    if field == "capacity" or not isinstance(entry, Mapping) or len(entry) != 1:
        return None
    ((kind, value),) = entry.items()
    return (kind, value)


def evaluate(expr: Any, device: Mapping[str, Any], driver_name: str) -> bool | None:
    """Whether one published device (a ResourceSlice ``devices[]`` entry of ``driver_name``)
    satisfies ``expr``; ``None`` when the expression is more than ``&&`` of ``==``/``!=``
    comparisons of attributes or the driver with literals."""
    if not isinstance(expr, str):
        return None
    terms = _split_and(expr)
    if terms is None:
        return None
    result = True
    for term in terms:
        text = _unwrap(term)
        comparison = re.match(r"^(?P<left>.+?)\s*(?P<op>==|!=)\s*" + _LITERAL + r"$", text)
        if comparison is None:
            return None
        ref = _SIMPLE_REF.match(comparison.group("left").strip())
        if ref is None:
            return None
        have = _value_of(device, driver_name, ref)
        want_kind, want = _literal(comparison)
        if have is None:
            return None if ref.group("field") == "capacity" else False
        kind, value = have
        equal = kind == want_kind and value == want
        if kind == "version" and want_kind == "version":
            equal = str(value) == str(want)
        result = result and (equal if comparison.group("op") == "==" else not equal)
    return result
