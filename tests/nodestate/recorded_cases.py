"""The node states recorded from the real control plane (tests/e2e/record_nodestate.py), and what
``gpustack validate --state`` must find on each (tests/nodestate/test_recorded.py).

Declared once here for both: the recorder makes each change on the live cluster's fake nodes (the
DaemonSet controller and the scheduler then move the stack's pods as they would), the test reads
the recorded file and expects exactly the one finding the change causes.

``MATCHING``: example profiles whose cluster folder is applied on nodes that are what the profile
says (its OS, kernel, runtime, kubelet, GPUs as GPU feature discovery labels them); each gives
no finding. ``CASES``: one change to such a cluster, as drift would make it.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path
from typing import Final

HERE: Final = Path(__file__).parent
RECORDED: Final = HERE / "fixtures" / "recorded"

#: One change to the nodes: (node, where, key, value). where: "label" (value None removes it),
#: "info" (``status.nodeInfo``, as the kubelet reports it), "taint" (``key=value:effect`` added).
Change = tuple[str, str, str, str | None]

NFD_OS: Final = "feature.node.kubernetes.io/system-os_release."
NFD_KERNEL: Final = "feature.node.kubernetes.io/kernel-version.full"
#: What GPU feature discovery writes about the loaded driver (k8s-device-plugin v0.20.0
#: internal/lm/nvml.go: ``cuda.driver.*`` and ``cuda.driver-version.*``).
DRIVER_LABELS: Final = (
    "nvidia.com/cuda.driver.major",
    "nvidia.com/cuda.driver.minor",
    "nvidia.com/cuda.driver.rev",
    "nvidia.com/cuda.driver-version.full",
    "nvidia.com/cuda.driver-version.major",
    "nvidia.com/cuda.driver-version.minor",
    "nvidia.com/cuda.driver-version.revision",
)


def no_driver(node: str) -> list[Change]:
    """GPU feature discovery reports no driver on ``node``: gpustack's driver pod left it (its
    affinity no longer matches) and the host has none."""
    return [(node, "label", key, None) for key in DRIVER_LABELS]


MATCHING: Final = (
    "a10-mps-inference",
    "a100-mig-mixed",
    "gke-host-driver",
    "h100-prod-east",
    "k0s-volume-mounts",
    "k3s-edge",
    "l4-inference-timeslicing",
    "l40s-argocd-rendered",
    "lab-1gpu",
    "microk8s-precompiled",
    "openshift-crio-hooks",
)


@dataclass(frozen=True)
class Case:
    """``profile``: an example profile (``profiles/<profile>.yaml``); ``key``: the dotted profile
    field the finding is at; ``says``: part of its message (the node and the value it has)."""

    name: str
    profile: str
    changes: tuple[Change, ...]
    rule: str
    key: str
    says: str

    @property
    def file(self) -> Path:
        return RECORDED / f"{self.profile}--{self.name}.json.gz"


def matching_file(profile: str) -> Path:
    return RECORDED / f"{profile}.json.gz"


def read(path: Path) -> str:
    """A recorded state's JSON text (the files are gzipped: ~150 kB each, mostly pod specs)."""
    return gzip.decompress(path.read_bytes()).decode()


