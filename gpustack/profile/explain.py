"""Turn jsonschema errors into findings a person can act on.

jsonschema's messages say *what* failed; users also need *how to fix it*. The hint comes from the
failing subschema: its ``examples`` ("e.g. 580.105.08"), its ``enum`` ("expected one of: ..."),
or, for an unknown key, the closest allowed key ("did you mean 'version'?").
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from gpustack import fields
from gpustack.profile import catalog
from gpustack.profile.document import JsonPath
from gpustack.profile.finding import Finding
from gpustack.profile.schema import validator

_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "a mapping",
    "array": "a list",
    "null": "null",
}


#: Longest value a message quotes in full: a 50 MB value is not echoed into a terminal or a CI
#: log (issue #11, item 14); the rest is counted.
SHOWN = 60


def _show(value: Any) -> str:
    if isinstance(value, str):
        if len(value) <= SHOWN:
            return repr(value)
        return f"{value[:SHOWN]!r}... ({len(value)} characters)"
    if isinstance(value, dict | list):
        text = json.dumps(value, default=str)
        return text if len(text) <= 40 else text[:37] + "..."
    return clip(json.dumps(value, default=str))


def clip(text: str, limit: int = 4 * SHOWN) -> str:
    """``text`` cut to ``limit`` characters (a message that quotes a value it did not make)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _pattern_hint(schema: Mapping[str, Any]) -> str | None:
    """What the field's pattern accepts, in words (its ``patternErrorMessage``), if it says."""
    message = schema.get("patternErrorMessage")
    return fields.hint_of(message) if isinstance(message, str) else None


def _mismatch(value: str, schema: Mapping[str, Any], what: str = "") -> Finding:
    """A value that fails its pattern: ``'570' is not a driver version ...`` where the
    field says what it accepts in words, else the pattern itself."""
    words = _pattern_hint(schema)
    if words is not None:
        return Finding((), f"{what}{value} is not {words}", _example_hint(schema))
    return Finding(
        (), f"{what}{value} does not match {schema.get('pattern')}", _example_hint(schema)
    )


def _example_hint(schema: Mapping[str, Any]) -> str | None:
    examples = schema.get("examples")
    if examples:
        first = examples[0]
        return f"e.g. {first if isinstance(first, str) else json.dumps(first)}"
    enum = schema.get("enum")
    if enum:
        return "expected one of: " + ", ".join(str(v) for v in enum)
    return None


#: The product field, whose values nodes spell their own way (see :func:`_enum_hint`).
_PRODUCT: tuple[str | int, ...] = ("gpus", "product")
#: What else to do when a value is not in its enum, where there is a way around it.
_ENUM_ALTERNATIVES: dict[tuple[str | int, ...], str] = {
    _PRODUCT: "for a product not listed, set gpus.architecture instead",
}


def _enum_hint(path: tuple[str | int, ...], enum: list[Any], value: Any) -> str:
    """A typo's correction (``mixd`` -> ``mixed``) or the values a prefix names (``H100`` ->
    the H100 products) first, then every allowed value."""
    options = [str(v) for v in enum]
    if path == _PRODUCT and isinstance(value, str):
        named = catalog.product_suggestion(value, options)
        if named:  # what GFD or nvidia-smi call it: the catalog name is the one answer
            return named
    close = difflib.get_close_matches(str(value), options, n=1, cutoff=0.8)
    if not close and isinstance(value, str) and value:
        close = [o for o in options if o.lower().startswith(value.lower())]
    hint = ""
    if len(close) == 1:
        hint = f"did you mean {close[0]!r}? "
    elif close:
        hint = "did you mean one of " + ", ".join(repr(c) for c in close) + "? "
    hint += "expected one of: " + ", ".join(options)
    alternative = _ENUM_ALTERNATIVES.get(path)
    return f"{hint}; {alternative}" if alternative else hint


