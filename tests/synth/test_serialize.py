"""YAML rendering: stable bytes, readable blocks, and never a change in meaning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.synth.serialize import FAST_DUMPER, PURE_DUMPER, dump_yaml

REPO = Path(__file__).resolve().parents[2]
needs_libyaml = pytest.mark.skipif(
    FAST_DUMPER is PURE_DUMPER, reason="PyYAML was built without libyaml: only one emitter"
)

TRICKY_VALUES: list[Any] = [
    "yes",
    "0123",
    "1.10",
    "null",
    "~",
    "",
    " leading space",
    "trailing space ",
    "a: b",
    "- item",
    "#comment",
    "multi\nline\n",
    "no final newline\nsecond",
    "trailing spaces  \non a line\n",
    "\ttab\n",
    "ünïcode ✓",
    "x" * 500,
    True,
    0,
    -1.5,
    None,
    [],
    {},
    ["a", {"b": "c"}],
]


@pytest.mark.parametrize("value", TRICKY_VALUES, ids=repr)
def test_round_trip_keeps_every_value(value: Any) -> None:
    doc = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"v": value}}
    assert yaml.safe_load(dump_yaml(doc)) == doc


def test_key_order_is_kept_not_sorted() -> None:
    doc = {"kind": "X", "apiVersion": "v1", "metadata": {"name": "n"}, "b": 1, "a": 2}
    text = dump_yaml(doc).decode()
    assert [line.split(":")[0] for line in text.splitlines() if not line.startswith(" ")] == [
        "kind",
        "apiVersion",
        "metadata",
        "b",
        "a",
    ]


def test_multiline_strings_are_literal_blocks() -> None:
    text = dump_yaml({"data": {"config.yaml": "version: v1\nflags:\n  migStrategy: none\n"}})
    assert text == (
        b"data:\n  config.yaml: |\n    version: v1\n    flags:\n      migStrategy: none\n"
    )


def test_long_lines_are_not_folded() -> None:
    long = " ".join(["word"] * 100)
    text = dump_yaml({"command": long})
    assert text == f"command: {long}\n".encode()


def test_shared_objects_are_written_out_not_aliased() -> None:
    shared = {"key": "nvidia.com/gpu", "operator": "Exists"}
    text = dump_yaml({"a": [shared], "b": [shared]})
    assert b"&" not in text and b"*" not in text
    assert text.count(b"nvidia.com/gpu") == 2


def test_document_form_lf_final_newline_no_marker() -> None:
    text = dump_yaml({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}})
    assert text == b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n"


def test_unrepresentable_value_raises_yaml_error() -> None:
    with pytest.raises(yaml.YAMLError):
        dump_yaml({"v": object()})


def test_tuples_are_written_as_lists() -> None:
    assert dump_yaml({"args": ("a", "b")}) == b"args:\n- a\n- b\n"


@pytest.mark.parametrize(
    "value", [{1, 2}, frozenset({1}), b"raw", __import__("datetime").date(2026, 1, 1)], ids=repr
)
def test_non_json_values_are_refused(value: Any) -> None:
    with pytest.raises(yaml.YAMLError, match="not JSON data"):
        dump_yaml({"v": value})


@needs_libyaml
@pytest.mark.parametrize("value", TRICKY_VALUES, ids=repr)
def test_libyaml_and_pure_emitters_write_the_same_bytes(value: Any) -> None:
    doc = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"v": value, "list": [value]}}
    assert dump_yaml(doc, FAST_DUMPER) == dump_yaml(doc, PURE_DUMPER)


@needs_libyaml
def test_libyaml_and_pure_emitters_agree_on_the_committed_dist() -> None:
    paths = sorted((REPO / "dist" / "clusters").rglob("*.yaml"))
    assert paths
    differing = [
        p
        for p in paths
        if dump_yaml(doc := yaml.safe_load(p.read_bytes()), FAST_DUMPER)
        != dump_yaml(doc, PURE_DUMPER)
    ]
    assert differing == []
