"""Each object's body crosses jsii as JSON text (gpustack.constructs.body_text): cdk8s renders
the same objects, key order included, as from the body as a tree, for every example profile.
This is what holds a cdk8s upgrade to applying patch values untouched."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpustack.constructs import body_text, kube, stack, synthesize
from gpustack.profile.model import Profile


def ordered(manifests: list[Any]) -> str:
    """The objects as text that keeps every map's key order (dict equality ignores it)."""
    return json.dumps([(o.component, o.manifest) for o in manifests])


def test_the_text_renders_as_the_tree(
    examples: list[Profile], monkeypatch: pytest.MonkeyPatch
) -> None:
    as_text = [ordered(synthesize(p, cache=None)) for p in examples]
    monkeypatch.setattr(kube, "encode", lambda value: value)
    monkeypatch.setattr(stack, "decoded", lambda manifest: manifest)
    as_tree = [ordered(synthesize(p, cache=None)) for p in examples]
    assert len(as_text) == len(examples) > 10
    for profile, text, tree in zip(examples, as_text, as_tree, strict=True):
        assert text == tree, profile.metadata.name


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text().filter(lambda k: k not in body_text.MADE_BY_CDK8S), json_values))
def test_decoding_gives_back_each_field(body: dict[str, Any]) -> None:
    rendered = {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}}
    rendered |= {key: body_text.encode(value) for key, value in body.items()}
    out = body_text.decoded(rendered)
    assert out == {"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}, **body}
    assert json.dumps(out) == json.dumps({**out, **body})


def test_a_field_not_added_as_text_is_a_bug() -> None:
    with pytest.raises(TypeError, match="'spec'"):
        body_text.decoded({"apiVersion": "v1", "kind": "K", "spec": {"a": 1}})
