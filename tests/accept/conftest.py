"""Shared helpers: profiles, their acceptance objects, and running a Job's container here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpustack.accept import manifests
from gpustack.accept.expect import Group, Host, groups
from gpustack.accept.plan import node_counts, plan
from gpustack.checker import check_paths
from gpustack.profile.model import Profile

REPO = Path(__file__).parents[2]
#: Every example profile; :data:`PROFILES` those the acceptance run applies to.
EVERY_PROFILE = sorted((REPO / "profiles").glob("*.yaml"))
HARNESS = REPO / "gpustack" / "accept" / "harness"


def load(path: Path) -> Profile:
    result = check_paths([path])
    assert result.ok, result.issues
    return result.profiles[0].profile


def with_device_plugin(paths: list[Path]) -> list[Path]:
    """The profiles whose clusters run a device plugin: the ones ``gpustack accept`` runs on
    (without one it refuses; tests/accept/test_cli.py)."""
    return [p for p in paths if load(p).device_plugin.enabled]


PROFILES = with_device_plugin(EVERY_PROFILE)


def named_groups(profile: Profile, nodes: int, **kw: Any) -> list[Group]:
    """The groups as a state naming ``nodes`` nodes per plugin config would give them."""
    counts = node_counts(profile, None, nodes)
    hosts = {c: tuple(Host(f"{c or 'gpu'}-{i}.node", f"{c or 'gpu'}-{i}") for i in range(nodes))
             for c in counts}  # fmt: skip
    return groups(profile, counts, hosts=hosts, **kw)


def objects(path: Path, nodes: int = 1, named: bool = False, **kw: Any) -> list[dict[str, Any]]:
    """The run's objects for ``nodes`` nodes per config: counted, or ``named`` (pinned)."""
    profile = load(path)
    found = named_groups(profile, nodes, **kw) if named else plan(profile, None, nodes, **kw)
    return manifests.objects(profile, found)


def job(objs: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(o for o in objs if o["kind"] == "Job" and o["metadata"]["name"] == name)


def container_env(container: dict[str, Any], **fields: str) -> dict[str, str]:
    """The container's environment as the kubelet gives it (field refs from ``fields``)."""
    env = {}
    for var in container["env"]:
        if "value" in var:
            env[var["name"]] = var["value"]
        else:
            env[var["name"]] = fields.get(var["name"], "")
    return env


def as_run_here(command: list[str], values: dict[str, str]) -> list[str]:
    """A Job's command on this machine: ``$(VAR)`` expanded as the kubelet does, the harness
    from the package, torchrun and python from this interpreter."""
    out = []
    for word in command:
        for name, value in values.items():
            word = word.replace(f"$({name})", value)
        out.append(word.replace(manifests.HARNESS_DIR, str(HARNESS)))
    head = {"torchrun": [sys.executable, "-m", "torch.distributed.run"], "python": [sys.executable]}
    return head[out[0]] + out[1:]


@pytest.fixture(scope="session")
def real_torch() -> None:
    """PyTorch (a CPU build) in the test interpreter; `make test` installs it (Makefile)."""
    found = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True)
    if found.returncode != 0:
        message = "torch is not installed (`make test` installs torch==2.13.0, a CPU build)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
