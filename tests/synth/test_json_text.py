"""The index's JSON writer writes what ``json.dump(indent=2, sort_keys=True,
ensure_ascii=False)`` writes, for the index's shapes and for any JSON value."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpustack.synth.json_text import chunks, text


def reference(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


#: Any text but lone surrogates (not UTF-8, and the index is written as UTF-8).
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=24,
)


@settings(max_examples=500, deadline=None)
@given(VALUES)
@example({"a": {}, "b": [], "c": [{}], "d": {"e": [[]]}})
@example({"\u2028": '\x00"\\\t\n\x7f\u00e9\U0001f600'})
def test_any_value_is_written_as_json_writes_it(value: Any) -> None:
    assert text(value) == reference(value)
    assert "".join(chunks(value)) == reference(value)


def test_an_index_shaped_document_is_streamed_a_cluster_at_a_time() -> None:
    files = MappingProxyType({"b/x.yaml": "sha256:" + "0" * 64, "a/y.yaml": "sha256:" + "1" * 64})
    doc = {
        "format": 2,
        "generator": "gpustack",
        "clusters": {f"c{i}": {"profile": f"../p{i}.yaml", "files": files} for i in (2, 1, 3)},
    }
    pieces = list(chunks(doc))
    plain = json.loads(json.dumps(doc, default=dict))
    assert "".join(pieces) == reference(plain)
    # one piece holds a whole cluster's entry: the text is handed over as it is made
    assert sum(1 for p in pieces if '"files"' in p) == 3
