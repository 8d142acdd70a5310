"""Declarations: what a field is (:class:`Spec`, :func:`key`), and reading them back from a
dataclass (:func:`declared_fields`, :func:`analyse`), which the schema and the codec share."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from dataclasses import MISSING, dataclass
from typing import Annotated, Any, Final, TypeVar, Union, get_args, get_origin

T = TypeVar("T")
Schema = dict[str, Any]

SPEC: Final = "gpustack.spec"
CLASS_SPEC: Final = "__gpustack_spec__"


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
    metadata = {SPEC: Spec(title=title, description=description, **spec)}
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
        setattr(cls, CLASS_SPEC, Spec(title=title, description=description, ref=ref))
        return cls

    return mark


def spec_of(cls: type[Any], attr: str) -> Spec:
    """The declaration of ``cls.attr`` (for derived declarations and tests)."""
    for f in dataclasses.fields(cls):
        if f.name == attr:
            return f.metadata.get(SPEC) or Spec()
    raise KeyError(f"{cls.__name__} has no field {attr!r}")


def inherit(cls: type[Any], attr: str, **changes: Any) -> Any:
    """A field that overrides ``cls.attr`` for a subset of objects: the same declaration with
    default ``None`` ("unset: inherited") and no documented default; ``changes`` replace parts
    of the declaration."""
    spec = dataclasses.replace(spec_of(cls, attr), document_default=False, **changes)
    return dataclasses.field(default=None, metadata={SPEC: spec})


def camel(attr: str) -> str:
    head, *rest = attr.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True)
class TypeInfo:
    """A field's Python type taken apart: the base type, its constraints and its shape."""

    base: Any
    optional: bool = False
    spec: Spec | None = None  # from Annotated[..., item(...)]
    map: Map | None = None


def analyse(tp: Any) -> TypeInfo:
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
        return TypeInfo(tp, optional, spec, shape)


def map_keys(spec: Spec | None, inner: Spec | None) -> Spec | None:
    """A map's key constraints: the field's ``keys=``, else those its type carries
    (``Annotated[tuple[tuple[str, V], ...], MAP, item(keys=Spec(...))]``, a reusable map type
    such as Kubernetes labels)."""
    if spec is not None and spec.keys is not None:
        return spec.keys
    return inner.keys if inner is not None else None


def is_dataclass_type(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


@dataclass(frozen=True)
class FieldInfo:
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


_DECLARED: dict[type[Any], tuple[FieldInfo, ...]] = {}


def declared_fields(cls: type[Any]) -> tuple[FieldInfo, ...]:
    """The declared fields of ``cls``, taken apart once per class (decoding is a hot path:
    ``gpustack validate`` decodes every profile)."""
    cached = _DECLARED.get(cls)
    if cached is not None:
        return cached
    hints = typing.get_type_hints(cls, include_extras=True)
    out = []
    for f in dataclasses.fields(cls):
        spec: Spec = f.metadata.get(SPEC) or Spec()
        out.append(
            FieldInfo(
                attr=f.name,
                json=spec.name or camel(f.name),
                tp=hints[f.name],
                spec=spec,
                default=f.default,
                factory=f.default_factory,
            )
        )
    _DECLARED[cls] = result = tuple(out)
    return result
