"""``metadata`` and ``cluster``: which cluster and which nodes (their container runtime is
:mod:`gpustack.profile.model.runtime`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from gpustack.fields import item, key
from gpustack.profile.model.common import (
    ABS_PATH,
    DNS_LABEL,
    DNS_SUBDOMAIN,
    IMAGE,
    Labels,
    Taint,
    Toleration,
)
from gpustack.profile.model.runtime import KUBELET_ROOT_DIRS, Runtime
from gpustack.profile.model.upstream import GPU_OPERATOR, GPU_OPERATOR_KUBERNETES
from gpustack.profile.node_label_catalog import platform_wide

API_VERSION = "gpustack.dev/v1alpha1"
KIND = "Profile"

#: Kubernetes minor versions a profile may target (kubernetes-validate ships schemas for them).
SUPPORTED_KUBERNETES = ("1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37")
#: A new profile's release: the newest the pinned GPU Operator supports (not the newest
#: gpustack accepts: NVIDIA has not tested its defaults on a release it does not list).
DEFAULT_KUBERNETES = GPU_OPERATOR_KUBERNETES[-1]

Platform = Literal["generic", "gke"]
#: Priority classes GKE admits outside kube-system only under a ResourceQuota naming them.
GKE_LIMITED_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")


@dataclass(frozen=True)
class Metadata:
    """Profile identity. ``name`` names the cluster folder ``dist/clusters/<name>/``."""

    name: str = key(
        "Name",
        "Cluster name (DNS-1123 label); output goes to dist/clusters/<name>/.",
        pattern=DNS_LABEL,
        max_length=63,
        examples=["lab-1gpu", "h100-prod-east"],
    )
    labels: Labels = key(
        "Labels",
        "Labels copied onto every generated object, but not onto the pod templates of its"
        " workloads: a change relabels the objects and recreates no pod. For labels the pods"
        " themselves need, use podLabels.",
        factory=tuple,
        examples=[{"team": "ml-platform"}],
    )
    pod_labels: Labels = key(
        "Pod labels",
        "Labels also put on every pod template (DaemonSets, Deployments, example Jobs), for"
        " tools that select or bill pods by label. A change to them changes every pod template,"
        " so every pod is recreated as its workload rolls: the container toolkit restarts the"
        " node's container runtime and the driver's pods wait for their deletion (OnDelete).",
        factory=tuple,
        examples=[{"cost-center": "ml-platform"}],
    )


#: Default node selector: the label NVIDIA's GPU feature discovery and the GPU Operator use.
DEFAULT_NODE_SELECTOR = (("nvidia.com/gpu.present", "true"),)
#: Default toleration: GPU nodes are commonly tainted ``nvidia.com/gpu:NoSchedule``.
DEFAULT_TOLERATIONS = (Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"),)


@dataclass(frozen=True)
class Cluster:
    """Where the stack runs: Kubernetes version, namespace and which nodes get GPU components."""

    kubernetes_version: str = key(
        "Kubernetes version",
        "Kubernetes minor version of the cluster, quoted (supported: "
        f"{SUPPORTED_KUBERNETES[0]} to {SUPPORTED_KUBERNETES[-1]}; the default is the newest"
        f" release the GPU Operator {GPU_OPERATOR} supports,"
        f" {GPU_OPERATOR_KUBERNETES[0]} to {GPU_OPERATOR_KUBERNETES[-1]}). A release past its"
        " upstream end of life gets a notice with the date (rule kubernetes-end-of-life).",
        default=DEFAULT_KUBERNETES,
        pattern=r"^1\.\d+$",
        examples=[DEFAULT_KUBERNETES],
    )
    end_of_life: Literal["notice", "error"] = key(
        "End-of-life Kubernetes",
        "What a kubernetesVersion past its upstream end of life (kubernetes.io release pages)"
        " gets: notice prints the date and passes (managed platforms support releases longer);"
        " error fails validation, for teams that run only supported releases.",
        default="notice",
        examples=["error"],
    )
    namespace: str = key(
        "Namespace",
        "Namespace for all GPU stack components.",
        default="gpustack-system",
        pattern=DNS_LABEL,
        max_length=63,
        examples=["gpu-operator"],
    )
    node_selector: Labels = key(
        "Node selector",
        "Labels that select the GPU nodes for the driver, toolkit and plugin. A selector of"
        " labels every node of a region, zone or pool carries, GPU or not (topology region and"
        " zone, kubernetes.io/os and arch, node roles, the cloud's OS image or capacity type,"
        ' NFD\'s OS, kernel and CPU labels) is completed with nvidia.com/gpu.present: "true",'
        " so the stack stays off CPU nodes; any other label (a node pool, an accelerator, a"
        " hostname, your own) is taken to pick GPU nodes and the selector is used as written."
        " {} selects every node.",
        default=DEFAULT_NODE_SELECTOR,
        examples=[{"nvidia.com/gpu.present": "true"}],
    )
    deploy_labels: Literal["optional", "required"] = key(
        "Deploy labels",
        "Per-component node labels nvidia.com/gpu.deploy.<component> (as the GPU Operator"
        " uses them): optional places a component unless its label is false (or paused by the"
        " driver manager); required places it only where the label is true. Either way"
        " nvidia.com/gpu.deploy.operands=false clears a node.",
        default="optional",
        examples=["required"],
    )
    tolerations: tuple[Toleration, ...] = key(
        "Tolerations",
        "Tolerations of the GPU stack pods (replaces the default list when given).",
        default=DEFAULT_TOLERATIONS,
    )
    node_taints: tuple[Taint, ...] = key(
        "GPU node taints",
        "Taints the GPU nodes carry (e.g. nvidia.com/gpu=present:NoSchedule on GKE and AKS GPU"
        " pools). gpustack lint demands that GPU workloads tolerate them; validate that the"
        " stack's own tolerations do. Empty: the GPU nodes are not tainted.",
        factory=tuple,
        examples=[[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]],
    )
    extended_resource_toleration: bool = key(
        "ExtendedResourceToleration admission",
        "The API server runs the ExtendedResourceToleration admission plugin (GKE and AKS do):"
        " every pod that requests an extended resource such as nvidia.com/gpu gets a"
        " NoSchedule toleration for a taint of the same key, so GPU workloads need not write"
        " one.",
        default=False,
        examples=[True],
    )
    platform: Platform | None = key(
        "Platform",
        "Where the cluster runs, where that changes what the API server admits. gke: GKE admits"
        " pods of the system-node-critical and system-cluster-critical priority classes outside"
        " kube-system only in a namespace with a ResourceQuota whose scope names those classes,"
        " so gpustack adds one (gpustack-critical-pods) to its namespace. Unset: gke where the"
        " profile names what only GKE has (a cloud.google.com/gke-* node label or taint, the"
        " toolkit or host driver under /home/kubernetes/bin/nvidia), else generic; generic"
        " with any of those is refused (rule gke-platform-stated).",
        default=None,
        examples=["gke"],
    )
    priority_class_name: str = key(
        "Priority class",
        "Priority class of the GPU stack pods.",
        default="system-node-critical",
        pattern=DNS_SUBDOMAIN,
        max_length=253,
        examples=["system-node-critical"],
    )
    image_pull_secrets: tuple[Annotated[str, item(pattern=DNS_SUBDOMAIN)], ...] = key(
        "Image pull secrets",
        "Names of existing Secrets used to pull the stack's images.",
        factory=tuple,
        examples=[["ngc-registry"]],
    )
    image_registry: str | None = key(
        "Image registry",
        "Registry (host[:port][/path]) that replaces the registry part of every image left at "
        "its default: NVIDIA's driver, toolkit, device plugin and day-2 operands (driver "
        "manager and its kubectl image, GPU feature discovery, MIG manager, DCGM exporter), "
        "Node Feature Discovery, gpustack's device plugin and the example jobs' image "
        "(nvcr.io/nvidia/driver becomes <registry>/nvidia/driver). "
        "For air-gapped clusters with a mirror; images set explicitly are used as written.",
        default=None,
        pattern=IMAGE,
        examples=["registry.example.com/mirror", "harbor.corp:5000/nvcr"],
    )
    runtime: Runtime = key(
        "Container runtime",
        "The nodes' container runtime; unset paths are derived from name and distribution.",
        factory=Runtime,
    )
    require_image_digests: bool = key(
        "Require image digests",
        "Every image gpustack renders must be pinned by digest (driver, toolkit and device"
        " plugin digest, example images as <image>@sha256:...): a supply-chain policy that"
        " validation enforces.",
        default=False,
        examples=[True],
    )
    kubelet_root_dir: str | None = key(
        "Kubelet root directory",
        "The kubelet's --root-dir on the GPU nodes; the device plugin registers in "
        "its device-plugins folder (derived from runtime.distribution when unset: "
        "/var/lib/kubelet, /var/lib/k0s/kubelet on k0s, "
        "/var/snap/microk8s/common/var/lib/kubelet on MicroK8s).",
        default=None,
        pattern=ABS_PATH,
        examples=["/var/lib/kubelet", "/var/lib/k0s/kubelet"],
    )

    def __post_init__(self) -> None:
        # Issue 31 item 2: a fleet overlay that selects a region alone put the GPU stack on that
        # region's CPU nodes; such a selector is narrowed to GPU nodes, as the default is.
        selector = self.node_selector
        if selector and all(platform_wide(k) for k, _ in selector):
            object.__setattr__(self, "node_selector", (*selector, *DEFAULT_NODE_SELECTOR))

    def resolved_kubelet_root_dir(self) -> str:
        """The kubelet's root directory on the nodes (its device plugin sockets live in
        ``<root>/device-plugins``): the profile's value, else the distribution's."""
        return self.kubelet_root_dir or KUBELET_ROOT_DIRS[self.runtime.distribution]
