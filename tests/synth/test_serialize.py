"""YAML rendering: stable bytes, readable blocks, and never a change in meaning."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.synth.serialize import FAST_DUMPER, PURE_DUMPER, ambiguous, dump_yaml
from tests.tooling import require_tool

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


# --- strings no YAML reader may take for something else (issue #11, item 10) ----------------

#: Strings YAML 1.1 or 1.2 readers (PyYAML, Go's yaml.v2/v3 in kubectl kustomize and Argo CD)
#: resolve to numbers, booleans or null when written plain.
MISREAD = [
    "0859", "089", "0o17", "0b101", "0x1F", "5E10", "1e3", "-1e-3", ".5", "+1", "1_000",
    "190:20:30", "1.", ".inf", "-.Inf", ".NaN", "on", "NO", "Off", "y", "Y", "n", "yes",
    "True", "NULL", "~", "", "2024-01-01", "1.30", "007",
]  # fmt: skip
#: Strings that stay plain: quoting is for the ambiguous only.
PLAIN = ["100m", "v1.2", "nvidia.com/gpu", "580.105.08", "1g.10gb", "x1", "on-demand", "yes-no"]


def configmap(values: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "scalars", "labels": {f"l{i}": v for i, v in enumerate(values)}},
        "data": {**{f"k{i}": v for i, v in enumerate(values)}, **{v: "key" for v in values}},
    }


def kustomized(tmp_path: Path, files: dict[str, bytes]) -> list[dict[str, Any]]:
    kubectl = require_tool("kubectl")
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    (tmp_path / "kustomization.yaml").write_bytes(
        dump_yaml({"resources": [n for n in files if n != "kustomization.yaml"]})
    )
    done = subprocess.run(
        [kubectl, "kustomize", str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


@pytest.mark.parametrize("dumper", [PURE_DUMPER, FAST_DUMPER], ids=["pure", "libyaml"])
def test_no_yaml_reader_takes_a_string_for_something_else(
    tmp_path: Path, dumper: type[Any]
) -> None:
    cm = configmap(MISREAD + PLAIN)
    text = dump_yaml(cm, dumper)
    assert yaml.safe_load(text) == cm  # PyYAML, YAML 1.1
    assert kustomized(tmp_path, {"cm.yaml": text}) == [cm]  # Go's yaml.v3, YAML 1.2
    for value in MISREAD:
        assert ambiguous(value), value
    for value in PLAIN:
        assert not ambiguous(value) and f" {value}\n".encode() in text, value


@pytest.mark.parametrize(
    "cluster", sorted(p.name for p in (REPO / "dist" / "clusters").iterdir() if p.is_dir())
)
def test_every_synthesized_scalar_reads_back_the_same_through_kustomize(cluster: str) -> None:
    kubectl = require_tool("kubectl")
    folder = REPO / "dist" / "clusters" / cluster
    done = subprocess.run(
        [kubectl, "kustomize", str(folder)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    built = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(done.stdout) if d}
    listed = yaml.safe_load((folder / "kustomization.yaml").read_text())["resources"]
    for rel in listed:
        written = yaml.safe_load((folder / rel).read_text())
        # every value, strings included, as PyYAML reads the file and as kustomize re-emits it
        assert built[(written["kind"], written["metadata"]["name"])] == written, rel
