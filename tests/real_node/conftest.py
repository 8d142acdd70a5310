"""The real node tier's fixtures: one control plane, the images built from this tree, and one
real node (containerd and a kubelet) registered to it, all started once per session."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.controlplane import ASSETS_VAR, ControlPlane
from tests.real_node import images
from tests.real_node.node import KUBELET_VAR, RealNode, missing_node


@functools.cache
def _reason() -> str | None:
    """Decided once a session: later the node's own kubelet serves the socket it checks."""
    return missing_node()


def _can_run() -> None:
    reason = _reason()
    if reason is not None:
        # Skips also under CI=true: no package registry ships a kubelet of the release.
        pytest.skip(reason)


@pytest.fixture(scope="session")
def node_control_plane() -> Iterator[ControlPlane]:
    _can_run()
    cp = ControlPlane.start(Path(os.environ[ASSETS_VAR]), kubelets=True)
    try:
        yield cp
    finally:
        cp.stop()


@pytest.fixture(scope="session")
def plugin_image() -> tuple[Path, str]:
    """The device plugin image ``make image`` builds from this tree: (OCI archive, tag)."""
    _can_run()
    return images.plugin_archive()


@pytest.fixture(scope="session")
def real_node(node_control_plane: ControlPlane) -> Iterator[RealNode]:
    node = RealNode.start(node_control_plane, Path(os.environ[KUBELET_VAR]), images.pause_archive())
    try:
        yield node
    finally:
        node.stop()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of this folder is the ``real_node`` tier (``pytest -m real_node``)."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.real_node)
