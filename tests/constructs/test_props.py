"""Props are resolved from the profile and never restate its defaults.

The profile model owns every default; a props field with a literal default is a second copy that
silently disagrees once the model's changes. So props fields have no defaults, except the few
choices that belong to a construct and appear in no profile.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gpustack.constructs.device_plugin_props import NodeConfigProps
from gpustack.constructs.example_job import ExampleJob
from gpustack.constructs.mps import MpsControlDaemonProps
from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.constructs.stack import load
from gpustack.constructs.waits import WaitFor
from gpustack.profile import components
from gpustack.profile.model import DRIVER_CONTAINER_ROOT, PLUGIN_IMAGES, Profile

CONSTRUCTS = Path(__file__).resolve().parents[2] / "gpustack" / "constructs"

#: (props class, field) pairs whose default is the construct's own choice, not a profile value.
CONSTRUCT_CHOICES = {
    ("DriverProps", "termination_grace_period_seconds"),
    ("DriverProps", "peermem_liveness"),
    ("ExamplesProps", "backoff_limit"),
}

PROPS: list[type] = [
    *(load(c.props) for c in components.REGISTRY),
    Placement,
    ContainerSettings,
    NodeConfigProps,
    ExampleJob,
    MpsControlDaemonProps,
    WaitFor,
]


@pytest.mark.parametrize("props", PROPS, ids=lambda t: t.__name__)
def test_props_have_no_profile_defaults(props: type) -> None:
    defaulted = {
        (props.__name__, f.name)
        for f in dataclasses.fields(props)
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
    }
    assert defaulted <= CONSTRUCT_CHOICES


def _profile_defaults() -> dict[str, str]:
    """Distinctive default values of the profile model (whatever they are today)."""
    p = Profile.from_dict({"metadata": {"name": "x"}})
    return {
        "driver.version": p.driver.version,
        "toolkit.version": p.toolkit.version,
        "toolkit.installDir": p.toolkit.install_dir,
        "cluster.namespace": p.cluster.namespace,
        "cluster.priorityClassName": p.cluster.priority_class_name,
        "driver container root": DRIVER_CONTAINER_ROOT,
        **{f"{impl} plugin version": version for impl, (_, version) in PLUGIN_IMAGES.items()},
    }


@pytest.mark.parametrize(("what", "value"), _profile_defaults().items())
def test_construct_sources_do_not_restate_a_profile_default(what: str, value: str) -> None:
    assert value, what
    hits = [
        f"{path.name}:{n}"
        for path in sorted(CONSTRUCTS.glob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if value in line
    ]
    assert hits == [], f"{what} ({value}) is restated in {hits}"
