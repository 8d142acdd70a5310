"""What validation promises is what gpustack's plugin advertises.

For every valid profile (the profile test cases and profiles/), the ConfigMap the constructs
render is loaded by the plugin's own parser and run against simulated GPUs shaped like the
profile; the resource names the plugin then registers must be the ones the rules (and so the
example Jobs) rely on: renames, ``renameByDefault`` and MIG names included.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gpustack.checker import check_paths
from gpustack.constructs.plugin_config import build_config, simulated_gpus
from gpustack.plugin import config as plugin_config
from gpustack.plugin.backends.simulated import SimulatedBackend
from gpustack.plugin.config import PluginConfig
from gpustack.plugin.resources import build_resources
from gpustack.profile.derive import advertised_resources
from gpustack.profile.model import Profile, node_config_profile
from gpustack.scan import discover

REPO = Path(__file__).resolve().parents[2]
PATHS = discover([REPO / "tests" / "profile" / "cases" / "valid", REPO / "profiles"])


def load(path: Path) -> Profile:
    result = check_paths([path])
    assert result.ok, [str(i) for i in result.issues]
    (loaded,) = result.profiles
    return loaded.profile


def plugin_names(profile: Profile) -> set[str]:
    rendered = PluginConfig.from_dict(build_config(profile))  # what the plugin reads
    # Same config, but on simulated GPUs of the profile's shape instead of NVML.
    simulated = plugin_config.SimulatedBackend(gpus=simulated_gpus(profile))
    ext = replace(rendered.extensions, backend="simulated", simulated=simulated)
    config = replace(rendered, gpustack=ext)
    return {r.name for r in build_resources(config, SimulatedBackend(config).discover())}


def expected_names(profile: Profile) -> set[str]:
    names = list(advertised_resources(profile))
    dp = profile.device_plugin
    if dp.mig_strategy == "mixed" and profile.gpus.mig:
        names.pop(0)  # every simulated GPU is partitioned: no whole GPU is left to advertise
    return set(names)


def gpustack_profiles() -> list[Path]:
    return [
        p
        for p in PATHS
        if load(p).device_plugin.implementation == "gpustack" and load(p).device_plugin.enabled
    ]


@pytest.mark.parametrize("path", gpustack_profiles(), ids=lambda p: p.stem)
def test_plugin_advertises_what_the_rules_expect(path: Path) -> None:
    profile = load(path)
    assert plugin_names(profile) == expected_names(profile)


def test_renamed_profile_is_covered() -> None:
    stems = {p.stem for p in gpustack_profiles()}
    assert {"time-slicing-rename", "a100-mig-mixed", "l4-inference-timeslicing"} <= stems


def node_configs() -> list[tuple[Path, str]]:
    return [(p, nc.name) for p in gpustack_profiles() for nc in load(p).device_plugin.node_configs]


@pytest.mark.parametrize("path,name", node_configs(), ids=lambda v: getattr(v, "stem", v))
def test_each_node_config_advertises_what_the_rules_expect(path: Path, name: str) -> None:
    profile = load(path)
    (nc,) = [nc for nc in profile.device_plugin.node_configs if nc.name == name]
    view = node_config_profile(profile, nc)
    assert plugin_names(view) == expected_names(view)


def test_node_configs_are_covered() -> None:
    assert {(p.stem, n) for p, n in node_configs()} >= {
        ("node-configs", "whole-gpu"),
        ("l4-inference-timeslicing", "whole-gpu"),
    }
