"""``cmp-image/requirements.txt`` pins exactly gpustack's runtime dependencies, at the versions
this environment tests with, so what the Argo CD sidecar renders equals the committed dist/.

The runtime dependencies are pyproject.toml's ``[project] dependencies`` and, transitively, what
each installed distribution requires (extras and non-matching markers left out). A failure here
after an upstream release means: update the pin (and its hashes) or the environment, so that
both render with the same libraries.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
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


def _applies(req: Requirement) -> bool:
    return req.marker is None or req.marker.evaluate({**default_environment(), "extra": ""})


def runtime_closure() -> dict[str, list[Requirement]]:
    """Canonical name -> the requirements naming it, over the installed distributions."""
    found: dict[str, list[Requirement]] = {}
    todo = [r for r in declared() if _applies(r)]
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        first = name not in found
        found.setdefault(name, []).append(req)
        if first:
            todo += [Requirement(r) for r in metadata.requires(req.name) or []]
            todo = [r for r in todo if _applies(r)]
    return found


PINS = pins()


def test_every_runtime_dependency_is_pinned_and_nothing_else() -> None:
    closure = runtime_closure()
    assert sorted(PINS) == sorted(closure)


@pytest.mark.parametrize("req", declared(), ids=lambda r: r.name)
def test_pin_satisfies_pyproject(req: Requirement) -> None:
    _, version, _ = PINS[canonicalize_name(req.name)]
    assert req.specifier.contains(Version(version), prereleases=True), (
        f"{req.name}=={version} does not satisfy pyproject.toml's {req}"
    )


@pytest.mark.parametrize("name", sorted(PINS))
def test_pin_is_what_this_environment_tests_with(name: str) -> None:
    written, version, hashes = PINS[name]
    assert hashes, f"{written} has no --hash"
    installed = metadata.version(written)
    assert Version(installed) == Version(version), (
        f"{written}: the image pins {version}, this environment has {installed}; the sidecar "
        "would render with other libraries than the committed dist/ was made with"
    )
    for req in runtime_closure()[name]:
        assert req.specifier.contains(Version(version), prereleases=True), f"{req} vs {version}"
