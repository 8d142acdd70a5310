"""The typed config parser, the JSON schema, and their agreement on real case files."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from gpustack.plugin.config import (
    ConfigError,
    PluginConfig,
    SimulatedGpu,
    load_config,
    simulated_uuid,
)

from .conftest import REPO

SCHEMA_PATH = REPO / "schemas" / "device-plugin-config.schema.json"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_PATH.read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
CASES = Path(__file__).parent / "configs"
VALID = sorted((CASES / "valid").glob("*.yaml"))
INVALID = sorted((CASES / "invalid").glob("*.yaml"))


def _headers(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text().splitlines():
        match = re.match(r"#\s*(\w+):\s*(.*)$", line)
        if match:
            found[match.group(1)] = match.group(2).strip()
    return found


def _load(path: Path) -> Any:
    data = yaml.safe_load(path.read_text())
    return {} if data is None else data


def test_case_files_exist() -> None:
    assert len(VALID) >= 8 and len(INVALID) >= 30


def test_schema_is_valid_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["$id"] == "https://gpustack.dev/schemas/device-plugin-config.schema.json"


def _subschemas(node: Any, where: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        yield where, node
        for key, value in node.items():
            if key in ("default", "examples", "const", "enum"):
                continue
            yield from _subschemas(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _subschemas(value, f"{where}/{i}")


def _properties() -> Iterator[tuple[str, dict[str, Any]]]:
    for where, node in _subschemas(SCHEMA):
        if isinstance(node.get("properties"), dict):
            for name, sub in node["properties"].items():
                yield f"{where}/properties/{name}", sub


def test_every_object_is_closed() -> None:
    for where, node in _subschemas(SCHEMA):
        if "properties" in node:
            assert node.get("additionalProperties") is False, where


def test_every_property_has_title_and_description() -> None:
    props = list(_properties())
    assert len(props) >= 39
    for where, sub in props:
        assert sub.get("title") and sub.get("description"), where


def test_defaults_and_examples_validate_against_their_own_subschema() -> None:
    checked = 0
    for where, node in _subschemas(SCHEMA):
        values = ([node["default"]] if "default" in node else []) + node.get("examples", [])
        for value in values:
            errors = list(jsonschema.Draft202012Validator(node).iter_errors(value))
            assert not errors, f"{where}: {value!r}: {errors[0].message}"
            checked += 1
    assert checked > 25


def _representative() -> dict[str, Any]:
    """Defaults of every dataclass, including list items, in file form."""
    return PluginConfig.from_dict(
        {
            "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}},
            "gpustack": {"simulated": {"gpus": [{"index": 0}]}},
        }
    ).to_dict()


def _lookup(doc: Any, keys: list[str | int]) -> Any:
    for key in keys:
        if isinstance(key, int):
            if not isinstance(doc, list) or len(doc) <= key:
                return _MISSING
        elif not isinstance(doc, dict) or key not in doc:
            return _MISSING
        doc = doc[key]
    return doc


_MISSING = object()


def _compare_defaults(
    schema: dict[str, Any], keys: list[str | int], docs: list[dict[str, Any]], seen: list[str]
) -> None:
    """Walk the schema; a default must equal the first model document that has the field."""
    where = "$" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in keys)
    values = [v for v in (_lookup(d, keys) for d in docs) if v is not _MISSING]
    if "default" in schema:
        assert values, f"{where}: the schema defaults a field the model omits"
        assert schema["default"] == values[0], f"{where}: {schema['default']!r} != {values[0]!r}"
        seen.append(where)
    for name, sub in schema.get("properties", {}).items():
        _compare_defaults(sub, [*keys, name], docs, seen)
    if isinstance(schema.get("items"), dict):
        _compare_defaults(schema["items"], [*keys, 0], docs, seen)


def test_schema_defaults_equal_dataclass_defaults() -> None:
    seen: list[str] = []
    # PluginConfig() first; list items and optional sections from a representative document.
    _compare_defaults(SCHEMA, [], [PluginConfig().to_dict(), _representative()], seen)
    gpu = _representative()["gpustack"]["simulated"]["gpus"][0]
    assert (
        gpu["product"] == SimulatedGpu().product and gpu["memoryMiB"] == SimulatedGpu().memory_mib
    )
    assert len(seen) >= 20


def test_default_config_round_trips_and_validates() -> None:
    doc = PluginConfig().to_dict()
    VALIDATOR.validate(doc)
    assert PluginConfig.from_dict(doc) == PluginConfig()


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_case(path: Path) -> None:
    data = _load(path)
    errors = [e.message for e in VALIDATOR.iter_errors(data)]
    assert not errors, errors
    config = load_config(path)
    doc = config.to_dict()
    VALIDATOR.validate(doc)
    assert PluginConfig.from_dict(doc) == config
    assert json.loads(json.dumps(doc)) == doc  # plain JSON types only
    assert list(doc) == ["version", "flags", "sharing", "gpustack"]


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_case(path: Path) -> None:
    headers = _headers(path)
    data = _load(path)
    with pytest.raises(ConfigError) as caught:
        PluginConfig.from_dict(data)
    assert caught.value.path == headers["error"]
    assert "\n" not in str(caught.value)
    schema_errors = list(VALIDATOR.iter_errors(data))
    if headers.get("schema") == "accepts":
        assert not schema_errors, "a semantic-only case must pass the schema"
    else:
        assert schema_errors, "the schema must reject what the parser rejects"


def test_load_config_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("flags:\n  migStrategy: [none\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert re.search(rf"{re.escape(str(path))}:\d+:\d+", str(caught.value))


def test_load_config_names_file_and_path(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("flags:\n  migStrategy: mixd\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: $.flags.migStrategy: ")
    assert "none, single, mixed" in message


def test_load_config_rejects_non_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("gpustack: {resourceName: nvidia.com/gpu}  # caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    expected = "$: not UTF-8 text (bad byte at offset 47); save the file as UTF-8"
    assert str(caught.value) == f"{path}: {expected}"


def test_load_config_rejects_unsafe_yaml(tmp_path: Path) -> None:
    path = tmp_path / "evil.yaml"
    path.write_text("version: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(ConfigError):
        load_config(path)


def test_unknown_key_suggests_the_right_one() -> None:
    with pytest.raises(ConfigError) as caught:
        PluginConfig.from_dict({"flags": {"migStratgy": "none"}})
    assert "did you mean 'migStrategy'" in str(caught.value)


def test_device_list_strategy_string_is_normalised_to_a_list() -> None:
    config = PluginConfig.from_dict({"flags": {"plugin": {"deviceListStrategy": "volume-mounts"}}})
    assert config.flags.plugin.device_list_strategy == ("volume-mounts",)
    assert config.to_dict()["flags"]["plugin"]["deviceListStrategy"] == ["volume-mounts"]


def test_dev_root_defaults_to_driver_root() -> None:
    config = PluginConfig.from_dict({"flags": {"nvidiaDriverRoot": "/run/nvidia/driver"}})
    assert config.flags.dev_root == "/run/nvidia/driver"
    assert "nvidiaDevRoot" not in config.to_dict()["flags"]


def test_simulated_uuid_is_deterministic_and_distinct() -> None:
    a = PluginConfig.from_dict({"gpustack": {"simulated": {"gpus": [{"index": 0}, {"index": 1}]}}})
    b = PluginConfig.from_dict({"gpustack": {"simulated": {"gpus": [{"index": 0}, {"index": 1}]}}})
    uuids = [g.uuid for g in a.gpustack.simulated.gpus]
    assert uuids == [g.uuid for g in b.gpustack.simulated.gpus]
    assert len(set(uuids)) == 2
    assert uuids[0] == simulated_uuid(0, SimulatedGpu().product)
    assert re.fullmatch(r"GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", uuids[0])


def test_config_is_frozen() -> None:
    config = PluginConfig()
    with pytest.raises(AttributeError):
        config.version = "v2"  # type: ignore[misc]
