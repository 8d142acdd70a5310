"""The control planes the e2e tier shares: one per admission setup, started once per session."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.controlplane import ASSETS_VAR, ControlPlane, missing_assets
from tests.e2e.variants import synthesize


def _assets() -> Path:
    reason = missing_assets()
    if reason is not None:
        # The one tier that skips even under CI=true: no registry ships these binaries.
        pytest.skip(reason)
    return Path(os.environ[ASSETS_VAR])


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    """A plain cluster: upstream admission defaults, PodSecurity ``baseline`` by default."""
    cp = ControlPlane.start(_assets())
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="session")
def gke_control_plane() -> Iterator[ControlPlane]:
    """The same, as GKE admits pods: its ResourceQuota admission for critical priority classes
    and the ExtendedResourceToleration plugin."""
    cp = ControlPlane.start(_assets(), gke=True)
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="session")
def variants_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated variants (tests/e2e/variants.py), synthesized: ``<root>/profiles`` and
    ``<root>/dist/clusters/<name>``."""
    _assets()  # nothing to synthesize for when the tier cannot run
    root = tmp_path_factory.mktemp("variants")
    synthesize(root)
    return root


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of this folder is the ``e2e`` tier (``pytest -m e2e`` selects it)."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.e2e)
