"""Issue #36 item 3: a device plugin pool and a DRA pool in one profile, proven by the real
scheduler (Kubernetes 1.36, whose ``DRAExtendedResource`` gate is beta and on by default; the
tier's control plane sets no feature gate, so what is seen here is the release's default).

The h100-dra-migration folder rolls out as every folder does (tests/e2e/rollout.py): fake nodes of
the device plugin's pool (``gpu-<i>``, advertising ``nvidia.com/gpu`` from their status, as the
plugin's kubelet would) and of DRA's pool (``gpu-dra-<i>``, labelled with ``dra.nodeSelector``,
with the ResourceSlices NVIDIA's kubelet plugin publishes). Then:

- no DRA kubelet plugin pod is bound to a node of the device plugin's pool, and no device plugin
  pod to a node of DRA's pool (each pool runs its own allocator, and only it);
- the folder's example Job, unchanged (``nvidia.com/gpu: 1`` in its limits, no claim), is created
  twice, pinned to each pool by a nodeSelector alone: on the device plugin's pool it is bound
  against the node's ``nvidia.com/gpu``, with no claim; on DRA's pool the scheduler creates a
  ResourceClaim of the ``gpu.nvidia.com`` DeviceClass (its ``extendedResourceName``), allocates
  one GPU of that node's slice and names the claim in the pod's
  ``status.extendedResourceClaimStatus`` (KEP-5004).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from typing import Any, Final

import pytest

from gpustack import dra_upstream
from gpustack.constructs import device_plugin_props as plugin_names
from gpustack.constructs import dra_driver
from tests.e2e.controlplane import ControlPlane
from tests.e2e.folder import CLUSTERS, DRA_POOL, Folder, node_status
from tests.e2e.rollout import Observed, rollout, teardown, until

FOLDER: Final = CLUSTERS / "h100-dra-migration"
#: The resource the unchanged Job asks for, on either pool.
GPU: Final = "nvidia.com/gpu"
#: The device plugin's DaemonSets (the default one; this profile has no node configs).
PLUGIN_DAEMONSETS: Final = {plugin_names.DAEMONSET}


@pytest.fixture(scope="module")
def deployed(control_plane: ControlPlane) -> Iterator[tuple[ControlPlane, Folder, Observed]]:
    folder = Folder.load(FOLDER)
    try:
        yield control_plane, folder, rollout(control_plane, folder)
    finally:
        teardown(control_plane, folder)
        # the scheduler's claims go with their pods (owner references); any left go now
        control_plane.kubectl(
            "delete", "resourceclaims", "--all", "-A", "--wait=false", check=False
        )


def _pool_nodes(folder: Folder) -> tuple[list[str], list[str]]:
    """(nodes of the device plugin's pool, nodes of DRA's pool)."""
    pools = folder.pools()
    plugin = [n for n, p in pools.items() if p is None]
    dra = [n for n, p in pools.items() if p == DRA_POOL]
    return plugin, dra


def test_each_pool_runs_its_own_allocator_and_not_the_others(
    deployed: tuple[ControlPlane, Folder, Observed],
) -> None:
    _, folder, seen = deployed
    plugin_pool, dra_pool = _pool_nodes(folder)
    assert plugin_pool and dra_pool, folder.pools()
    placed = seen.placed["advertised"]
    for node in plugin_pool:
        assert dra_driver.KUBELET_PLUGIN not in placed[node], f"DRA kubelet plugin on {node}"
        assert placed[node] >= PLUGIN_DAEMONSETS, f"{node} runs {sorted(placed[node])}"
    for node in dra_pool:
        assert not placed[node] & PLUGIN_DAEMONSETS, f"device plugin on {node}"
        assert dra_driver.KUBELET_PLUGIN in placed[node], f"{node} runs {sorted(placed[node])}"


def _example_job(folder: Folder) -> Mapping[str, Any]:
    """The folder's one example Job, which asks for one GPU by the extended resource alone."""
    (job,) = folder.of_kind("Job")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["resources"]["limits"] == {GPU: 1}, container["resources"]
    assert "resourceClaims" not in job["spec"]["template"]["spec"]
    return job


def _pinned(job: Mapping[str, Any], name: str, selector: Mapping[str, str]) -> dict[str, Any]:
    """The same Job under another name, its pods pinned by ``selector`` (added to its own)."""
    out = copy.deepcopy(dict(job))
    out["metadata"] = {"name": name, "namespace": job["metadata"]["namespace"]}
    spec = out["spec"]["template"]["spec"]
    spec["nodeSelector"] = {**spec.get("nodeSelector", {}), **selector}
    out["spec"]["template"]["metadata"] = {"labels": {"e2e-pinned": name}}
    return out


