"""The node-state rules: one row per check, the only place its ID and meaning are given.

As with the profile rules (:mod:`gpustack.profile.rules.registry`), the ID a finding prints,
the function that finds it and what the reference (``docs/node-rules.md``, rendered by
:mod:`.reference`) says are stated side by side. The IDs never collide with the profile
rules' (a test holds to that), so ``(rule: ...)`` names one thing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from gpustack.kube.nodes import Nodes
from gpustack.nodestate import checks, gpus, host_driver, imex
from gpustack.nodestate.checks import Check
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile


@dataclass(frozen=True, kw_only=True)
class NodeRule:
    """A check of the profile against its nodes: ``field`` is the profile field it holds to
    the nodes, ``reads`` what on the node it compares it with."""

    id: str
    check: Check
    field: str
    reads: str
    summary: str
    fix: str

    def __call__(self, profile: Profile, nodes: Nodes) -> Iterator[Finding]:
        for finding in self.check(profile, nodes):
            yield replace(finding, rule=self.id)


NODE_RULES: tuple[NodeRule, ...] = (
    NodeRule(
        id="kubernetes-version-matches-nodes",
        check=checks.kubernetes_version_matches_nodes,
        field="cluster.kubernetesVersion",
        reads="`status.nodeInfo.kubeletVersion` of every node",
        summary="no kubelet is newer than `kubernetesVersion`, and control-plane nodes run it",
        fix="set `cluster.kubernetesVersion` to the cluster's release",
    ),
    NodeRule(
        id="kubelet-version-skew",
        check=checks.kubelet_skew_supported,
        field="cluster.kubernetesVersion",
        reads="`status.nodeInfo.kubeletVersion`",
        summary="the selected nodes' kubelets are at most 3 minor releases older than"
        " `kubernetesVersion` (Kubernetes' version skew policy)",
        fix="upgrade the nodes",
    ),
    NodeRule(
        id="os-matches-driver-image",
        check=checks.os_matches_driver_image,
        field="driver.osTag",
        reads="NFD `system-os_release.ID`/`VERSION_ID`, else `status.nodeInfo.osImage`",
        summary="with `driver.enabled`, the driver image's OS is the nodes' OS",
        fix="set `driver.osTag` to the nodes' OS (`ubuntu22.04`, `rhel9.6`, `rhcos4.18`)",
    ),
    NodeRule(
        id="kernel-matches-precompiled",
        check=checks.kernel_matches_precompiled,
        field="driver.kernelVersion",
        reads="`status.nodeInfo.kernelVersion` (NFD `kernel-version.full`)",
        summary="a precompiled driver image is built for the nodes' kernel",
        fix="set `driver.kernelVersion` to the nodes' `uname -r`",
    ),
    NodeRule(
        id="rhcos-build-in-profile",
        check=checks.rhcos_build_in_profile,
        field="driver.driverToolkit",
        reads="NFD `system-os_release.OSTREE_VERSION`",
        summary="on OpenShift, every GPU node runs an RHCOS build the profile names a Driver"
        " Toolkit for (one driver DaemonSet per build, pinned to it)",
        fix="add the build to `driver.driverToolkit.builds` with its Driver Toolkit image",
    ),
    NodeRule(
        id="gpu-product-matches-nodes",
        check=gpus.gpu_product_matches_nodes,
        field="gpus.product",
        reads="GFD `nvidia.com/gpu.product`, mapped to the catalog's names",
        summary="the nodes carry `gpus.product`",
        fix="set `gpus.product` to the nodes' product",
    ),
    NodeRule(
        id="host-architecture-matches-product",
        check=gpus.host_architecture_matches_product,
        field="gpus.product",
        reads="`status.nodeInfo.architecture`",
        summary="a product built only into arm64 hosts (GH200, GB200, T4G) meets arm64 nodes",
        fix="set `gpus.product` to the nodes' GPU",
    ),
    NodeRule(
        id="gpu-architecture-matches-nodes",
        check=gpus.gpu_architecture_matches_nodes,
        field="gpus.architecture",
        reads="GFD `nvidia.com/gpu.family`, `gpu.compute.major`/`minor`",
        summary="without a product, the nodes' GPUs are of `gpus.architecture`",
        fix="set `gpus.architecture` to the nodes'",
    ),
    NodeRule(
        id="gpu-count-matches-nodes",
        check=gpus.gpu_count_matches_nodes,
        field="gpus.perNode (or a node config's)",
        reads="GFD `nvidia.com/gpu.count`",
        summary="each node has the GPUs `perNode` promises",
        fix="set `perNode` to the nodes' count",
    ),
    NodeRule(
        id="mig-capable-nodes",
        check=gpus.mig_capable_nodes,
        field="gpus.mig, devicePlugin.migStrategy",
        reads="GFD `nvidia.com/mig.capable`",
        summary="MIG settings only for nodes whose GPUs are MIG-capable",
        fix="remove the MIG settings for those nodes",
    ),
    NodeRule(
        id="runtime-matches-nodes",
        check=checks.runtime_matches_nodes,
        field="cluster.runtime.name",
        reads="`status.nodeInfo.containerRuntimeVersion` (`containerd://`, `cri-o://`)",
        summary="the nodes run the profile's container runtime",
        fix="set `cluster.runtime.name` to the nodes' runtime",
    ),
    NodeRule(
        id="runtime-version-matches-nodes",
        check=checks.runtime_version_matches_nodes,
        field="cluster.runtime.version",
        reads="`status.nodeInfo.containerRuntimeVersion`",
        summary="the nodes run `runtime.version` (as far as it goes: `2.0` matches 2.0.5); unset,"
        " they run containerd 1.x",
        fix="set `cluster.runtime.version` to the nodes' version",
    ),
    NodeRule(
        id="distribution-matches-nodes",
        check=checks.distribution_matches_nodes,
        field="cluster.runtime.distribution",
        reads="the kubelet version's `+k3s`/`+rke2`/`+k0s`, MicroK8s and OpenShift node labels,"
        " managed clouds' node pool labels",
        summary="the nodes belong to `runtime.distribution` (managed GKE, EKS and AKS nodes are"
        " `generic`)",
        fix="set `cluster.runtime.distribution` to the nodes'",
    ),
    NodeRule(
        id="host-driver-absent",
        check=host_driver.host_driver_absent,
        field="driver.enabled",
        reads="GFD `nvidia.com/cuda.driver*` labels on a node without gpustack's driver pod,"
        " GKE's `cloud.google.com/gke-gpu-driver-version`, COS and Bottlerocket node images",
        summary="with `driver.enabled`, no node has a driver of its own (two drivers)",
        fix="set `driver.enabled: false`, or remove the host driver",
    ),
    NodeRule(
        id="driver-version-matches-host",
        check=host_driver.driver_version_matches_host,
        field="driver.version",
        reads="GFD `nvidia.com/cuda.driver-version.full` (`cuda.driver.major`/`minor`/`rev`)",
        summary="with a host driver, `driver.version` is the one the nodes load",
        fix="set `driver.version` to the hosts' driver",
    ),
    NodeRule(
        id="gke-host-driver-root",
        check=host_driver.gke_host_driver_root,
        field="driver.hostDriverRoot",
        reads="`cloud.google.com/gke-nodepool`, `cloud.google.com/gke-gpu-driver-version`",
        summary="on GKE nodes with GKE's driver, `hostDriverRoot` is where GKE installs it",
        fix="set `driver.hostDriverRoot: /home/kubernetes/bin/nvidia`",
    ),
    NodeRule(
        id="imex-service-matches-mode",
        check=imex.imex_service_matches_mode,
        field="dra.imexMode",
        reads="an AICR snapshot's `SystemD` `nvidia-imex.service` (`ActiveState`, `UnitFileState`)",
        summary="with ComputeDomains, the host's `nvidia-imex.service` is masked"
        " (`driverManaged`) or running (`hostManaged`)",
        fix="`systemctl disable --now nvidia-imex.service && systemctl mask"
        " nvidia-imex.service`, or start it for `hostManaged`",
    ),
    NodeRule(
        id="node-taints-declared",
        check=checks.node_taints_declared,
        field="cluster.nodeTaints",
        reads="`spec.taints` (NoSchedule, NoExecute; not the lifecycle controller's)",
        summary="every taint the selected nodes carry is in `cluster.nodeTaints`",
        fix="add the taint to `cluster.nodeTaints`",
    ),
    NodeRule(
        id="selected-nodes-have-gpus",
        check=checks.selected_nodes_have_gpus,
        field="cluster.nodeSelector",
        reads="NFD `pci-10de.present` (`pci-<class>_10de.present`)",
        summary="every node the selector picks has an NVIDIA PCI device (where NFD has run)",
        fix="narrow `cluster.nodeSelector`",
    ),
    NodeRule(
        id="gpu-nodes-selected",
        check=checks.gpu_nodes_selected,
        field="cluster.nodeSelector",
        reads="NFD's PCI labels, GFD's and the clouds' accelerator labels, `nvidia.com/*` capacity",
        summary="the selector picks some node, and every GPU node",
        fix="widen `cluster.nodeSelector`, or label the nodes",
    ),
)


def node_findings(profile: Profile, nodes: Nodes) -> list[Finding]:
    """Every node rule's findings, in table order, each with its rule's ID."""
    return [finding for rule in NODE_RULES for finding in rule(profile, nodes)]