CASES: Final = (
    Case(
        "kubelet-newer",
        "lab-1gpu",
        (("gpu-1", "info", "kubeletVersion", "v1.34.2"),),
        "kubernetes-version-matches-nodes",
        "cluster.kubernetesVersion",
        "gpu-1 has kubelet v1.34.2",
    ),
    Case(
        "kubelet-skew",
        "a10-mps-inference",
        (("gpu-1", "info", "kubeletVersion", "v1.30.9"),),
        "kubelet-version-skew",
        "cluster.kubernetesVersion",
        "gpu-1 has kubelet v1.30.9",
    ),
    Case(
        "os-release",
        "lab-1gpu",
        (
            ("gpu-1", "label", NFD_OS + "VERSION_ID", "22.04"),
            ("gpu-1", "info", "osImage", "Ubuntu 22.04.5 LTS"),
            *no_driver("gpu-1"),
        ),
        "os-matches-driver-image",
        "driver.osTag",
        "Ubuntu 22.04.5 LTS (driver image OS ubuntu22.04)",
    ),
    Case(
        "kernel",
        "microk8s-precompiled",
        (
            ("gpu-1", "label", NFD_KERNEL, "6.8.0-65-generic"),
            ("gpu-1", "info", "kernelVersion", "6.8.0-65-generic"),
            *no_driver("gpu-1"),
        ),
        "kernel-matches-precompiled",
        "driver.kernelVersion",
        "gpu-1 has kernel 6.8.0-65-generic",
    ),
    Case(
        "product",
        "l40s-argocd-rendered",
        (("gpu-1", "label", "nvidia.com/gpu.product", "NVIDIA-L40"),),
        "gpu-product-matches-nodes",
        "gpus.product",
        "NVIDIA-L40 (gpus.product L40)",
    ),
    Case(
        "count",
        "l4-inference-timeslicing",
        (("gpu-0", "label", "nvidia.com/gpu.count", "1"),),
        "gpu-count-matches-nodes",
        "gpus.perNode",
        "gpu-0 has 1 GPU",
    ),
    Case(
        "mig-capable",
        "a100-mig-mixed",
        (("gpu-1", "label", "nvidia.com/mig.capable", "false"),),
        "mig-capable-nodes",
        "gpus.mig",
        "gpu-1 is not MIG-capable",
    ),
    Case(
        "runtime",
        "openshift-crio-hooks",
        (("gpu-1", "info", "containerRuntimeVersion", "containerd://2.0.5"),),
        "runtime-matches-nodes",
        "cluster.runtime.name",
        "runtime containerd://2.0.5",
    ),
    Case(
        "runtime-version",
        "a10-mps-inference",
        (("gpu-1", "info", "containerRuntimeVersion", "containerd://1.7.27"),),
        "runtime-version-matches-nodes",
        "cluster.runtime.version",
        "runtime containerd://1.7.27",
    ),
    Case(
        "distribution",
        "microk8s-precompiled",
        (("gpu-0", "label", "microk8s.io/cluster", None),),
        "distribution-matches-nodes",
        "cluster.runtime.distribution",
        "gpu-0 has distribution generic",
    ),
    # The administrator marks a node whose image brings its own driver (the operator's value):
    # the driver DaemonSet leaves it, GFD reports the host's driver.
    Case(
        "host-driver",
        "lab-1gpu",
        (("gpu-1", "label", "nvidia.com/gpu.deploy.driver", "pre-installed"),),
        "host-driver-absent",
        "driver.enabled",
        "driver 595.91.07 is loaded and no gpustack driver pod",
    ),
    Case(
        "host-driver-version",
        "k3s-edge",
        (("gpu-1", "label", "nvidia.com/cuda.driver-version.full", "550.144.03"),),
        "driver-version-matches-host",
        "driver.version",
        "gpu-1 has driver 550.144.03 loaded",
    ),
    Case(
        "cloud",
        "k3s-edge",
        (("gpu-0", "label", "cloud.google.com/gke-nodepool", "t4-pool"),),
        "gke-host-driver-root",
        "driver.hostDriverRoot",
        "gpu-0 has GKE's driver",
    ),
    Case(
        "taint",
        "h100-prod-east",
        (("gpu-1", "taint", "dedicated=ml:NoSchedule", None),),
        "node-taints-declared",
        "cluster.nodeTaints",
        "gpu-1 has dedicated=ml:NoSchedule",
    ),
    # The CPU node carries the selector's label (copied from a GPU node's labels by hand).
    Case(
        "cpu-node-selected",
        "lab-1gpu",
        (("cpu-0", "label", "nvidia.com/gpu.present", "true"),),
        "selected-nodes-have-gpus",
        "cluster.nodeSelector",
        "picks node cpu-0, where NFD",
    ),
    # A GPU node in another region than the one the selector names.
    Case(
        "gpu-node-missed",
        "h100-prod-east",
        (("gpu-1", "label", "topology.kubernetes.io/region", "us-west-2"),),
        "gpu-nodes-selected",
        "cluster.nodeSelector",
        "GPU node gpu-1 is not picked",
    ),
)
