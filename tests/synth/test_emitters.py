"""Output bytes never depend on whether PyYAML has libyaml: any string, any emitter, same text.

The example profiles hold ASCII only, so the tests that compare the two emitters on them could
not see that libyaml escapes and folds non-ASCII and control characters its own way (a NEL became
``"\\N"`` in one and stayed raw in the other; a long string with ``é`` folded at other places).
These draw arbitrary text, which finds such a character within a few examples.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gpustack.constructs import config_text
from gpustack.synth import serialize

pytestmark = pytest.mark.skipif(
    not yaml.__with_libyaml__, reason="PyYAML was built without libyaml: only one emitter"
)

TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)),  # no lone surrogates (not UTF-8)
    max_size=200,
)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)

#: Texts that once differed between the emitters.
KNOWN: list[Any] = ["\x85nel", "x" * 100 + " é " * 30, "a" * 70 + " " + "é" * 20, "\u2028", "\t"]


@pytest.mark.parametrize("value", KNOWN, ids=repr)
def test_known_differences_are_gone(value: Any) -> None:
    doc = {"data": {"v": value}}
    assert serialize.dump_yaml(doc) == serialize.dump_yaml(doc, serialize.PURE_DUMPER)
    assert config_text.config_yaml(doc) == config_text.config_yaml(doc, config_text.PURE_DUMPER)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_manifests_are_the_same_bytes_with_either_emitter(value: Any) -> None:
    doc = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"v": value}}
    assert serialize.dump_yaml(doc) == serialize.dump_yaml(doc, serialize.PURE_DUMPER)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_config_files_are_the_same_text_with_either_emitter(value: Any) -> None:
    doc = {"version": "v1", "v": value}
    fast = config_text.config_yaml(doc)
    assert fast == config_text.config_yaml(doc, config_text.PURE_DUMPER)
