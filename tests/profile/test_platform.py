"""GKE is recognised from what only GKE has (issue 31, item 1): its node pool labels and taints,
its writable driver folder for the toolkit or the host driver. Unset, ``cluster.platform``
follows those signals; ``generic`` with any of them is refused at the signal's line."""

from __future__ import annotations

from typing import Any

import pytest

from gpustack.profile import platform
from gpustack.profile.document import format_path
from gpustack.profile.model import Profile
from gpustack.profile.rules import get

GKE_FOLDER = "/home/kubernetes/bin/nvidia"

#: sections of a profile -> the JSON path of the one GKE signal in it
SIGNALS: dict[str, tuple[dict[str, Any], str]] = {
    "accelerator-label": (
        {"cluster": {"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"}}},
        "$.cluster.nodeSelector['cloud.google.com/gke-accelerator']",
    ),
    "node-pool-label": (
        {"cluster": {"nodeSelector": {"cloud.google.com/gke-nodepool": "gpu-pool"}}},
        "$.cluster.nodeSelector['cloud.google.com/gke-nodepool']",
    ),
    "spot-toleration": (
        {
            "cluster": {
                "tolerations": [
                    {
                        "key": "cloud.google.com/gke-spot",
                        "operator": "Exists",
                        "effect": "NoSchedule",
                    }
                ]
            }
        },
        "$.cluster.tolerations[0].key",
    ),
    "toolkit-folder": ({"toolkit": {"installDir": GKE_FOLDER}}, "$.toolkit.installDir"),
    "host-driver-folder": (
        {"driver": {"enabled": False, "hostDriverRoot": GKE_FOLDER}},
        "$.driver.hostDriverRoot",
    ),
}


def build(sections: dict[str, Any], platform_value: str | None) -> Profile:
    data: dict[str, Any] = {"metadata": {"name": "x"}, **sections}
    if platform_value is not None:
        cluster = dict(data.get("cluster", {}))
        cluster["platform"] = platform_value
        data["cluster"] = cluster
    return Profile.from_dict(data)


@pytest.mark.parametrize(("sections", "path"), SIGNALS.values(), ids=list(SIGNALS))
def test_unset_platform_follows_the_signal(sections: dict[str, Any], path: str) -> None:
    p = build(sections, None)
    assert [format_path(s.path) for s in platform.gke_signals(p)] == [path]
    assert platform.platform(p) == "gke"
    assert list(get("gke-platform-stated")(p)) == []


@pytest.mark.parametrize(("sections", "path"), SIGNALS.values(), ids=list(SIGNALS))
def test_generic_with_a_gke_signal_is_refused_at_its_line(
    sections: dict[str, Any], path: str
) -> None:
    (finding,) = get("gke-platform-stated")(build(sections, "generic"))
    assert format_path(finding.path) == path
    assert "set cluster.platform: gke" in finding.hint


@pytest.mark.parametrize(
    "sections",
    [
        {},
        {"cluster": {"nodeSelector": {"cloud.google.com/machine-family": "a2"}}},
        {"cluster": {"nodeSelector": {"eks.amazonaws.com/nodegroup": "gpu"}}},
        {"driver": {"enabled": False, "hostDriverRoot": "/run/nvidia/driver"}},
    ],
    ids=["default", "google-label-not-gke-only", "eks", "other-host-driver"],
)
def test_nothing_gke_stays_generic(sections: dict[str, Any]) -> None:
    p = build(sections, None)
    assert platform.gke_signals(p) == ()
    assert platform.platform(p) == "generic"


def test_a_stated_platform_wins() -> None:
    assert platform.platform(build({}, "gke")) == "gke"