def _unknown_keys(
    path: tuple[str | int, ...], schema: Mapping[str, Any], value: dict[str, Any]
) -> Iterator[Finding]:
    allowed = sorted(schema.get("properties", {}))
    known = set(allowed)
    for key in value:
        if key in known:
            continue
        close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        if close:
            hint = f"did you mean {close[0]!r}?"
        elif allowed:
            hint = "allowed keys: " + ", ".join(allowed)
        else:
            hint = "this section accepts no keys yet"
        yield Finding((*path, key), f"unknown key {key!r}", hint, at_key=True)


def _explain(error: ValidationError, written: Mapping[JsonPath, str]) -> Iterator[Finding]:
    path: JsonPath = tuple(error.absolute_path)
    kind = error.validator
    schema: Mapping[str, Any] = error.schema if isinstance(error.schema, Mapping) else {}
    value: Any = error.instance
    spec: Any = error.validator_value
    if "propertyNames" in error.relative_schema_path and isinstance(value, str):
        # a key fails its pattern (a MIG profile name, a label key): point at that key
        found = _mismatch(_show(value), schema, "key ")
        yield replace(found, path=(*path, value), at_key=True)
    elif kind == "additionalProperties" and isinstance(value, dict):
        yield from _unknown_keys(path, schema, value)
    elif kind == "required" and isinstance(value, dict):
        # jsonschema reports each missing key as its own error; each names them all here, and
        # schema_findings drops the repeats
        for name in spec:
            if name not in value:
                sub = schema.get("properties", {}).get(name, {})
                yield Finding(path, f"missing required key {name!r}", _example_hint(sub))
    elif kind == "type":
        names = [spec] if isinstance(spec, str) else list(spec)
        expected = " or ".join(_TYPE_NAMES.get(n, n) for n in names)
        hint = _example_hint(schema)
        text = written.get(path)  # as typed: YAML reads 1.30 as the number 1.3
        pattern = schema.get("pattern")
        if (
            "string" in names
            and text is not None
            and isinstance(pattern, str)
            and not fields.compiled(pattern).search(text)
        ):
            # quoting would not help (`version: 570`): say once what the value should look like
            yield replace(_mismatch(clip(text), schema), path=path)
            return
        if "string" in names and text is not None:  # a number, yes/no, a date...
            hint = f'quote it: "{clip(text)}"'
        elif value is None:  # `key:` with nothing after it (all of its lines commented out?)
            hint = "remove the key to use its default" if "default" in schema else hint
        yield Finding(
            path, f"expected {expected}, got {clip(text) if text else _show(value)}", hint
        )
    elif kind == "enum":
        yield Finding(path, f"{_show(value)} is not allowed", _enum_hint(path, spec, value))
    elif kind == "pattern":
        yield replace(_mismatch(_show(value), schema), path=path)
    elif kind == "maxLength":
        yield Finding(
            path, f"{_show(value)} is longer than {spec} characters", _example_hint(schema)
        )
    elif kind == "uniqueItems":
        yield Finding(path, f"{_show(value)} lists a value twice", "list each value once")
    elif kind == "anyOf" and error.context:
        # Prefer the branch whose type fits: a list of strategies should be told which item is
        # wrong, not that it is not a string.
        wrong_type = {e.relative_schema_path[0] for e in error.context if e.validator == "type"}
        fitting = [e for e in error.context if e.relative_schema_path[0] not in wrong_type]
        yield from _explain(best_match(fitting or error.context), written)
    else:
        yield Finding(path, clip(error.message), _example_hint(schema))


def schema_findings(
    data: Mapping[str, Any], written: Mapping[JsonPath, str] | None = None
) -> list[Finding]:
    """Every schema violation in ``data`` (empty when valid), in document order of paths.

    ``written`` (see :class:`~gpustack.profile.document.Document`) lets messages quote non-string
    values as the file spells them.
    """
    out: dict[Finding, None] = {}
    for error in validator().iter_errors(data):
        out.update(dict.fromkeys(_explain(error, written or {})))
    return list(out)
