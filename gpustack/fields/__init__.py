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

from gpustack.fields.codec import DecodeError, decode, encode, encode_value
from gpustack.fields.declare import (
    MAP,
    SORTED_MAP,
    Map,
    Spec,
    camel,
    documented,
    inherit,
    item,
    key,
    spec_of,
)
from gpustack.fields.pattern import compiled, python_pattern
from gpustack.fields.schema import (
    definitions,
    field_schema,
    hint_of,
    object_schema,
    pattern_message,
    schema_default,
)

__all__ = [
    "MAP",
    "SORTED_MAP",
    "DecodeError",
    "Map",
    "Spec",
    "camel",
    "compiled",
    "decode",
    "definitions",
    "documented",
    "encode",
    "encode_value",
    "field_schema",
    "hint_of",
    "inherit",
    "item",
    "key",
    "object_schema",
    "pattern_message",
    "python_pattern",
    "schema_default",
    "spec_of",
]
