"""``cmp-image/requirements.txt`` pins every runtime dependency pyproject.toml declares, at a
version its specifier allows, each with its wheel hashes.

That the pins are complete (every transitive dependency) is proved where it matters: the image
build installs them with ``--require-hashes`` and runs ``pip check``, and the image test renders
every example profile in the sidecar and compares it byte for byte with the committed dist/.
The pins are deliberately not compared with this environment's installed versions: CI builds its
environment fresh from pyproject.toml's ranges, so such a test would fail on the day of any
upstream release, not when gpustack changed. When the image test finds the sidecar renders
differently from dist/, update the pins (and hashes).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
REQUIREMENTS = REPO / "cmp-image" / "requirements.txt"
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s\\]+)")


def pins() -> dict[str, tuple[str, str, list[str]]]:
    """Canonical name -> (name as written, version, hashes)."""
    found: dict[str, tuple[str, str, list[str]]] = {}
    text = REQUIREMENTS.read_text().replace("\\\n", " ")
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = PIN.match(line)
        assert match, f"not a pin: {line}"
        name, version = match.groups()
        hashes = re.findall(r"--hash=sha256:([0-9a-f]{64})", line)
        assert canonicalize_name(name) not in found, f"{name} pinned twice"
        found[canonicalize_name(name)] = (name, version, hashes)
    return found


def declared() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in project["dependencies"]]


PINS = pins()


def test_every_declared_dependency_is_pinned_once_with_hashes() -> None:
    missing = [r.name for r in declared() if canonicalize_name(r.name) not in PINS]
    assert missing == []
    assert all(hashes for _, _, hashes in PINS.values())


@pytest.mark.parametrize("req", declared(), ids=lambda r: r.name)
def test_pin_satisfies_pyproject(req: Requirement) -> None:
    _, version, _ = PINS[canonicalize_name(req.name)]
    assert req.specifier.contains(Version(version), prereleases=True), (
        f"{req.name}=={version} does not satisfy pyproject.toml's {req}"
    )