def _pod(cp: ControlPlane, namespace: str, job: str) -> dict[str, Any]:
    found = json.loads(
        cp.kubectl("get", "pods", "-n", namespace, "-l", f"job-name={job}", "-o", "json")
    )["items"]
    return found[0] if found else {}


def test_one_unchanged_job_runs_on_each_pool(
    deployed: tuple[ControlPlane, Folder, Observed],
) -> None:
    cp, folder, _ = deployed
    plugin_pool, dra_pool = _pool_nodes(folder)
    job = _example_job(folder)
    namespace = job["metadata"]["namespace"]
    pins = {
        # the device plugin's pool has no label of its own (it is every GPU node outside DRA's):
        # its Job is pinned to one of its nodes
        "on-plugin-pool": ([plugin_pool[0]], {"kubernetes.io/hostname": plugin_pool[0]}),
        "on-dra-pool": (dra_pool, dict(folder.profile.dra.node_selector)),
    }
    for name, (_, selector) in pins.items():
        cp.kubectl("create", "-f", "-", stdin=json.dumps(_pinned(job, name, selector)))
    until(lambda: all(_pod(cp, namespace, n).get("spec", {}).get("nodeName") for n in pins), 60)
    pods = {name: _pod(cp, namespace, name) for name in pins}
    for name, (nodes, _) in pins.items():
        assert pods[name].get("spec", {}).get("nodeName") in nodes, (name, pods[name]["status"])

    # the device plugin's pool: the node's nvidia.com/gpu, no claim
    assert "extendedResourceClaimStatus" not in pods["on-plugin-pool"]["status"]
    assert "resourceClaims" not in pods["on-plugin-pool"]["spec"]
    allocatable = json.loads(cp.kubectl("get", "node", plugin_pool[0], "-o", "json"))["status"]
    assert allocatable["allocatable"].get(GPU) == str(folder.profile.gpus.per_node)

    # DRA's pool: the scheduler's own claim, of the class that answers nvidia.com/gpu
    status = pods["on-dra-pool"]["status"]
    assert "extendedResourceClaimStatus" in status, status
    mapped = status["extendedResourceClaimStatus"]
    (mapping,) = mapped["requestMappings"]
    assert mapping["resourceName"] == GPU, mapping
    claim = json.loads(
        cp.kubectl(
            "get", "resourceclaim", mapped["resourceClaimName"], "-n", namespace, "-o", "json"
        )
    )
    (request,) = claim["spec"]["devices"]["requests"]
    assert request["exactly"]["deviceClassName"] == dra_upstream.GPU_DEVICE_CLASS, request
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    node = pods["on-dra-pool"]["spec"]["nodeName"]
    assert (result["driver"], result["pool"]) == (dra_upstream.GPU_DRIVER, node), result
    owners = [r["name"] for r in claim["metadata"].get("ownerReferences", [])]
    assert owners == [pods["on-dra-pool"]["metadata"]["name"]], owners


def test_a_moved_node_that_still_lists_a_zero_nvidia_gpu_gets_the_job_through_dra(
    deployed: tuple[ControlPlane, Folder, Observed],
) -> None:
    """A node moved from the device plugin's pool may keep ``nvidia.com/gpu: 0`` in its status
    (the device plugin's resource, with no device left): the scheduler still takes the DRA path
    there, so a moved node needs no kubelet restart to serve the unchanged Job."""
    cp, folder, _ = deployed
    _, dra_pool = _pool_nodes(folder)
    node = dra_pool[-1]
    cp.kubectl(
        "patch", "node", node, "--subresource=status", "--type=merge",
        "-p", json.dumps(node_status({GPU: "0"})),
    )  # fmt: skip
    job = _example_job(folder)
    namespace = job["metadata"]["namespace"]
    pinned = _pinned(job, "moved-node", {"kubernetes.io/hostname": node})
    cp.kubectl("create", "-f", "-", stdin=json.dumps(pinned))
    until(lambda: bool(_pod(cp, namespace, "moved-node").get("spec", {}).get("nodeName")), 60)
    pod = _pod(cp, namespace, "moved-node")
    assert pod["spec"].get("nodeName") == node, pod["status"]
    assert "extendedResourceClaimStatus" in pod["status"], pod["status"]
