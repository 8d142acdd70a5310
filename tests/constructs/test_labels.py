"""Label rules: valid label values, recommended labels, selectors without version."""

from __future__ import annotations

import re

import pytest

from gpustack.constructs.labels import (
    COMPONENTS,
    SYNC_WAVES,
    Identity,
    label_value,
    object_labels,
    selector_labels,
)

LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("580.105.08", "580.105.08"),
        ("v1.18.1", "v1.18.1"),
        ("2.5.1-cuda12.4-cudnn9-runtime", "2.5.1-cuda12.4-cudnn9-runtime"),
        ("1.0+build.7", "1.0-build.7"),
        ("sha256:abc", "sha256-abc"),
        ("-x-", "x"),
        ("", ""),
    ],
)
def test_label_value(text: str, expected: str) -> None:
    assert label_value(text) == expected


def test_label_value_is_always_valid_and_short() -> None:
    for text in ("a" * 100, "x" * 62 + "._-yyy", "::", "v" + "." * 70 + "1"):
        value = label_value(text)
        assert len(value) <= 63
        assert LABEL_VALUE.match(value), value


def test_empty_version_gives_no_version_label() -> None:
    assert "app.kubernetes.io/version" not in object_labels("n", "c", "")


def test_identity_keeps_version_out_of_selector() -> None:
    ident = Identity("nvidia-driver", "driver", "580.105.08", (("team", "ml"),))
    assert ident.selector() == selector_labels("nvidia-driver", "driver")
    assert ident.workload_labels()["app.kubernetes.io/version"] == "580.105.08"
    assert "app.kubernetes.io/version" not in ident.labels()  # only where the version lives
    assert ident.selector().items() <= ident.workload_labels().items()
    assert ident.labels()["team"] == "ml"
    assert ident.selector().items() <= ident.labels().items()


def test_every_component_has_a_wave() -> None:
    assert set(SYNC_WAVES) == set(COMPONENTS)
    waves = [int(SYNC_WAVES[c]) for c in COMPONENTS]
    assert waves == sorted(waves)
