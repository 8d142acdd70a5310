from __future__ import annotations

import pytest

from tests.image.containers import Tools, root_required
from tests.tooling import require_tool


def pytest_configure(config: pytest.Config) -> None:
    # Registered here so --strict-markers accepts it wherever pytest is started from.
    config.addinivalue_line(
        "markers",
        "image: slow container test; builds an image (the device plugin, the Argo CD plugin "
        'sidecar) with buildah and runs it under podman (deselect with -m "not image")',
    )


@pytest.fixture(scope="session")
def tools() -> Tools:
    """buildah and podman, as root; mmdebstrap, which builds the base on first use."""
    buildah = require_tool("buildah")
    podman = require_tool("podman")
    require_tool("mmdebstrap")
    root_required()
    return Tools(buildah=buildah, podman=podman)
