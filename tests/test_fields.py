"""gpustack.fields: one declaration gives the schema, the decoding and the encoding."""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from jsonschema import Draft202012Validator

from gpustack import fields
from gpustack.fields import MAP, SORTED_MAP, DecodeError, Spec, documented, inherit, item, key
from gpustack.fields.generated import write_or_check
from gpustack.profile import model
from gpustack.profile.schema import build_schema

Color = Literal["red", "green"]


@documented("Part", "One part.", ref="part")
@dataclass(frozen=True)
class Part:
    name: str = key("Name", "Part name.", pattern=r"^[a-z]+$", hint="lowercase letters")
    count: int = key("Count", "How many.", default=1, minimum=1, maximum=9)


@dataclass(frozen=True)
class Inner:
    flag: bool = key("Flag", "A switch.", default=False)


@dataclass(frozen=True)
class Sample:
    color: Color = key("Color", "A colour.", default="red")
    label: str | None = key("Label", "Unset: derived.", default=None, examples=["x"])
    tags: tuple[Annotated[str, item(pattern=r"^t")], ...] = key(
        "Tags", "Tags.", factory=tuple, unique_items=True
    )
    modes: tuple[Color, ...] = key(
        "Modes", "One or many.", default=("red",), one_or_many=True, min_items=1
    )
    limits: Annotated[tuple[tuple[str, Annotated[int, item(maximum=7)]], ...], SORTED_MAP] = key(
        "Limits", "Name to count.", factory=tuple, keys=Spec(pattern=r"^[a-z]+$")
    )
    order: Annotated[tuple[tuple[str, str], ...], MAP] = key("Order", "In order.", factory=tuple)
    parts: tuple[Part, ...] = key("Parts", "The parts.", factory=tuple)
    inner: Inner = key("Inner", "Nested.", factory=Inner)
    numa: int | None = key("NUMA", "None is meaningful here.", default=0, nullable=True)
    api_id: str = key("ID", "Renamed key.", default="a", name="apiID")


@dataclass(frozen=True)
class Override:
    count: int | None = inherit(Part, "count")


