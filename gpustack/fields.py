"""Declare each field of a config file once, on its frozen dataclass; derive the rest.

A field's JSON key, type, default, title, description, examples and constraints live on the
dataclass field (:func:`key`), and three things are derived from that one declaration:

* the JSON Schema (:func:`object_schema`) that editors and ``gpustack validate`` check against,
* decoding a parsed document into the typed, frozen model (:func:`decode`), and
* encoding the model back into a document in declaration order (:func:`encode`).

The profile and the device plugin's config both use it, so the two file formats follow one
strategy. It is deliberately small and ours, not pydantic or msgspec: the schema must stay in the
subset every yaml-language-server understands (closed objects, inline definitions, defaults and
examples on every field, no ``anyOf`` with ``null`` for optional fields), profile errors are
already line-precise through ``jsonschema`` and the loader's position map, and the device plugin
image ships neither library. Standard library only, so the plugin can import it.

The Python type says what a JSON value is:

====================================  ==============================================
``bool``, ``int``, ``str``             boolean, integer, string
``Literal["a", "b"]``                  a string enum
``X | None``                           X, optional: ``None`` means "unset"
``tuple[X, ...]``                      an array of X
``Annotated[tuple[tuple[str, V], ...], MAP]``  a map of V (``SORTED_MAP``: pairs sorted)
a dataclass                            a closed object of its fields
``Annotated[X, item(...)]``            X with constraints (array items, map values)
====================================  ==============================================

A dataclass decorated with :func:`documented` brings its own title and description where it is an
array item, and with ``ref`` it becomes a ``$defs`` entry that every use refers to.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass
from typing import Annotated, Any, Final, Literal, TypeVar, Union, get_args, get_origin

__all__ = [
    "MAP",
    "SORTED_MAP",
    "DecodeError",
    "Spec",
    "decode",
    "definitions",
    "documented",
    "encode",
    "item",
    "key",
    "object_schema",
    "schema_default",
    "spec_of",
]

T = TypeVar("T")
Schema = dict[str, Any]

_SPEC: Final = "gpustack.spec"
_CLASS_SPEC: Final = "__gpustack_spec__"


@dataclass(frozen=True)
class Map:
    """Marks a ``tuple[tuple[str, V], ...]`` as a JSON object of V (``sort``: pairs sorted, so
    the frozen value is deterministic and hashable; else in document order)."""

    sort: bool


MAP: Final = Map(sort=False)
SORTED_MAP: Final = Map(sort=True)


@dataclass(frozen=True)
class Spec:
    """What one field (or array item, map value, map key) is, beyond its Python type.

    ``name`` is the JSON key (default: the attribute in camelCase). ``hint`` says in words what
    ``pattern`` accepts, for decoding errors (``'x' is not <hint>``). ``one_or_many``: a single
    item is accepted where a list is expected. ``ref`` names a ``$defs`` entry for a reused type.
    ``document_default``: False keeps a default out of the schema (an override that inherits).
    ``const``: the one value allowed (a format version). ``nullable``: ``null`` is a value of its
    own (the schema allows it; strict decoding keeps it as ``None`` instead of refusing it).
    ``fix`` says how to fix a missing required key or an empty list, for decoding errors
    (``missing; <fix>``, ``empty list; <fix>``).
    """

    title: str | None = None
    description: str | None = None
    name: str | None = None
    examples: tuple[Any, ...] = ()
    enum: tuple[Any, ...] | None = None
    pattern: str | None = None
    hint: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    minimum: int | None = None
    maximum: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    unique_items: bool = False
    keys: Spec | None = None
    one_or_many: bool = False
    ref: str | None = None
    document_default: bool = True
    const: str | int | bool | None = None
    nullable: bool = False
    fix: str | None = None


def key(
    title: str,
    description: str,
    *,
    default: Any = MISSING,
    factory: Callable[[], Any] | Any = MISSING,
    **spec: Any,
) -> Any:
    """A documented dataclass field: ``default`` (or ``factory``) is the one place its default
    is written; ``spec`` takes :class:`Spec`'s other fields (``pattern=``, ``examples=`` ...)."""
    if "examples" in spec:
        spec["examples"] = tuple(spec["examples"])
    metadata = {_SPEC: Spec(title=title, description=description, **spec)}
    if factory is not MISSING:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def item(**spec: Any) -> Spec:
    """Constraints for an array item or a map value: ``Annotated[int, item(minimum=1)]``."""
    if "examples" in spec:
        spec["examples"] = tuple(spec["examples"])
    return Spec(**spec)


