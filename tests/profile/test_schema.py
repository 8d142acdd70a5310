"""The schema file: well formed, current, documented, and in agreement with model and catalog."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from gpustack.profile import catalog, model
from gpustack.profile.reference import render_reference
from gpustack.profile.schema import (
    BASE_SCHEMA_ID,
    SCHEMA_ID,
    render,
    render_base,
    render_reference_doc,
    validator,
)

REPO = Path(__file__).parents[2]
SCHEMA_PATH = REPO / "schemas" / "profile.schema.json"
BASE_SCHEMA_PATH = REPO / "schemas" / "profile-base.schema.json"
REFERENCE_PATH = REPO / "schemas" / "profile.md"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))

SubSchema = tuple[str, Mapping[str, Any]]


def walk(schema: Mapping[str, Any], where: str = "#") -> Iterator[SubSchema]:
    """Every subschema with a JSON-pointer-like name, depth first."""
    yield where, schema
    for name, sub in schema.get("properties", {}).items():
        yield from walk(sub, f"{where}/properties/{name}")
    for name, sub in schema.get("$defs", {}).items():
        yield from walk(sub, f"{where}/$defs/{name}")
    for key in ("items", "additionalProperties", "propertyNames"):
        sub = schema.get(key)
        if isinstance(sub, Mapping):
            yield from walk(sub, f"{where}/{key}")
    for i, sub in enumerate(schema.get("anyOf", [])):
        yield from walk(sub, f"{where}/anyOf/{i}")


def properties() -> Iterator[SubSchema]:
    for where, sub in walk(SCHEMA):
        for name, prop in sub.get("properties", {}).items():
            yield f"{where}/properties/{name}", prop


def test_schema_is_valid_against_its_metaschema() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["$id"] == SCHEMA_ID == "https://gpustack.dev/schemas/profile.schema.json"


def test_field_reference_is_generated_from_the_schema() -> None:
    assert REFERENCE_PATH.read_text(encoding="utf-8") == render_reference_doc(), (
        "run: .venv/bin/python -m gpustack.profile.schema"
    )


def _property_paths(node: Mapping[str, Any], path: str = "") -> Iterator[str]:
    if "$ref" in node:
        node = SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[1]]
    for name, sub in node.get("properties", {}).items():
        here = f"{path}.{name}" if path else name
        yield here
        yield from _property_paths(sub, here)
        if isinstance(sub.get("items"), Mapping):
            yield from _property_paths(sub["items"], f"{here}[]")


def test_field_reference_documents_every_field() -> None:
    text = render_reference(SCHEMA)
    sections = [p for p in _property_paths(SCHEMA) if "." not in p]
    fields = [p for p in _property_paths(SCHEMA) if "." in p]
    assert len(fields) > 100
    for path in fields:
        assert f"| `{path}` |" in text, path
    for section in sections:
        assert f"## `{section}`" in text, section
    # a table cell never breaks its row, and <name> never reads as an HTML tag
    for line in text.splitlines():
        if line.startswith("| `"):
            assert line.count(" | ") == 3, line  # four cells; pipes inside are escaped
    assert "mig-&lt;profile&gt;" in text and "<profile>" not in text


def test_schema_file_is_generated_from_code() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render(), (
        "run: .venv/bin/python -m gpustack.profile.schema"
    )
    assert validator().schema == SCHEMA
    assert BASE_SCHEMA_PATH.read_text(encoding="utf-8") == render_base(), (
        "run: .venv/bin/python -m gpustack.profile.schema"
    )


def test_base_schema_is_the_profile_schema_with_nothing_required() -> None:
    base = json.loads(BASE_SCHEMA_PATH.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(base)
    assert base["$id"] == BASE_SCHEMA_ID != SCHEMA_ID
    assert "required" not in base
    changed = {"$id", "title", "description", "required"}
    assert {k: v for k, v in base.items() if k not in changed} == {
        k: v for k, v in SCHEMA.items() if k not in changed
    }
    # what an editor checks a base against: a base without metadata is fine, a typo is not
    fleet = {"driver": {"version": "580.105.08"}, "gpus": {"product": "L4"}}
    assert list(Draft202012Validator(base).iter_errors(fleet)) == []
    assert list(Draft202012Validator(SCHEMA).iter_errors(fleet)) != []
    assert list(Draft202012Validator(base).iter_errors({"driver": {"verison": "1"}})) != []


@pytest.mark.parametrize("where,prop", list(properties()), ids=lambda v: str(v)[:80])
def test_every_property_is_documented(where: str, prop: Mapping[str, Any]) -> None:
    assert prop.get("title"), where
    assert prop.get("description"), where


def test_every_object_is_closed_or_a_typed_map() -> None:
    objects = [(w, s) for w, s in walk(SCHEMA) if s.get("type") == "object"]
    assert len(objects) > 20
    for where, sub in objects:
        extra = sub.get("additionalProperties")
        if "properties" in sub:
            assert extra is False, where
        else:  # a map (labels, node selector, MIG layout): values still typed
            assert isinstance(extra, Mapping) and extra, where


def test_editor_friendly_subset() -> None:
    text = SCHEMA_PATH.read_text(encoding="utf-8")
    for keyword in ("unevaluatedProperties", "oneOf", "dependentRequired", "prefixItems"):
        assert f'"{keyword}"' not in text


def _annotated() -> Iterator[tuple[str, str, Mapping[str, Any], Any]]:
    for where, sub in walk(SCHEMA):
        if "default" in sub:
            yield where, "default", sub, sub["default"]
        for i, example in enumerate(sub.get("examples", [])):
            yield where, f"examples[{i}]", sub, example


@pytest.mark.parametrize("where,what,sub,value", list(_annotated()), ids=lambda v: str(v)[:60])
def test_defaults_and_examples_are_valid(
    where: str, what: str, sub: Mapping[str, Any], value: Any
) -> None:
    errors = [e.message for e in validator().evolve(schema=sub).iter_errors(value)]
    assert errors == [], f"{where} {what}"


def test_api_version_and_kind_are_single_value_enums() -> None:
    props = SCHEMA["properties"]
    assert props["apiVersion"]["enum"] == [model.API_VERSION] == ["gpustack.dev/v1alpha1"]
    assert props["kind"]["enum"] == [model.KIND] == ["Profile"]
    assert SCHEMA["required"] == ["apiVersion", "kind", "metadata"]


def test_gpu_enums_equal_the_catalog() -> None:
    gpus = SCHEMA["properties"]["gpus"]["properties"]
    assert set(gpus["product"]["enum"]) == set(catalog.PRODUCTS)
    assert set(gpus["architecture"]["enum"]) == set(catalog.ARCHITECTURES)
    for product in catalog.PRODUCTS.values():
        assert product.architecture in catalog.ARCHITECTURES
        pattern = gpus["mig"]["propertyNames"]["pattern"]
        assert all(re.match(pattern, name) for name in product.mig)


def test_gitops_section_is_closed_and_documented() -> None:
    gitops = SCHEMA["properties"]["gitops"]
    assert set(gitops["properties"]) == {"repoURL", "revision", "path", "argocd", "flux"}
    assert gitops["additionalProperties"] is False


#: Values some pattern without examples accepts (the test takes the first that fits).
SAMPLES = ["a", "v1.2.3", "nvidia.com/gpu", "580.105.08", "sha256:" + "a" * 64, "/x", "1.2",
           "dcgm.service"]  # fmt: skip


def test_every_pattern_is_matched_in_full() -> None:
    # Python's `$` matches before a final newline; the schema means ECMA-262's `$` (the end), so
    # "lab\n" must fail every pattern that "lab" passes (issue #11, item 9)
    checked = 0
    for where, sub in walk(SCHEMA):
        pattern = sub.get("pattern")
        if not pattern or not str(pattern).endswith("$"):
            continue
        documented = [*sub.get("examples", []), sub.get("default")]
        candidates = [e for e in documented if isinstance(e, str)] + SAMPLES
        check = validator().evolve(schema=sub)
        good = [e for e in candidates if not list(check.iter_errors(e))]
        assert good, f"{where}: add a value its pattern accepts to SAMPLES"
        for value in (good[0] + "\n", good[0] + "\n\n"):
            assert list(validator().evolve(schema=sub).iter_errors(value)), (where, value)
        checked += 1
    assert checked >= 15
