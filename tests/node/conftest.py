"""Synthesis for the node harness, cached per profile (cdk8s starts Node.js once)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from gpustack.constructs import SynthObject, synthesize
from gpustack.profile.model import Profile
from tests.constructs.conftest import Synth


@pytest.fixture(scope="session")
def synth() -> Synth:
    cache: dict[str, list[SynthObject]] = {}

    def run(data: Mapping[str, Any]) -> list[SynthObject]:
        key = json.dumps(data, sort_keys=True)
        if key not in cache:
            cache[key] = synthesize(Profile.from_dict(data))
        return cache[key]

    return run
