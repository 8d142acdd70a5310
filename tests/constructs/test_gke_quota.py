"""On GKE the stack's namespace gets the ResourceQuota GKE demands of critical pods (issue 20,
item 3).

GKE configures the API server's ResourceQuota admission with ``limitedResources`` for pods of the
``system-node-critical`` and ``system-cluster-critical`` priority classes: outside kube-system
such a pod is refused ("insufficient quota to match these scopes") unless a ResourceQuota of its
namespace has a scope selector naming its class. gpustack's pods are ``system-node-critical`` by
default, so without the quota no DaemonSet gets a pod. The e2e tier runs the GKE folder against
an API server with that admission configuration.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.constructs.conftest import Synth, profile


def quotas(synth: Synth, data: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(o.manifest) for o in synth(data) if o.kind == "ResourceQuota"]


def test_gke_namespace_admits_critical_pods(synth: Synth) -> None:
    data = profile(cluster={"platform": "gke"})
    (quota,) = quotas(synth, data)
    assert quota["metadata"]["namespace"] == "gpustack-system"
    (expr,) = quota["spec"]["scopeSelector"]["matchExpressions"]
    assert (expr["scopeName"], expr["operator"]) == ("PriorityClass", "In")
    # The class the stack's pods use must be named, or GKE still refuses them.
    pod_classes = {
        o.manifest["spec"]["template"]["spec"]["priorityClassName"]
        for o in synth(data)
        if o.kind == "DaemonSet"
    }
    assert pod_classes <= set(expr["values"])
    assert quota["spec"]["hard"]["pods"] == "1G"  # 10^9 pods: never limits a fleet


#: Profiles that leave cluster.platform unset but name what only GKE has (issue 31, item 1):
#: GKE's node pool labels, or its writable folder for the toolkit or the host driver.
GKE_LOOKING: dict[str, dict[str, Any]] = {
    "accelerator-label": {
        "cluster": {"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-tesla-t4"}}
    },
    "node-pool-label": {"cluster": {"nodeSelector": {"cloud.google.com/gke-nodepool": "gpu"}}},
    "toolkit-folder": {"toolkit": {"installDir": "/home/kubernetes/bin/nvidia"}},
    "host-driver-folder": {
        "driver": {"enabled": False, "hostDriverRoot": "/home/kubernetes/bin/nvidia"}
    },
}


@pytest.mark.parametrize("sections", GKE_LOOKING.values(), ids=list(GKE_LOOKING))
def test_a_profile_that_looks_like_gke_gets_the_quota(
    synth: Synth, sections: dict[str, Any]
) -> None:
    (quota,) = quotas(synth, profile(**sections))
    (expr,) = quota["spec"]["scopeSelector"]["matchExpressions"]
    assert "system-node-critical" in expr["values"]


@pytest.mark.parametrize(
    "cluster",
    [{}, {"platform": "generic"}, {"platform": "gke", "namespace": "kube-system"}],
    ids=["default", "generic", "gke-kube-system"],
)
def test_no_quota_where_none_is_needed(synth: Synth, cluster: dict[str, Any]) -> None:
    assert quotas(synth, profile(cluster=cluster)) == []
