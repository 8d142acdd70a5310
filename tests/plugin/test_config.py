"""The typed config: parsing, writing, the generated JSON schema, and real case files.

The schema and the parser are both derived from the declarations in
``gpustack/plugin/config/model.py``; these tests check what a declaration cannot: that the
generated file is current, that the schema is well formed, and that parser and schema treat the
case files alike (the cross-field rules are the parser's alone: ``# schema: accepts``).
"""

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
    GpustackExtensions,
    PluginConfig,
    SimulatedGpu,
    load_config,
    simulated_uuid,
)
from gpustack.plugin.schema import render

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


def test_schema_file_is_generated_from_the_model() -> None:
    """The committed schema is what ``python -m gpustack.plugin.schema`` writes."""
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render(), (
        "stale schema; run: python -m gpustack.plugin.schema"
    )


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
    # The gpustack block is written only when the file has one (NVIDIA's plugin has none).
    present = ["gpustack"] if "gpustack" in data else []
    assert list(doc) == ["version", "flags", "sharing", *present]


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_case(path: Path) -> None:
    headers = _headers(path)
    data = _load(path)
    with pytest.raises(ConfigError) as caught:
        load_config(path)  # what gpustack's plugin does with the file
    assert caught.value.path == headers["error"]
    assert caught.value.source == str(path)
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
    uuids = [g.uuid for g in a.extensions.simulated.gpus]
    assert uuids == [g.uuid for g in b.extensions.simulated.gpus]
    assert len(set(uuids)) == 2
    assert uuids[0] == simulated_uuid(0, SimulatedGpu(index=0).product)
    assert re.fullmatch(r"GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", uuids[0])


def test_config_is_frozen() -> None:
    config = PluginConfig()
    with pytest.raises(AttributeError):
        config.version = "v2"  # type: ignore[misc]


NVIDIA_MPS: dict[str, Any] = {
    "version": "v1",
    "flags": {"migStrategy": "none", "mpsRoot": "/run/nvidia/mps"},
    "sharing": {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}},
}


def test_nvidia_mps_file_parses_and_round_trips() -> None:
    config = PluginConfig.from_dict(NVIDIA_MPS)
    mps = config.sharing.mps
    assert mps is not None and mps.replicas_for("nvidia.com/gpu") == 4
    assert config.flags.mps_root == "/run/nvidia/mps"
    assert config.gpustack is None
    doc = config.to_dict()
    VALIDATOR.validate(doc)
    assert list(doc) == ["version", "flags", "sharing"]
    assert list(doc["flags"]) == [
        "migStrategy",
        "failOnInitError",
        "nvidiaDriverRoot",
        "mpsRoot",
        "plugin",
    ]
    assert doc["sharing"] == {
        "mps": {
            "renameByDefault": False,
            "failRequestsGreaterThanOne": False,
            "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
        }
    }
    assert PluginConfig.from_dict(doc) == config


def test_mps_blocks_get_the_time_slicing_checks() -> None:
    twice = {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}] * 2}
    with pytest.raises(ConfigError) as caught:
        PluginConfig.from_dict({"sharing": {"mps": twice}})
    assert caught.value.path == "$.sharing.mps.resources[1]"


def test_gpustacks_plugin_refuses_mps_and_names_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "mps.yaml"
    path.write_text(yaml.safe_dump(NVIDIA_MPS))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: $.sharing.mps: gpustack's device plugin does not ")
    assert "remove sharing.mps" in message and "devicePlugin.implementation: nvidia" in message


def test_an_absent_gpustack_block_means_its_defaults() -> None:
    config = PluginConfig.from_dict({"flags": {"migStrategy": "single"}})
    assert config.gpustack is None
    assert config.extensions == GpustackExtensions()
    assert config.extensions.resource_name == "nvidia.com/gpu"
    assert "gpustack" not in config.to_dict()
    assert PluginConfig().to_dict() == {
        "version": "v1",
        "flags": PluginConfig().to_dict()["flags"],
        "sharing": {},
    }


def test_null_is_accepted_only_where_the_schema_allows_it() -> None:
    gpu = PluginConfig.from_dict(
        {"gpustack": {"simulated": {"gpus": [{"index": 0, "numaNode": None}]}}}
    )
    assert gpu.extensions.simulated.gpus[0].numa_node is None
    assert gpu.to_dict()["gpustack"]["simulated"]["gpus"][0]["numaNode"] is None
    for doc, where in (
        ({"flags": {"nvidiaDevRoot": None}}, "$.flags.nvidiaDevRoot"),
        ({"sharing": {"timeSlicing": None}}, "$.sharing.timeSlicing"),
        ({"gpustack": None}, "$.gpustack"),
    ):
        assert list(VALIDATOR.iter_errors(doc)), doc
        with pytest.raises(ConfigError) as caught:
            PluginConfig.from_dict(doc)
        assert caught.value.path == where
        assert "got null" in caught.value.message


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"version": "v2"}, "'v2' is not supported; set it to v1"),
        (
            {"flags": {"plugin": {"deviceListStrategy": []}}},
            "empty list; name at least one strategy, e.g. [envvar]",
        ),
        (
            {"sharing": {"timeSlicing": {}}},
            "missing; list the resources to share, e.g. [{name: nvidia.com/gpu, replicas: 2}]",
        ),
        (
            {"sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu"}]}}},
            "missing; every shared resource needs name and replicas",
        ),
        (
            {"gpustack": {"simulated": {"gpus": [{"product": "X"}]}}},
            "missing; give every simulated GPU its index (0, 1, …)",
        ),
        (
            {"flags": {"nvidiaDriverRoot": "run"}},
            "'run' is not an absolute path; start it with '/'",
        ),
        (
            {"gpustack": {"simulated": {"gpus": [{"index": 0, "mig": {"devices": {"x": 1}}}]}}},
            "'x' is not a MIG profile name like '1g.10gb'",
        ),
    ],
)
def test_error_messages_say_how_to_fix(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        PluginConfig.from_dict(doc)
    assert caught.value.message == message
