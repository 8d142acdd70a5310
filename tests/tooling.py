"""Shared helper for tests that need an external tool (kubectl, buildah, podman, mmdebstrap).

CI installs every tool the suite needs (.ci/run), so there a missing tool is a broken setup and
must fail loudly; on a developer machine it only means that test cannot run here.
"""

from __future__ import annotations

import os
import shutil

import pytest


def require_tool(name: str) -> str:
    """Absolute path of ``name`` on PATH; fails under ``CI=true``, skips otherwise."""
    path = shutil.which(name)
    if path is not None:
        return path
    message = f"{name} is not installed (CI installs it in .ci/run)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)