def documented(
    title: str, description: str, *, ref: str | None = None
) -> Callable[[type[T]], type[T]]:
    """Title and description of a dataclass wherever it stands alone (an array item, a
    ``$defs`` entry); a field of its type may still say more about its role."""

    def mark(cls: type[T]) -> type[T]:
        setattr(cls, _CLASS_SPEC, Spec(title=title, description=description, ref=ref))
        return cls

    return mark


def spec_of(cls: type[Any], attr: str) -> Spec:
    """The declaration of ``cls.attr`` (for derived declarations and tests)."""
    for f in dataclasses.fields(cls):
        if f.name == attr:
            return f.metadata.get(_SPEC) or Spec()
    raise KeyError(f"{cls.__name__} has no field {attr!r}")


def inherit(cls: type[Any], attr: str, **changes: Any) -> Any:
    """A field that overrides ``cls.attr`` for a subset of objects: the same declaration with
    default ``None`` ("unset: inherited") and no documented default; ``changes`` replace parts
    of the declaration."""
    spec = dataclasses.replace(spec_of(cls, attr), document_default=False, **changes)
    return dataclasses.field(default=None, metadata={_SPEC: spec})


def camel(attr: str) -> str:
    head, *rest = attr.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Type:
    """A field's Python type taken apart: the base type, its constraints and its shape."""

    base: Any
    optional: bool = False
    spec: Spec | None = None  # from Annotated[..., item(...)]
    map: Map | None = None


def _analyse(tp: Any) -> _Type:
    optional = False
    spec: Spec | None = None
    shape: Map | None = None
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp, *extras = get_args(tp)
            for extra in extras:
                if isinstance(extra, Spec):
                    spec = extra
                elif isinstance(extra, Map):
                    shape = extra
            continue
        if origin in (Union, types.UnionType):
            args = [a for a in get_args(tp) if a is not type(None)]
            optional = len(args) != len(get_args(tp))
            if len(args) != 1:
                raise TypeError(f"unsupported union {tp!r}")
            tp = args[0]
            continue
        return _Type(tp, optional, spec, shape)


