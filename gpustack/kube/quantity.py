"""Kubernetes resource quantities (``resource.Quantity``) as exact numbers.

The API server accepts a quantity by the grammar of k8s.io/apimachinery
``pkg/api/resource/quantity.go``: a signed decimal number (``1``, ``1.5``, ``1.``, ``.5``)
followed by one suffix, binary SI (``Ki Mi Gi Ti Pi Ei``: powers of 1024), decimal SI (``n u m``
and ``k M G T P E``, or none) or a decimal exponent (``e``/``E`` and a signed integer). So
``"1e0"``, ``"1000m"`` and ``"1"`` are the same one GPU, and lint must read them alike (issue #21:
``nvidia.com/gpu: "1e0"`` was refused). What the parser adds to the grammar is kept too:
surrounding whitespace is trimmed when a quantity is read from JSON or YAML, a value finer than
a nano is rounded away from zero to one nano, and a binary SI value is capped at 2^63-1.
Arithmetic is exact (:mod:`decimal` with a context wide enough for any quantity written).
"""

from __future__ import annotations

import re
from contextlib import suppress
from decimal import ROUND_UP, Context, Decimal, InvalidOperation, localcontext
from typing import Any

#: Binary SI suffix -> power of 1024.
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
#: Decimal SI suffix -> power of 10.
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_GRAMMAR = re.compile(
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<binary>[KMGTPE]i)|[eE](?P<exponent>[+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))"
)
#: The exponent is read as a 32-bit integer upstream; beyond it the quantity is refused.
_EXPONENT_BOUND = 1 << 31
_NANO = Decimal("1e-9")
_BINARY_CAP = Decimal((1 << 63) - 1)
#: Wide enough that no quantity a file can hold is rounded or overflows while summed.
_EXACT = Context(prec=200, Emax=999_999_999, Emin=-999_999_999)


def parse(text: str) -> Decimal | None:
    """The value of a quantity string, or ``None`` when the API server would refuse it."""
    found = _GRAMMAR.fullmatch(text.strip())
    if found is None:
        return None
    number = found["number"]
    with localcontext(_EXACT):
        if found["binary"] is not None:
            value = Decimal(number) * (Decimal(1024) ** _BINARY[found["binary"]])
            value = min(value, _BINARY_CAP) if value > 0 else max(value, -_BINARY_CAP)
        else:
            if found["exponent"] is not None:
                power = int(found["exponent"])
                if abs(power) >= _EXPONENT_BOUND:
                    return None
            else:
                power = _DECIMAL[found["decimal"] or ""]
            value = Decimal(number).scaleb(power)
        exponent = value.as_tuple().exponent
        if isinstance(exponent, int) and exponent < -9:  # finer than a nano: round it up
            # more digits than the context holds: keep it as it is
            with suppress(InvalidOperation):
                value = value.quantize(_NANO, rounding=ROUND_UP)
    return value


def quantity(value: Any) -> Decimal | None:
    """A quantity as a manifest holds it: a string by the grammar, or a JSON/YAML number (which
    the API server reads by its text); ``None`` for anything else (booleans, lists, maps)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return parse(repr(value))
    if isinstance(value, str):
        return parse(value)
    return None


def add(*values: Decimal) -> Decimal:
    """Exact sum of quantities (the default context would round past 28 digits)."""
    with localcontext(_EXACT):
        try:
            return sum(values, Decimal(0))
        except InvalidOperation:  # pragma: no cover - only NaN would, and parse makes none
            return Decimal(0)
