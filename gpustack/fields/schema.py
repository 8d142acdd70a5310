"""The JSON Schema of a declared dataclass: closed objects, documented defaults, ``$defs`` for
reused types, in the subset every yaml-language-server understands."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Final, Literal, get_args, get_origin

from gpustack.fields.codec import encode_value
from gpustack.fields.declare import (
    CLASS_SPEC,
    FieldInfo,
    Schema,
    Spec,
    analyse,
    declared_fields,
    is_dataclass_type,
    map_keys,
)

_SCALARS: Final[dict[Any, str]] = {bool: "boolean", int: "integer", str: "string", float: "number"}


def _constraints(spec: Spec | None) -> Schema:
    if spec is None:
        return {}
    out: Schema = {}
    for attr, keyword in (
        ("const", "const"),
        ("enum", "enum"),
        ("pattern", "pattern"),
        ("min_length", "minLength"),
        ("max_length", "maxLength"),
        ("minimum", "minimum"),
        ("maximum", "maximum"),
    ):
        value = getattr(spec, attr)
        if value is not None:
            out[keyword] = list(value) if isinstance(value, tuple) else value
    if spec.pattern is not None and spec.hint is not None:
        # yaml-language-server shows this instead of the bare regex; explain reads it back
        out["patternErrorMessage"] = pattern_message(spec.hint)
    return out


def pattern_message(hint: str) -> str:
    """The ``patternErrorMessage`` of a pattern whose :attr:`Spec.hint` is ``hint``."""
    return f"Expected {hint}."


def hint_of(message: str) -> str:
    """The :attr:`Spec.hint` back from a :func:`pattern_message`."""
    return message.removeprefix("Expected ").removesuffix(".")


def _array_constraints(spec: Spec | None) -> Schema:
    if spec is None:
        return {}
    out: Schema = {}
    if spec.min_items is not None:
        out["minItems"] = spec.min_items
    if spec.max_items is not None:
        out["maxItems"] = spec.max_items
    if spec.unique_items:
        out["uniqueItems"] = True
    return out


def _type_schema(tp: Any, spec: Spec | None, defs: dict[str, Schema]) -> Schema:
    """The schema of a value of type ``tp``; ``spec`` constrains it (a field's or an item's)."""
    t = analyse(tp)
    base = t.base
    inner = t.spec
    if t.map is not None:
        (pair,) = [a for a in get_args(base) if a is not Ellipsis]
        _, value_tp = get_args(pair)
        out: Schema = {"type": "object"}
        keys = map_keys(spec, inner)
        if keys is not None:
            names = _constraints(keys)
            if keys.examples:
                names["examples"] = list(keys.examples)
            out["propertyNames"] = names
        out["additionalProperties"] = _type_schema(value_tp, None, defs)
        return out
    if get_origin(base) is tuple:
        item_tp = get_args(base)[0]
        items = _type_schema(item_tp, None, defs)
        array: Schema = {"type": "array", "items": items, **_array_constraints(spec)}
        if spec is not None and spec.one_or_many:
            return {"anyOf": [items, array]}
        return array
    if is_dataclass_type(base):
        return _class_schema(base, defs)
    if get_origin(base) is Literal:
        values = list(get_args(base))
        kinds = {_SCALARS[type(v)] for v in values}
        out = {"type": kinds.pop()} if len(kinds) == 1 else {}
        out["enum"] = values
        return out
    own = inner or Spec()
    if own.ref is not None:
        if own.ref not in defs:
            defs[own.ref] = {}  # reserve the slot first: definitions keep first-use order
            defs[own.ref] = _documented(own, {"type": _SCALARS[base], **_constraints(own)})
            if own.examples:
                defs[own.ref]["examples"] = list(own.examples)
        return {"$ref": f"#/$defs/{own.ref}"}
    return {"type": _SCALARS[base], **_constraints(inner), **_constraints(spec)}


def _documented(spec: Spec, body: Schema) -> Schema:
    out: Schema = {}
    if spec.title is not None:
        out["title"] = spec.title
    if spec.description is not None:
        out["description"] = spec.description
    return {**out, **body}


def _class_schema(cls: type[Any], defs: dict[str, Schema]) -> Schema:
    own: Spec | None = getattr(cls, CLASS_SPEC, None)
    if own is not None and own.ref is not None:
        if own.ref not in defs:
            defs[own.ref] = {}
            defs[own.ref] = _documented(own, _closed_object(cls, defs))
        return {"$ref": f"#/$defs/{own.ref}"}
    body = _closed_object(cls, defs)
    return _documented(own, body) if own is not None else body


def _closed_object(cls: type[Any], defs: dict[str, Schema]) -> Schema:
    """A closed object: unknown keys are errors, which is how typos get caught."""
    properties = {f.json: field_schema(f, defs) for f in declared_fields(cls)}
    out: Schema = {"type": "object", "additionalProperties": False, "properties": properties}
    required = [f.json for f in declared_fields(cls) if f.required]
    if required:
        out["required"] = required
    return out


def field_schema(f: FieldInfo, defs: dict[str, Schema]) -> Schema:
    """One property: title and description first, so the JSON reads like documentation."""
    spec = f.spec
    body = _type_schema(f.tp, spec, defs)
    if "$ref" in body or "title" in body:
        body = {k: v for k, v in body.items() if k not in ("title", "description")}
    if spec.nullable and isinstance(body.get("type"), str):
        body = {**body, "type": [body["type"], "null"]}
    out = _documented(spec, body)
    if not f.required and spec.document_default:
        default = schema_default(f)
        if default is not None:
            out["default"] = default
    if spec.examples:
        out["examples"] = list(spec.examples)
    return out


def schema_default(f: FieldInfo) -> Any:
    """A field's default as the schema documents it: an object whose fields all keep their
    defaults is ``{}``; ``None`` (derived or unset) is not documented."""
    value = f.default_value()
    if value is None:
        return None
    if dataclasses.is_dataclass(value) and value == typing.cast(Any, type(value))():
        return {}
    return encode_value(value, f.tp)


def object_schema(cls: type[Any], defs: dict[str, Schema]) -> Schema:
    """The schema of ``cls`` as a closed object; reused types are collected into ``defs``."""
    return _class_schema(cls, defs)


def definitions(defs: dict[str, Schema]) -> Schema:
    """``defs`` in the order they were first used (for ``$defs``)."""
    return dict(defs)
