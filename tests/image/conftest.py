from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    # Registered here so --strict-markers accepts it wherever pytest is started from.
    config.addinivalue_line(
        "markers",
        "image: slow container test; builds the plugin image with buildah and runs it under "
        'podman (deselect with -m "not image")',
    )
