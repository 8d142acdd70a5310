"""The pool rules (:mod:`gpustack.profile.rules.dra_pools`) on the profiles they must let pass:
a DRA pool of its own label next to the device plugin's pools, and an ``nvidia.com/gpu`` that the
device plugin does not advertise where DRA allocates. Their invalid cases are in cases/invalid/."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from gpustack.profile import rules
from gpustack.profile.model import Profile

BASE: dict[str, Any] = {
    "apiVersion": "gpustack.dev/v1alpha1",
    "kind": "Profile",
    "metadata": {"name": "pools"},
    "cluster": {"kubernetesVersion": "1.36"},
    "dra": {"enabled": True, "nodeSelector": {"nvidia.com/gpu.allocation": "dra"}},
}


def _profile(**sections: dict[str, Any]) -> Profile:
    doc = copy.deepcopy(BASE)
    for name, fields in sections.items():
        doc[name] = {**doc.get(name, {}), **fields}
    return Profile.from_dict(doc)


def _ids(p: Profile) -> list[str]:
    return [f.rule or "" for f in rules.rule_findings(p) if (f.rule or "").startswith("dra-")]


#: (what the profile does, its sections over BASE, the pool rules that fire)
CASES: list[tuple[str, dict[str, dict[str, Any]], list[str]]] = [
    ("a DRA pool of its own label", {"dra": {"extendedResourceName": True}}, []),
    (
        "the stack's selector and another DRA label",
        {"cluster": {"nodeSelector": {"nvidia.com/gpu.present": "true"}}},
        [],
    ),
    (
        "the stack's selector is the DRA pool's",
        {
            "dra": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
            "cluster": {"nodeSelector": {"nvidia.com/gpu.present": "true"}},
        },
        ["dra-pools-overlap"],
    ),  # fmt: skip
    (
        "the node config label with a value no node config has",
        {
            "dra": {"nodeSelector": {"nvidia.com/device-plugin.config": "dra"}},
            "devicePlugin": {"nodeConfigs": [{"name": "whole-gpu", "sharing": {}}]},
        },
        [],
    ),  # fmt: skip
    (
        "a node config's label, with the device plugin off",
        {
            "dra": {"nodeSelector": {"nvidia.com/device-plugin.config": "whole-gpu"}},
            "devicePlugin": {"enabled": False, "nodeConfigs": [{"name": "whole-gpu"}]},
        },
        [],
    ),  # fmt: skip
    (
        "no DRA pool, a device plugin that advertises only nvidia.com/gpu.shared",
        {
            "dra": {"nodeSelector": {}, "extendedResourceName": True},
            "devicePlugin": {
                "sharing": {
                    "timeSlicing": {
                        "renameByDefault": True,
                        "resources": [{"name": "nvidia.com/gpu", "replicas": 4}],
                    }
                }
            },
        },
        ["dra-device-plugin-same-gpus"],
    ),  # fmt: skip
    (
        "no DRA pool, the device plugin's nvidia.com/gpu",
        {"dra": {"nodeSelector": {}, "extendedResourceName": True}},
        ["dra-device-plugin-same-gpus", "dra-extended-resource-same-nodes"],
    ),
    (
        "no DRA pool and no device plugin",
        {
            "dra": {"nodeSelector": {}, "extendedResourceName": True},
            "devicePlugin": {"enabled": False},
        },
        [],
    ),  # fmt: skip
]


@pytest.mark.parametrize(("sections", "fired"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pool_rules(sections: dict[str, dict[str, Any]], fired: list[str]) -> None:
    assert _ids(_profile(**sections)) == fired
