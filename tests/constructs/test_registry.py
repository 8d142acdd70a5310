"""The component registry is the one list of components: synthesis, sync waves and file layout
all follow it, and a new component needs only its entry and its construct module."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest

from gpustack.constructs import synthesize
from gpustack.constructs.stack import load
from gpustack.profile import components
from gpustack.profile.components import Component
from gpustack.profile.model import Profile
from gpustack.synth.layout import layout_cluster

from .conftest import profile
from .dummy_component import COMPONENT as DUMMY

FOLDER = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def test_entries_are_well_formed() -> None:
    names = components.names()
    assert len(set(names)) == len(names), names
    for c in components.REGISTRY:
        assert FOLDER.match(c.name), c.name
        assert isinstance(load(c.construct), type), c.construct
        assert callable(load(c.props).from_profile), c.props
    waves = [c.sync_wave for c in components.REGISTRY]
    assert waves == sorted(waves), "sync waves must not decrease along the registry order"


@pytest.mark.parametrize(
    "ref", ["no-colon", ":Class", "module:", "gpustack.profile.components:Missing"]
)
def test_bad_references_fail_loudly(ref: str) -> None:
    with pytest.raises((ValueError, AttributeError)):
        load(ref)


def test_unregistered_lookups_name_the_registry() -> None:
    with pytest.raises(KeyError, match="not registered in gpustack.profile.components.REGISTRY"):
        components.sync_wave("zeta")


def test_registry_and_layout_import_no_cdk8s() -> None:
    code = (
        "import sys, gpustack.profile.components, gpustack.synth.layout\n"
        "cdk = {'cdk8s', 'constructs', 'jsii'}\n"
        "bad = sorted(m for m in sys.modules"
        " if m.split('.')[0] in cdk or m.startswith('gpustack.constructs'))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


#: Profile sections -> components a profile with them synthesizes.
#: NFD and GFD are on by default; the day-2 sections below turn them off where not the point.
NO_LABELLERS: dict[str, Any] = {
    "nodeFeatureDiscovery": {"enabled": False, "gpuNodeRule": False},
    "gpuFeatureDiscovery": {"enabled": False},
}
ENABLED: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "defaults": (
        {},
        ("common", "node-feature-discovery", "driver", "container-toolkit", "device-plugin",
         "gpu-feature-discovery"),
    ),
    "examples": (
        {"workloads": {"examples": [{"name": "smoke"}]}, **NO_LABELLERS},
        ("common", "driver", "container-toolkit", "device-plugin", "examples"),
    ),
    "host driver": (
        {"driver": {"enabled": False}, **NO_LABELLERS},
        ("common", "container-toolkit", "device-plugin"),
    ),
    "plugin only": (
        {"driver": {"enabled": False}, "toolkit": {"enabled": False}, **NO_LABELLERS},
        ("common", "device-plugin"),
    ),
    "no plugin": (
        {"devicePlugin": {"enabled": False}, **NO_LABELLERS},
        ("common", "driver", "container-toolkit"),
    ),
    "day 2": (
        {
            "gpus": {"product": "A100-SXM4-80GB", "mig": {"7g.80gb": 1}},
            "devicePlugin": {"migStrategy": "single"},
            "dcgmExporter": {"enabled": True},
        },
        ("common", "node-feature-discovery", "driver", "container-toolkit", "device-plugin",
         "gpu-feature-discovery", "mig-manager", "dcgm-exporter"),
    ),
    "rule only": (
        {"nodeFeatureDiscovery": {"enabled": False}, "gpuFeatureDiscovery": {"enabled": False}},
        ("common", "node-feature-discovery", "driver", "container-toolkit", "device-plugin"),
    ),
}  # fmt: skip


@pytest.mark.parametrize(("sections", "expected"), ENABLED.values(), ids=ENABLED.keys())
def test_enabled_when_decides_what_is_synthesized(
    sections: dict[str, Any], expected: tuple[str, ...]
) -> None:
    p = Profile.from_dict(profile(**sections))
    assert tuple(c.name for c in components.enabled(p)) == expected
    synthesized = list(dict.fromkeys(o.component for o in synthesize(p)))
    assert tuple(synthesized) == expected


def _with_dummy(enabled: bool) -> tuple[Component, ...]:
    """The registry with the test's dummy component between the toolkit and the plugin."""
    dummy = Component(
        DUMMY,
        0,
        lambda p: enabled,
        "tests.constructs.dummy_component:Dummy",
        "tests.constructs.dummy_component:DummyProps",
    )
    names = components.names()
    at = names.index("device-plugin")
    return (*components.REGISTRY[:at], dummy, *components.REGISTRY[at:])


def test_a_registry_entry_and_its_module_make_a_component(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(components, "REGISTRY", _with_dummy(True))
    objects = synthesize(Profile.from_dict(profile(metadata={"name": "lab"})))

    ours = [o for o in objects if o.component == DUMMY]
    assert [(o.kind, o.name) for o in ours] == [("ConfigMap", "gpu-dummy")]
    manifest = ours[0].manifest
    assert manifest["data"] == {"cluster": "lab"}
    assert manifest["metadata"]["annotations"] == {"argocd.argoproj.io/sync-wave": "0"}
    assert manifest["metadata"]["labels"]["app.kubernetes.io/component"] == DUMMY
    # synthesis order: after the toolkit, before the plugin
    order = list(dict.fromkeys(o.component for o in objects))
    assert order.index("container-toolkit") < order.index(DUMMY) < order.index("device-plugin")

    # its folder, in registry order among the others
    paths = list(layout_cluster("lab", objects).paths())
    assert f"{DUMMY}/configmap-gpu-dummy.yaml" in paths
    folders = list(dict.fromkeys(p.split("/")[0] for p in paths if "/" in p))
    assert folders == [c for c in components.names() if c in folders]
    assert folders.index("container-toolkit") < folders.index(DUMMY)
    assert folders.index(DUMMY) < folders.index("device-plugin")


def test_a_disabled_registry_entry_synthesizes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(components, "REGISTRY", _with_dummy(False))
    objects = synthesize(Profile.from_dict(profile()))
    assert DUMMY not in {o.component for o in objects}
    assert "device-plugin" in {o.component for o in objects}
