"""Documents to declared dataclasses and back: :func:`decode` (lenient after a schema validator,
or strict where none runs) and :func:`encode` (declaration order)."""

from __future__ import annotations

import dataclasses
import difflib
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, get_args, get_origin

from gpustack.fields.declare import Spec, analyse, declared_fields, is_dataclass_type, map_keys
from gpustack.fields.pattern import compiled

T = TypeVar("T")


def encode(obj: Any) -> dict[str, Any]:
    """A dataclass as a document in declaration order. A field that is ``None`` where ``None``
    is its default is left out (unset); a ``None`` that overrides a default is written as null."""
    out: dict[str, Any] = {}
    for f in declared_fields(type(obj)):
        value = getattr(obj, f.attr)
        if value is None and (f.required or f.default_value() is None):
            continue
        out[f.json] = encode_value(value, f.tp)
    return out


def encode_value(value: Any, tp: Any) -> Any:
    if value is None:
        return None
    t = analyse(tp)
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
        for f in declared_fields(cls)
    ]
    allowed = [f.json for f in declared_fields(cls)]

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
    t = analyse(tp)
    base = t.base
    if t.map is not None:
        return _map_decoder(base, t.spec, t.map.sort, spec, strict)
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
    if is_dataclass_type(base):
        return _object_decoder(base, strict)
    if not strict:
        return _identity
    if get_origin(base) is Literal:
        return _literal_decoder(get_args(base))
    inner = t.spec

    def scalar(value: Any, path: str) -> Any:
        if value is None:
            raise DecodeError(path, f"expected {_expected(base)}, got null")
        _check_type(base, value, path)
        _check_scalar(value, inner, path)
        _check_scalar(value, spec, path)
        return value

    return scalar


def _map_decoder(
    base: Any, own: Spec | None, sort: bool, spec: Spec | None, strict: bool
) -> Decoder:
    """The decoder of a map field (a tuple of key/value pairs in the model, a mapping in YAML):
    ``own`` is the spec its type carries, ``spec`` the field's."""
    (pair,) = [a for a in get_args(base) if a is not Ellipsis]
    value_dec = _value_decoder(get_args(pair)[1], None, strict)
    keys = map_keys(spec, own)

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


def _literal_decoder(choices: tuple[Any, ...]) -> Decoder:
    """The strict decoder of a ``Literal``: one of ``choices``, of the same type."""

    def literal(value: Any, path: str) -> Any:
        if value not in choices or type(value) is not type(choices[0]):
            raise DecodeError(
                path, f"{value!r} is not valid; use one of: {', '.join(map(str, choices))}"
            )
        return value

    return literal


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
        if spec.pattern is not None and not compiled(spec.pattern).search(value):
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
