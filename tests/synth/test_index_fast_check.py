"""Reading an index checks each entry's paths and digests in one regex call
(:func:`gpustack.synth.index._all_valid`); it may only ever accept what the path-by-path check
(:func:`~gpustack.synth.index._inside` and the digest pattern) accepts, for any entry."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpustack.synth.index import _DIGEST, _all_valid, _inside

DIGEST = "sha256:" + "ab" * 32
#: Paths made of the characters that matter to the rules (separators, dots, NUL, newline).
PATHS = st.text(alphabet="a./\\\0\n", min_size=0, max_size=8)
#: Digests, near misses (a digit short, upper case, not hex, not ASCII, two in one) and others.
NEAR = ["sha256:" + "AB" * 32, "sha256:" + "g" * 64, "sha256:" + "\u00e9" * 64, "sha256" + "a" * 65]
VALUES = (
    st.none()
    | st.sampled_from([DIGEST, DIGEST + "\n" + DIGEST, DIGEST[:-1], "", *NEAR])
    | st.text(alphabet="sha256:\nab", min_size=69, max_size=73)
    | PATHS
)


def one_by_one(value: dict[Any, Any], *, digested: bool) -> bool:
    for path, hashed in value.items():
        if not _inside(path):
            return False
        if (hashed is not None or digested) and (
            not isinstance(hashed, str) or not _DIGEST.fullmatch(hashed)
        ):
            return False
    return True


@settings(max_examples=2000, deadline=None)
@given(st.dictionaries(PATHS, VALUES, max_size=5), st.booleans())
@example({"a/..\n": DIGEST, "b": DIGEST}, True)
@example({"a\0b": DIGEST}, True)
@example({"a": DIGEST + "\n" + DIGEST[:-1], "b": "0"}, True)
def test_the_fast_check_accepts_only_what_each_path_passes(
    value: dict[str, Any], digested: bool
) -> None:
    if _all_valid(value, digested=digested):
        assert one_by_one(value, digested=digested)


@pytest.mark.parametrize(
    ("value", "digested", "fast"),
    [
        ({"manifests/a.yaml": DIGEST, "kustomization.yaml": DIGEST}, True, True),
        ({"manifests/a.yaml": None}, False, True),  # format 1: no digests
        ({}, True, True),
        ({"../a.yaml": DIGEST}, True, False),
        ({"a/./b": DIGEST}, True, False),
        ({"/a": DIGEST}, True, False),
        ({"a//b": DIGEST}, True, False),
        ({"a\\b": DIGEST}, True, False),
        ({"a": DIGEST, "b\0": DIGEST}, True, False),
        ({"a": DIGEST + "\n" + DIGEST, "b": ""}, True, False),  # two digests in one value
        ({"a": None}, True, False),
        ({"a": DIGEST}, False, False),  # format 1 with a digest: judged path by path
        *(({"a": near}, True, False) for near in NEAR),
    ],
)
def test_the_fast_check_on_the_shapes_an_index_holds(
    value: dict[str, Any], digested: bool, fast: bool
) -> None:
    assert _all_valid(value, digested=digested) is fast