def schema_of(cls: type[Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The object schema of ``cls`` (resolved when it is a ``$defs`` entry) and the defs."""
    defs: dict[str, Any] = {}
    schema = fields.object_schema(cls, defs)
    ref = schema.get("$ref", "")
    return (defs[ref.removeprefix("#/$defs/")] if ref else schema), defs


def test_schema_is_derived_from_the_declarations() -> None:
    schema, defs = schema_of(Sample)
    props = schema["properties"]
    assert schema["additionalProperties"] is False
    assert "required" not in schema
    assert props["color"] == {
        "title": "Color",
        "description": "A colour.",
        "type": "string",
        "enum": ["red", "green"],
        "default": "red",
    }
    assert "default" not in props["label"] and props["label"]["examples"] == ["x"]
    assert props["tags"]["items"] == {"type": "string", "pattern": "^t"}
    assert props["tags"]["uniqueItems"] is True and props["tags"]["default"] == []
    assert props["modes"]["anyOf"][0] == {"type": "string", "enum": ["red", "green"]}
    assert props["modes"]["anyOf"][1]["minItems"] == 1 and props["modes"]["default"] == ["red"]
    assert props["limits"]["propertyNames"] == {"pattern": "^[a-z]+$"}
    assert props["limits"]["additionalProperties"] == {"type": "integer", "maximum": 7}
    assert props["parts"]["items"] == {"$ref": "#/$defs/part"}
    assert schema_of(Part)[0] == defs["part"]
    assert defs["part"]["required"] == ["name"] and defs["part"]["title"] == "Part"
    assert props["inner"]["default"] == {} and props["inner"]["title"] == "Inner"
    assert props["numa"]["default"] == 0
    assert "apiID" in props and "apiId" not in props
    Draft202012Validator.check_schema({**schema, "$defs": defs})


def test_an_override_keeps_the_constraints_but_not_the_default() -> None:
    schema, _ = schema_of(Override)
    assert schema["properties"]["count"] == {
        "title": "Count",
        "description": "How many.",
        "type": "integer",
        "minimum": 1,
        "maximum": 9,
    }
    assert fields.decode(Override, {}) == Override(count=None)


def test_decoding_fills_defaults_and_freezes_shapes() -> None:
    got = fields.decode(
        Sample,
        {
            "modes": "green",
            "limits": {"b": 2, "a": 1},
            "order": {"z": "1", "a": "2"},
            "parts": [{"name": "x"}],
            "apiID": "b",
        },
        strict=True,
    )
    assert got.modes == ("green",)
    assert got.limits == (("a", 1), ("b", 2))  # sorted
    assert got.order == (("z", "1"), ("a", "2"))  # as written
    assert got.parts == (Part(name="x", count=1),)
    assert got.inner == Inner() and got.api_id == "b" and got.color == "red"


def test_lenient_decoding_reads_null_as_the_default() -> None:
    assert fields.decode(Sample, {"color": None, "numa": None}) == Sample()


def test_encoding_writes_declaration_order_and_round_trips() -> None:
    value = Sample(label="l", parts=(Part(name="p"),), numa=None, order=(("z", "1"), ("a", "2")))
    doc = fields.encode(value)
    assert list(doc) == [
        "color",
        "label",
        "tags",
        "modes",
        "limits",
        "order",
        "parts",
        "inner",
        "numa",
        "apiID",
    ]
    assert doc["numa"] is None  # overrides a non-None default: written
    assert "label" in doc and list(doc["order"]) == ["z", "a"]
    assert fields.decode(Sample, doc, strict=True) == value
    assert "label" not in fields.encode(Sample())  # None where None is the default: left out


STRICT_ERRORS: list[tuple[Any, str, str]] = [
    ([], "$", "expected a mapping, got a list"),
    ({"colour": "red"}, "$.colour", "unknown key; remove it (did you mean 'color'?)"),
    ({"color": "blue"}, "$.color", "'blue' is not valid; use one of: red, green"),
    ({"tags": "t1"}, "$.tags", "expected a list, got a string"),
    ({"tags": ["t1", "t1"]}, "$.tags[1]", "duplicate value 't1'; list it once"),
    ({"tags": ["x"]}, "$.tags[0]", "'x' is not in the expected form"),
    ({"modes": []}, "$.modes", "empty list; give at least 1"),
    ({"limits": {"a": 8}}, "$.limits.a", "8 is too large; use a value <= 7"),
    ({"limits": {"A": 1}}, "$.limits", "'A' is not in the expected form"),
    ({"parts": [{}]}, "$.parts[0].name", "missing; this key is required"),
    ({"parts": [{"name": "X"}]}, "$.parts[0].name", "'X' is not lowercase letters"),
    ({"parts": [{"name": "x", "count": 0}]}, "$.parts[0].count", "0 is too small"),
    ({"parts": [{"name": "x", "count": True}]}, "$.parts[0].count", "expected an integer"),
    ({"inner": {"flag": "yes"}}, "$.inner.flag", "expected true or false, got a string 'yes'"),
    ({"inner": {"flag": None}}, "$.inner.flag", "expected true or false, got null"),
    ({1: "x"}, "$", "keys must be strings"),
]


@pytest.mark.parametrize("doc,path,message", STRICT_ERRORS, ids=lambda v: str(v)[:30])
def test_strict_decoding_names_path_and_fix(doc: Any, path: str, message: str) -> None:
    with pytest.raises(DecodeError) as err:
        fields.decode(Sample, doc, strict=True)
    assert err.value.path == path
    assert err.value.message.startswith(message), err.value.message


# --- every profile class: a documented default means what leaving the key out means -----------


def _classes(cls: type[Any], seen: dict[type[Any], None]) -> dict[type[Any], None]:
    """``cls`` and every dataclass its fields hold, in first-seen order."""
    if cls not in seen:
        seen[cls] = None
        for hint in typing.get_type_hints(cls).values():
            stack = [hint]
            while stack:
                tp = stack.pop()
                if isinstance(tp, type) and dataclasses.is_dataclass(tp):
                    _classes(tp, seen)
                stack.extend(typing.get_args(tp))
    return seen


PROFILE_CLASSES = list(_classes(model.Profile, {})) + [model.Mps]


def _minimal(cls: type[Any]) -> dict[str, Any]:
    """The smallest valid document of ``cls``: each required key from its first example."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            continue
        spec = fields.spec_of(cls, f.name)
        if spec.examples:
            out[fields.camel(f.name)] = spec.examples[0]
        else:  # a required list of objects
            (item_tp,) = typing.get_args(typing.get_type_hints(cls)[f.name])[:1]
            out[fields.camel(f.name)] = [_minimal(item_tp)]
    return out


@pytest.mark.parametrize("cls", PROFILE_CLASSES, ids=lambda c: c.__name__)
def test_documented_defaults_decode_to_the_model_default(cls: type[Any]) -> None:
    schema, _ = schema_of(cls)
    minimal = _minimal(cls)
    plain = fields.decode(cls, minimal, strict=True)
    documented_defaults = {
        name: prop["default"] for name, prop in schema["properties"].items() if "default" in prop
    }
    for name, default in documented_defaults.items():
        assert fields.decode(cls, {**minimal, name: default}, strict=True) == plain, name


def test_the_profile_schema_documents_a_default_for_every_non_derived_field() -> None:
    """A field without a documented default must be required or derived (None)."""
    schema = build_schema()
    assert schema["properties"]["driver"]["properties"]["version"]["default"] == (
        model.Driver().version
    )
    for cls in PROFILE_CLASSES:
        props, _ = schema_of(cls)
        for f in dataclasses.fields(cls):
            prop = props["properties"][fields.spec_of(cls, f.name).name or fields.camel(f.name)]
            has_default = (
                f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            )
            if has_default and "default" not in prop:
                value = f.default if f.default is not dataclasses.MISSING else f.default_factory()
                assert value is None, f"{cls.__name__}.{f.name} hides its default {value!r}"


def test_generated_files_are_written_then_checked(tmp_path: Path) -> None:
    target = tmp_path / "out" / "schema.json"
    write_or_check({target: "new\n"}, "make it", argv=[])
    assert target.read_text(encoding="utf-8") == "new\n"
    write_or_check({target: "new\n"}, "make it", argv=["--check"])  # current: no exit
    target.write_text("old\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"schema.json is stale; run: make it"):
        write_or_check({target: "new\n"}, "make it", argv=["--check"])
    assert target.read_text(encoding="utf-8") == "old\n"  # --check writes nothing


@pytest.mark.parametrize(
    ("pattern", "python"),
    [
        (r"^[a-z]+$", r"^[a-z]+\Z"),
        (r"^a$|^b$", r"^a\Z|^b\Z"),
        (r"^[$]x\$$", r"^[$]x\$\Z"),  # `$` in a class or escaped is a dollar sign
        (r"^/", r"^/"),
    ],
)
def test_patterns_end_where_json_schema_says(pattern: str, python: str) -> None:
    assert fields.python_pattern(pattern) == python


def test_strict_decoding_matches_a_pattern_in_full() -> None:
    # Python's `$` also matches before a final newline (issue #11, item 9)
    assert fields.decode(Part, {"name": "abc"}, strict=True).name == "abc"
    with pytest.raises(DecodeError, match="is not lowercase letters"):
        fields.decode(Part, {"name": "abc\n"}, strict=True)


Upper = Annotated[str, item(pattern=r"^[A-Z]+$", hint="capitals")]
Keyed = Annotated[
    tuple[tuple[str, Upper], ...], SORTED_MAP, item(keys=Spec(pattern=r"^[a-z]+$", hint="lower"))
]


@dataclass(frozen=True)
class WithKeyedMap:
    table: Keyed = key("Table", "A map whose type carries its key rules.", factory=tuple)


def test_a_map_type_carries_its_key_and_value_constraints() -> None:
    schema = fields.object_schema(WithKeyedMap, {})["properties"]["table"]
    assert schema["propertyNames"] == {
        "pattern": "^[a-z]+$",
        "patternErrorMessage": "Expected lower.",
    }
    assert schema["additionalProperties"]["patternErrorMessage"] == "Expected capitals."
    assert fields.hint_of(fields.pattern_message("capitals")) == "capitals"
    assert fields.decode(WithKeyedMap, {"table": {"b": "X", "a": "Y"}}, strict=True).table == (
        ("a", "Y"),
        ("b", "X"),
    )
    for bad in ({"B": "X"}, {"b": "x"}, {"b\n": "X"}):
        with pytest.raises(DecodeError):
            fields.decode(WithKeyedMap, {"table": bad}, strict=True)
