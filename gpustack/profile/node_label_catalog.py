"""Node labels that something in a GPU cluster sets: who sets each, and which values it writes.

Why: ``cluster.nodeSelector`` decides where every DaemonSet of the stack runs. A one-character
typo in a key (``nvidia.com/gpu.presnt``) or a value (``"ture"``) is a valid label selector, so
the schema passes it, and the stack silently lands on zero nodes. Checking each key against the
labels the cluster's labellers really write turns that into a line at the profile's position,
with the spelling that was probably meant.

Sources, each read from the labeller's code or documentation at the version gpustack pins:

- GPU feature discovery (NVIDIA k8s-device-plugin v0.20.0, ``internal/lm/*.go``): the
  ``nvidia.com/gpu.*``, ``nvidia.com/cuda.*``, ``nvidia.com/mig.*``, per-MIG-profile
  ``nvidia.com/mig-<profile>.*``, ``nvidia.com/mps.capable``, ``nvidia.com/vgpu.*`` and
  ``nvidia.com/gpu.clique`` (``imex.go``) labels; ``mig.capable`` is ``true``/``false``.
- gpustack's GPU node rule (an NFD rule): ``nvidia.com/gpu.present=true``.
- Node Feature Discovery v0.19.0 (``docs/usage/features.md``): ``feature.node.kubernetes.io/``
  followed by ``cpu-*``, ``kernel-*``, ``memory-*``, ``network-*``, ``pci-<device>.present``,
  ``usb-<device>.present``, ``storage-nonrotationaldisk``, ``system-os_release.*`` and the
  ``custom-*`` rules; boolean features are written only when true.
- The GPU Operator's and gpustack's deploy labels (``nvidia.com/gpu.deploy.<component>``) and
  the MIG manager's ``nvidia.com/mig.config`` / ``.state``: set by administrators and managers.
- The kubelet's well-known labels (``kubernetes.io/*``, ``node.kubernetes.io/instance-type``,
  ``topology.kubernetes.io/*``, ``node-role.kubernetes.io/*``) and the managed clouds' node
  pool labels (GKE ``cloud.google.com/*``, EKS ``eks.amazonaws.com/*`` and Karpenter, AKS
  ``kubernetes.azure.com/*``, OpenShift ``node.openshift.io/*``).
- The labels NVIDIA's platform guides tell administrators to put on nodes or node pools
  (NVIDIA/cloud-native-docs): GKE's ``gke-no-default-nvidia-gpu-device-plugin``, the
  NVIDIADriver selectors ``driver.version`` / ``driver.config`` / ``driver.precompiled``, the vGPU,
  confidential computing and driver upgrade labels; each entry of :data:`GUIDED` names the page
  that says so (issue #32: these were refused as unknown).

Pure data and regular expressions: the validation rules read it, nothing here imports cdk8s.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Final

GFD: Final = "GPU feature discovery"
GPU_NODE_RULE: Final = "gpustack's GPU node rule"
NFD: Final = "Node Feature Discovery"
MANAGERS: Final = "the deploy labels of gpustack and the GPU Operator"
KUBELET: Final = "the kubelet"
CLOUD: Final = "the cloud provider"
ADMIN: Final = "administrators, as NVIDIA's platform guides say"
VGPU_MANAGER: Final = "NVIDIA's vGPU device manager"
CC_MANAGER: Final = "NVIDIA's confidential computing manager"
UPGRADE: Final = "the GPU Operator's driver upgrade controller"

#: Labellers that are pods of gpustack's own stack and nothing else: a label of theirs in the
#: stack's node selector is there only if one of those pods reached the node first
#: (:meth:`gpustack.profile.graph.Graph.self_placed`).
STACK_ONLY: Final = frozenset({GFD, GPU_NODE_RULE})

TRUE: Final = ("true",)
BOOLEAN: Final = ("true", "false")


@dataclass(frozen=True)
class KnownLabel:
    """One label (or family of labels) that a labeller writes on nodes.

    - ``pattern``: matches the whole key.
    - ``spelling``: one concrete key of the family, offered as "did you mean".
    - ``source``: who writes it.
    - ``values``: the only values it is ever written with (``None``: any value).
    """

    pattern: re.Pattern[str]
    spelling: str
    source: str
    values: tuple[str, ...] | None = None
    #: The upstream page that tells users to set it (NVIDIA/cloud-native-docs), where one does.
    reference: str = ""


def _label(
    regex: str, spelling: str, source: str, values: tuple[str, ...] | None = None
) -> KnownLabel:
    return KnownLabel(re.compile(regex), spelling, source, values)


def _exact(key: str, source: str, values: tuple[str, ...] | None = None) -> KnownLabel:
    return _label(re.escape(key), key, source, values)


_GFD_GPU = (
    "product", "count", "replicas", "sharing-strategy", "memory", "family", "compute.major",
    "compute.minor", "machine", "mode", "multiprocessors", "slices.gi", "slices.ci",
    "engines.copy", "engines.decoder", "engines.encoder", "engines.jpeg", "engines.ofa", "clique",
)  # fmt: skip
_GFD_CUDA = (
    "driver.major", "driver.minor", "driver.rev", "runtime.major", "runtime.minor",
    "driver-version.full", "driver-version.major", "driver-version.minor",
    "driver-version.revision", "runtime-version.full", "runtime-version.major",
    "runtime-version.minor",
)  # fmt: skip
_MIG_PROFILE = r"[0-9]+c?\.?[0-9]*g\.[0-9]+gb(\+[a-z]+)*"
_NFD = r"feature\.node\.kubernetes\.io/"


def _guided(
    key: str, source: str, reference: str, values: tuple[str, ...] | None = None
) -> KnownLabel:
    return KnownLabel(re.compile(re.escape(key)), key, source, values, reference)


#: The pages, read at NVIDIA/cloud-native-docs commit 52dcb7b8.
_DOCS = "NVIDIA/cloud-native-docs "
#: The node labels NVIDIA's platform guides tell users to set (or show their managers setting).
GUIDED: Final[tuple[KnownLabel, ...]] = (
    # "--node-labels=gke-no-default-nvidia-gpu-device-plugin=true" on the GPU node pool: GKE's
    # own device plugin daemon set then stays off those nodes
    _guided(
        "gke-no-default-nvidia-gpu-device-plugin",
        ADMIN,
        _DOCS + "gpu-operator/google-gke.rst",
        TRUE,
    ),
    # node selectors of NVIDIADriver resources: nodes labelled by driver version, config, type
    *(
        _guided(f"driver.{what}", ADMIN, _DOCS + "gpu-operator/gpu-driver-configuration.rst")
        for what in ("version", "config", "precompiled")
    ),
    _guided("nvidia.com/vgpu.config", ADMIN, _DOCS + "gpu-operator/gpu-operator-kubevirt.rst"),
    _guided(
        "nvidia.com/vgpu.config.state",
        VGPU_MANAGER,
        _DOCS + "gpu-operator/gpu-operator-kubevirt.rst",
    ),
    _guided("nvidia.com/cc.mode", ADMIN, _DOCS + "confidential-containers/configure-cc-mode.rst"),
    _guided(
        "nvidia.com/cc.mode.state",
        CC_MANAGER,
        _DOCS + "confidential-containers/configure-cc-mode.rst",
    ),
    _guided(
        "nvidia.com/cc.ready.state",
        CC_MANAGER,
        _DOCS + "confidential-containers/configure-cc-mode.rst",
        BOOLEAN,
    ),
    _guided(
        "nvidia.com/gpu-driver-upgrade-state",
        UPGRADE,
        _DOCS + "gpu-operator/gpu-driver-upgrades.rst",
    ),
)

#: Every label family gpustack knows a labeller for, most specific first.
KNOWN: Final[tuple[KnownLabel, ...]] = (
    _exact("nvidia.com/gpu.present", GPU_NODE_RULE, TRUE),
    *(_exact(f"nvidia.com/gpu.{suffix}", GFD) for suffix in _GFD_GPU),
    *(_exact(f"nvidia.com/cuda.{suffix}", GFD) for suffix in _GFD_CUDA),
    _exact("nvidia.com/gfd.timestamp", GFD),
    _exact("nvidia.com/mig.capable", GFD, BOOLEAN),
    _exact("nvidia.com/mig.strategy", GFD, ("none", "single", "mixed")),
    _exact("nvidia.com/mps.capable", GFD, BOOLEAN),
    _exact("nvidia.com/vgpu.present", GFD, BOOLEAN),
    _exact("nvidia.com/vgpu.host-driver-version", GFD),
    _exact("nvidia.com/vgpu.host-driver-branch", GFD),
    _label(
        rf"nvidia\.com/mig-{_MIG_PROFILE}\.(count|replicas|sharing-strategy|memory|product"
        r"|multiprocessors|slices\.gi|slices\.ci|engines\.[a-z]+)",
        "nvidia.com/mig-1g.10gb.count",
        GFD,
    ),
    _label(r"nvidia\.com/gpu\.deploy\.[a-z0-9-]+", "nvidia.com/gpu.deploy.operands", MANAGERS),
    _exact("nvidia.com/gpu.workload.config", MANAGERS),
    _exact("nvidia.com/mig.config", MANAGERS),
    _exact("nvidia.com/mig.config.state", MANAGERS),
    _exact("nvidia.com/device-plugin.config", MANAGERS),
    _label(
        _NFD + r"pci-[0-9a-f]{4}(_[0-9a-f]{4}){0,2}\.(present|sriov\.capable)",
        "feature.node.kubernetes.io/pci-10de.present",
        NFD,
        TRUE,
    ),
    _label(
        _NFD + r"usb-[0-9a-f]{2}(_[0-9a-f]{4}){0,2}\.present",
        "feature.node.kubernetes.io/usb-ff_0403.present",
        NFD,
        TRUE,
    ),
    *(
        _exact(f"feature.node.kubernetes.io/kernel-version.{part}", NFD)
        for part in ("full", "major", "minor", "revision")
    ),
    _label(
        _NFD + r"kernel-config\.[A-Z0-9_]+", "feature.node.kubernetes.io/kernel-config.NO_HZ", NFD
    ),
    _exact("feature.node.kubernetes.io/kernel-selinux.enabled", NFD, TRUE),
    *(
        _exact(f"feature.node.kubernetes.io/system-os_release.{part}", NFD)
        for part in ("ID", "VERSION_ID", "VERSION_ID.major", "VERSION_ID.minor")
    ),
    *(
        _exact(f"feature.node.kubernetes.io/{name}", NFD, TRUE)
        for name in (
            "memory-numa",
            "memory-nv.present",
            "memory-nv.dax",
            "memory-swap.enabled",
            "network-sriov.capable",
            "network-sriov.configured",
            "storage-nonrotationaldisk",
            "cpu-hardware_multithreading",
            "custom-rdma.capable",
            "custom-rdma.enabled",
        )
    ),
    _label(
        _NFD + r"cpu-[a-z_]+(\.[A-Za-z0-9_]+)+",
        "feature.node.kubernetes.io/cpu-model.vendor_id",
        NFD,
    ),
    _label(
        _NFD + r"custom-[A-Za-z0-9_.-]+", "feature.node.kubernetes.io/custom-rdma.available", NFD
    ),
    _exact("kubernetes.io/hostname", KUBELET),
    _exact("kubernetes.io/os", KUBELET, ("linux", "windows")),
    _exact("kubernetes.io/arch", KUBELET, ("amd64", "arm64", "ppc64le", "s390x")),
    _exact("node.kubernetes.io/instance-type", KUBELET),
    _exact("topology.kubernetes.io/region", KUBELET),
    _exact("topology.kubernetes.io/zone", KUBELET),
    _label(r"node-role\.kubernetes\.io/[A-Za-z0-9_.-]+", "node-role.kubernetes.io/worker", KUBELET),
    _label(r"cloud\.google\.com/[a-z0-9-]+", "cloud.google.com/gke-accelerator", CLOUD),
    _label(r"eks\.amazonaws\.com/[A-Za-z0-9-]+", "eks.amazonaws.com/nodegroup", CLOUD),
    _exact("k8s.amazonaws.com/accelerator", CLOUD),
    _label(r"karpenter\.(sh|k8s\.aws)/[a-z0-9-]+", "karpenter.k8s.aws/instance-gpu-name", CLOUD),
    _label(r"kubernetes\.azure\.com/[a-z0-9-]+", "kubernetes.azure.com/agentpool", CLOUD),
    _exact("agentpool", CLOUD),
    _label(r"node\.openshift\.io/[a-z_]+", "node.openshift.io/os_id", CLOUD),
    *GUIDED,
)

#: Domains whose every label gpustack knows (a key there that matches nothing is a typo).
OWNED_DOMAINS: Final = (
    "nvidia.com/",
    "feature.node.kubernetes.io/",
    "kubernetes.io/",
    "node.kubernetes.io/",
    "topology.kubernetes.io/",
)


#: Labels every node of a pool, a zone or a region carries, GPU or not: the kubelet's OS,
#: architecture, role and topology labels, the managed clouds' labels for a node's OS image,
#: capacity type or pool mode, and NFD's labels for the OS, the kernel and the CPU. A node
#: selector of these alone selects CPU nodes too (issue 31, item 2); a hostname, an instance
#: type, a node pool's name, an accelerator label or a label gpustack does not know may narrow it
#: to GPU nodes, so they are not here.
PLATFORM_WIDE: Final[tuple[re.Pattern[str], ...]] = tuple(
    re.compile(regex)
    for regex in (
        r"kubernetes\.io/(os|arch)",
        r"topology\.kubernetes\.io/(region|zone)",
        r"failure-domain\.beta\.kubernetes\.io/(region|zone)",
        r"node-role\.kubernetes\.io/[A-Za-z0-9_.-]+",
        r"cloud\.google\.com/gke-(os-distribution|spot|preemptible|provisioning|boot-disk"
        r"|logging-variant|max-pods-per-node|netd-ready|container-runtime|cpu-scaling-level)",
        r"eks\.amazonaws\.com/capacityType",
        r"karpenter\.sh/capacity-type",
        r"kubernetes\.azure\.com/(mode|os-sku|cluster|role|node-image-version)",
        r"node\.openshift\.io/os_id",
        _NFD + r"(system-os_release|kernel-version|cpu-[a-z_]+)\.[A-Za-z0-9_.]+",
    )
)


def platform_wide(key: str) -> bool:
    """Whether every node of a pool, zone or region carries node label ``key``, GPU or not."""
    return any(p.fullmatch(key) for p in PLATFORM_WIDE)


def lookup(key: str) -> KnownLabel | None:
    """The labeller that writes node label ``key``, or ``None`` when gpustack knows none."""
    for known in KNOWN:
        if known.pattern.fullmatch(key):
            return known
    return None


def suggest(key: str) -> str | None:
    """The known spelling closest to ``key``, if one is close enough to be a typo of it."""
    spellings = [k.spelling for k in KNOWN]
    close = difflib.get_close_matches(key, spellings, n=1, cutoff=0.8)
    return close[0] if close else None


def suggest_value(value: str, values: tuple[str, ...]) -> str | None:
    """The allowed value closest to ``value`` (``ture`` -> ``true``)."""
    close = difflib.get_close_matches(value.lower(), values, n=1, cutoff=0.5)
    return close[0] if close else None