def _is_dataclass(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


@dataclass(frozen=True)
class _Field:
    attr: str
    json: str
    tp: Any
    spec: Spec
    default: Any  # MISSING when required
    factory: Any

    @property
    def required(self) -> bool:
        return self.default is MISSING and self.factory is MISSING

    def default_value(self) -> Any:
        if self.factory is not MISSING:
            return self.factory()
        return self.default


_FIELDS: dict[type[Any], tuple[_Field, ...]] = {}


def _fields(cls: type[Any]) -> tuple[_Field, ...]:
    """The declared fields of ``cls``, taken apart once per class (decoding is a hot path:
    ``gpustack validate`` decodes every profile)."""
    cached = _FIELDS.get(cls)
    if cached is not None:
        return cached
    hints = typing.get_type_hints(cls, include_extras=True)
    out = []
    for f in dataclasses.fields(cls):
        spec: Spec = f.metadata.get(_SPEC) or Spec()
        out.append(
            _Field(
                attr=f.name,
                json=spec.name or camel(f.name),
                tp=hints[f.name],
                spec=spec,
                default=f.default,
                factory=f.default_factory,
            )
        )
    _FIELDS[cls] = result = tuple(out)
    return result


# ---------------------------------------------------------------------------------------------
# Schema
# ---------------------------------------------------------------------------------------------

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
    return out


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
    t = _analyse(tp)
    base = t.base
    inner = t.spec
    if t.map is not None:
        (pair,) = [a for a in get_args(base) if a is not Ellipsis]
        _, value_tp = get_args(pair)
        out: Schema = {"type": "object"}
        if spec is not None and spec.keys is not None:
            names = _constraints(spec.keys)
            if spec.keys.examples:
                names["examples"] = list(spec.keys.examples)
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
    if _is_dataclass(base):
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
    own: Spec | None = getattr(cls, _CLASS_SPEC, None)
    if own is not None and own.ref is not None:
        if own.ref not in defs:
            defs[own.ref] = {}
            defs[own.ref] = _documented(own, _closed_object(cls, defs))
        return {"$ref": f"#/$defs/{own.ref}"}
    body = _closed_object(cls, defs)
    return _documented(own, body) if own is not None else body


def _closed_object(cls: type[Any], defs: dict[str, Schema]) -> Schema:
    """A closed object: unknown keys are errors, which is how typos get caught."""
    properties = {f.json: field_schema(f, defs) for f in _fields(cls)}
    out: Schema = {"type": "object", "additionalProperties": False, "properties": properties}
    required = [f.json for f in _fields(cls) if f.required]
    if required:
        out["required"] = required
    return out


def field_schema(f: _Field, defs: dict[str, Schema]) -> Schema:
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


def schema_default(f: _Field) -> Any:
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


# ---------------------------------------------------------------------------------------------
# Encoding
# ---------------------------------------------------------------------------------------------


def encode(obj: Any) -> dict[str, Any]:
    """A dataclass as a document in declaration order. A field that is ``None`` where ``None``
    is its default is left out (unset); a ``None`` that overrides a default is written as null."""
    out: dict[str, Any] = {}
    for f in _fields(type(obj)):
        value = getattr(obj, f.attr)
        if value is None and (f.required or f.default_value() is None):
            continue
        out[f.json] = encode_value(value, f.tp)
    return out


def encode_value(value: Any, tp: Any) -> Any:
    if value is None:
        return None
    t = _analyse(tp)
    if t.map is not None:
        (pair,) = [a for a in get_args(t.base) if a is not Ellipsis]
        value_tp = get_args(pair)[1]
        return {k: encode_value(v, value_tp) for k, v in value}
    if get_origin(t.base) is tuple:
        item_tp = get_args(t.base)[0]
        return [encode_value(v, item_tp) for v in value]
    if dataclasses.is_dataclass(value):
        return encode(value)
    return value


# ---------------------------------------------------------------------------------------------
# Decoding
# ---------------------------------------------------------------------------------------------


class DecodeError(ValueError):
    """A value does not fit its declaration; ``path`` is a JSON path (``$.a.b[0]``)."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}")


def decode(cls: type[T], data: Any, *, strict: bool = False, path: str = "$") -> T:
    """Build ``cls`` from a parsed document, filling in every default.

    ``strict=False`` is for documents a JSON Schema validator already accepted (the profile):
    only shapes are converted, and ``null`` means "use the default". ``strict=True`` checks
    every type, enum, pattern, range, required and unknown key itself and raises
    :class:`DecodeError` at the first problem (the device plugin, which ships no validator);
    ``null`` is then accepted only where the field is ``nullable``, as in the schema.
    Decoders are compiled once per class and mode: ``gpustack validate`` decodes every profile.
    """
    return typing.cast(T, _object_decoder(cls, strict)(data, path))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    for tp, word in (
        (bool, "a boolean"),
        (int, "an integer"),
        (float, "a number"),
        (str, "a string"),
        (list, "a list"),
    ):
        if isinstance(value, tp):
            return word
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__


def _mapping(value: Any, path: str, allowed: Sequence[str] | None) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise DecodeError(path, f"expected a mapping, got {_kind(value)}")
    for k in value:
        if not isinstance(k, str):
            raise DecodeError(path, f"keys must be strings, got {_kind(k)} {k!r}")
        if allowed is not None and k not in allowed:
            close = difflib.get_close_matches(k, allowed, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"allowed: {', '.join(allowed)}"
            raise DecodeError(f"{path}.{k}", f"unknown key; remove it ({hint})")
    return value


Decoder = Callable[[Any, str], Any]
_DECODERS: dict[tuple[type[Any], bool], Decoder] = {}


def _object_decoder(cls: type[Any], strict: bool) -> Decoder:
    cached = _DECODERS.get((cls, strict))
    if cached is not None:
        return cached

    def late(data: Any, path: str) -> Any:  # stands in while a recursive type compiles
        return _DECODERS[(cls, strict)](data, path)

    _DECODERS[(cls, strict)] = late
    plan = [
        (
            f.attr,
            f.json,
            f"missing; {f.spec.fix or 'this key is required'}" if f.required else None,
            f.spec.nullable,
            _value_decoder(f.tp, f.spec, strict),
        )
        for f in _fields(cls)
    ]
    allowed = [f.json for f in _fields(cls)]

    def lenient(data: Any, path: str) -> Any:
        if data is None:
            data = {}
        kwargs: dict[str, Any] = {}
        for attr, name, missing, _, dec in plan:
            value = data.get(name)
            if value is None:
                if missing is not None:
                    raise DecodeError(f"{path}.{name}", missing)
                continue  # the dataclass default applies
            kwargs[attr] = dec(value, path)
        return cls(**kwargs)

    def checked(data: Any, path: str) -> Any:
        data = _mapping(data, path, allowed)
        kwargs: dict[str, Any] = {}
        for attr, name, missing, nullable, dec in plan:
            here = f"{path}.{name}"
            if name not in data:
                if missing is not None:
                    raise DecodeError(here, missing)
                continue
            value = data[name]
            kwargs[attr] = None if value is None and nullable else dec(value, here)
        return cls(**kwargs)

    decoder = checked if strict else lenient
    _DECODERS[(cls, strict)] = decoder
    return decoder


def _identity(value: Any, path: str) -> Any:
    return value


def _value_decoder(tp: Any, spec: Spec | None, strict: bool) -> Decoder:
    """A function that decodes one value of type ``tp``. Lenient decoders get the parent's
    path and never build their own (paths are only needed for errors, which strict mode
    reports)."""
    t = _analyse(tp)
    base = t.base
    if t.map is not None:
        (pair,) = [a for a in get_args(base) if a is not Ellipsis]
        value_dec = _value_decoder(get_args(pair)[1], None, strict)
        keys = spec.keys if spec is not None else None
        sort = t.map.sort

        def mapping(value: Any, path: str) -> Any:
            if strict:
                value = _mapping(value, path, None)
                for k in value:
                    _check_scalar(k, keys, path)
            pairs = [
                (str(k), value_dec(v, f"{path}.{k}" if strict else path)) for k, v in value.items()
            ]
            return tuple(sorted(pairs) if sort else pairs)

        return mapping
    if get_origin(base) is tuple:
        item_dec = _value_decoder(get_args(base)[0], None, strict)
        one_or_many = spec is not None and spec.one_or_many

        def array(value: Any, path: str) -> Any:
            if one_or_many and not isinstance(value, list):
                return (item_dec(value, path),)
            if strict:
                _check_array(value, spec, path)
                return tuple(item_dec(v, f"{path}[{i}]") for i, v in enumerate(value))
            return tuple(item_dec(v, path) for v in value)

        return array
    if _is_dataclass(base):
        return _object_decoder(base, strict)
    if not strict:
        return _identity
    if get_origin(base) is Literal:
        choices = get_args(base)

        def literal(value: Any, path: str) -> Any:
            if value not in choices or type(value) is not type(choices[0]):
                raise DecodeError(
                    path, f"{value!r} is not valid; use one of: {', '.join(map(str, choices))}"
                )
            return value

        return literal
    inner = t.spec

    def scalar(value: Any, path: str) -> Any:
        if value is None:
            raise DecodeError(path, f"expected {_expected(base)}, got null")
        _check_type(base, value, path)
        _check_scalar(value, inner, path)
        _check_scalar(value, spec, path)
        return value

    return scalar


def _expected(base: Any) -> str:
    if get_origin(base) is Literal:
        return "one of: " + ", ".join(map(str, get_args(base)))
    return {bool: "true or false", int: "an integer", str: "a string", float: "a number"}.get(
        base, "a value"
    )


def _check_type(base: Any, value: Any, path: str) -> None:
    ok = (
        isinstance(value, bool)
        if base is bool
        else isinstance(value, base) and not isinstance(value, bool)
    )
    if not ok:
        raise DecodeError(path, f"expected {_expected(base)}, got {_kind(value)} {value!r}")


def _check_scalar(value: Any, spec: Spec | None, path: str) -> None:
    if spec is None:
        return
    if spec.const is not None and (value != spec.const or type(value) is not type(spec.const)):
        raise DecodeError(path, f"{value!r} is not supported; set it to {spec.const}")
    if spec.enum is not None and value not in spec.enum:
        raise DecodeError(
            path, f"{value!r} is not valid; use one of: {', '.join(map(str, spec.enum))}"
        )
    if isinstance(value, str):
        if spec.pattern is not None and not re.search(spec.pattern, value):
            raise DecodeError(path, f"{value!r} is not {spec.hint or 'in the expected form'}")
        if spec.min_length is not None and len(value) < spec.min_length:
            raise DecodeError(path, f"{value!r} is empty or too short")
        if spec.max_length is not None and len(value) > spec.max_length:
            raise DecodeError(
                path, f"{value!r} is longer than {spec.max_length} characters; shorten it"
            )
    elif isinstance(value, int):
        if spec.minimum is not None and value < spec.minimum:
            raise DecodeError(path, f"{value} is too small; use a value >= {spec.minimum}")
        if spec.maximum is not None and value > spec.maximum:
            raise DecodeError(path, f"{value} is too large; use a value <= {spec.maximum}")


def _check_array(value: Any, spec: Spec | None, path: str) -> None:
    if not isinstance(value, list):
        raise DecodeError(path, f"expected a list, got {_kind(value)}")
    if spec is None:
        return
    if spec.min_items is not None and len(value) < spec.min_items:
        if spec.fix is not None and not value:
            raise DecodeError(path, f"empty list; {spec.fix}")
        raise DecodeError(path, f"empty list; give at least {spec.min_items}")
    if spec.max_items is not None and len(value) > spec.max_items:
        raise DecodeError(path, f"{len(value)} items; at most {spec.max_items} are allowed")
    if spec.unique_items:
        seen: list[Any] = []
        for i, v in enumerate(value):
            if v in seen:
                raise DecodeError(f"{path}[{i}]", f"duplicate value {v!r}; list it once")
            seen.append(v)
