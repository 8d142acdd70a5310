"""The direct YAML writer writes the reference's bytes: the committed files, and any document.

:mod:`gpustack.synth.yaml_text` replaces PyYAML for what gpustack writes, and a file's bytes
must not depend on which of the two wrote it. The reference is PyYAML's pure emitter with
gpustack's representers (:data:`gpustack.synth.serialize.PURE_DUMPER`). Where the writer
declines a document (``None``: a float, a long or empty key...), PyYAML writes it; the
properties below also check that it declines only those.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpustack.synth.serialize import PURE_DUMPER, dump_yaml
from gpustack.synth.yaml_text import emit

DIST = Path(__file__).resolve().parents[2] / "dist"


def reference(doc: dict[str, Any]) -> str:
    return dump_yaml(doc, PURE_DUMPER).decode("utf-8")


def test_every_committed_file_is_written_byte_for_byte() -> None:
    paths = sorted(DIST.rglob("*.yaml"))
    assert len(paths) > 100
    for path in paths:
        raw = path.read_text(encoding="utf-8")
        body = raw
        while body.startswith("#"):  # the generated-file header
            body = body.partition("\n")[2]
        docs = [d for d in yaml.safe_load_all(body) if d is not None]
        texts = [emit(d) for d in docs]
        assert None not in texts, path
        assert "---\n".join(t or "" for t in texts) == body.removeprefix("---\n"), path


#: Edges of the emitter's rules, each once written wrong by a first draft or easy to get wrong.
EDGES: list[Any] = [
    "", "yes", "0123", "=", "<<", "~", "null", "1.5", "2024-01-01", ".inf",
    " leading", "trailing ", "a: b", "a:", "a #b", "a#b", "- x", "-x", "-", "? x", "?x", ":x",
    "---x", "...", "#x", "'q'", '"q"', "it's", "\t", "a\tb", "\x07", "\x1b", "\x7f",
    "\xa0", "é", "\ufeff", "\ue000", "\U0001f600", "\r", "a\rb",
    "x" * 300, "multi\nline\n", "no final\nnewline", "\n", "\n\n", "a\n\n", " lead\nx\n",
    "\nlead\n", "trailing  \nspaces\n", "x\n ", "x\n y\n", "é\nü\n", "tab\tin\nblock\n",
    "a\n\nb\n", "a\n\n\nb", True, False, 0, -7, 10**30, None, [], {}, [[]], [{}], [[1, [2]]],
    [{"a": "x\n\n"}], {"k": "v\n\n"}, ["x\n\n", "y"],
]  # fmt: skip


@pytest.mark.parametrize("value", EDGES, ids=repr)
def test_edge_values_are_written_as_the_reference_writes_them(value: Any) -> None:
    for doc in ({"v": value}, {"v": value, "after": 1}, {"list": [value], "k": {"v": value}}):
        assert emit(doc) == reference(doc)


#: The edges that can be simple keys: not empty, on one line, shorter than 123 characters.
KEY_EDGES = [e for e in EDGES if isinstance(e, str) and e and "\n" not in e and len(e) < 123]


@pytest.mark.parametrize("key", [*KEY_EDGES, "k" * 122], ids=repr)
def test_edge_keys_are_written_as_the_reference_writes_them(key: str) -> None:
    doc = {key: "v", "m": {key: [key]}}
    assert emit(doc) == reference(doc)


@pytest.mark.parametrize(
    "doc",
    [
        {"": 1},
        {"k" * 123: 1},
        {"a\nb": 1},
        {"a\u2028b": 1},
        {"f": 1.5},
        {1: "int key"},
        {"v": "\x85"},
        {"v": ["a\u2029b"]},
        {"v": "x\n\u2028\n"},
    ],  # fmt: skip
    ids=repr,
)
def test_documents_outside_the_subset_are_declined(doc: dict[Any, Any]) -> None:
    assert emit(doc) is None
    assert dump_yaml(doc) == reference(doc).encode()  # PyYAML writes them instead


#: Any text but lone surrogates (not UTF-8) and the line separators the writer declines.
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x85\u2028\u2029"),
    max_size=80,
)
KEYS = TEXT.filter(lambda k: k != "" and "\n" not in k)
DOCS = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=20,
)
ANY_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
ANY = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(ANY_TEXT, inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=600, deadline=None)
@given(st.dictionaries(KEYS, DOCS, max_size=5))
@example({"a": "x\n\n"})
@example({"a": ["x\n\n"], "b": {}})
def test_documents_of_the_subset_are_written_as_the_reference_writes_them(
    doc: dict[str, Any],
) -> None:
    assert emit(doc) == reference(doc)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(ANY_TEXT, ANY, max_size=4))
def test_any_document_is_written_as_the_reference_writes_it_or_declined(
    doc: dict[str, Any],
) -> None:
    assert emit(doc) in (reference(doc), None)
