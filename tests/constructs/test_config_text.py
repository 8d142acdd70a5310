"""Config files shipped in ConfigMaps read the same whichever YAML emitter wrote them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.checker import check_paths
from gpustack.constructs import config_text, mig_manager, nfd, plugin_config
from gpustack.profile.derive import mig_layouts
from gpustack.profile.model import Profile

REPO = Path(__file__).resolve().parents[2]


def _profiles() -> list[Profile]:
    result = check_paths(sorted((REPO / "profiles").glob("*.yaml")))
    assert result.ok
    return [p.profile for p in result.profiles]


def _documents() -> list[tuple[str, Any]]:
    docs: list[tuple[str, Any]] = []
    for p in _profiles():
        docs.append((f"{p.metadata.name}: plugin config", plugin_config.build_config(p)))
        layouts = mig_layouts(p)
        if layouts:
            text = mig_manager.render_config(layouts)
            docs.append((f"{p.metadata.name}: mig-parted config", yaml.safe_load(text)))
    docs.append(("nfd worker", yaml.safe_load(nfd.worker_config(gpu_rule=True))))
    docs.append(("nfd master", yaml.safe_load(nfd.master_config())))
    # what the pure emitter handles on its own terms: long lines, quoting, unicode, empties
    docs.append(
        ("edge cases", {"a": "x " * 60, "b": "yes", "c": "", "d": [], "e": "é:\n", "f": 1.5})
    )
    return docs


DOCS = _documents()


@pytest.mark.parametrize(("what", "data"), DOCS, ids=[w for w, _ in DOCS])
def test_both_emitters_write_the_same_text(what: str, data: Any) -> None:
    fast = config_text.config_yaml(data)
    assert fast == config_text.config_yaml(data, config_text.PURE_DUMPER)
    assert fast == yaml.safe_dump(data, sort_keys=False)


def test_the_fast_emitter_is_libyaml_where_pyyaml_has_it() -> None:
    expected: Callable[..., Any] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    assert config_text.FAST_DUMPER is expected
