"""One fact about one node, read from its ``kubectl get -o json`` object.

Each reader returns ``None`` where the node does not say (no Node Feature Discovery or GPU
feature discovery labels yet, a field a recorded state leaves out): a check never guesses, it
skips the node. Sources, each as the component that writes it spells it:

- the kubelet's ``status.nodeInfo`` (``kubeletVersion``, ``kernelVersion``, ``osImage``,
  ``containerRuntimeVersion`` as ``<runtime>://<version>``) and ``spec.providerID``;
- Node Feature Discovery: ``feature.node.kubernetes.io/system-os_release.ID``/``VERSION_ID``,
  ``kernel-version.full``, ``pci-<class>_<vendor>.present`` (gpustack's NFD config labels
  ``pci-10de.present``; NFD's default config ``pci-0302_10de.present``);
- GPU feature discovery (k8s-device-plugin v0.20.0, internal/lm/): ``nvidia.com/gpu.product``,
  ``.count``, ``.family``, ``.compute.major``/``.minor``, ``nvidia.com/mig.capable`` and the
  driver's ``nvidia.com/cuda.driver.major``/``.minor``/``.rev`` (and ``cuda.driver-version.*``);
- managed clouds' node pool labels (GKE ``cloud.google.com/gke-nodepool``, EKS
  ``eks.amazonaws.com/nodegroup``, AKS ``kubernetes.azure.com/cluster``).
"""

from __future__ import annotations

import re

from gpustack.kube.labels import CONTROL_PLANE
from gpustack.kube.state import JSON, get, labels
from gpustack.profile import catalog

NFD = "feature.node.kubernetes.io/"
#: What an AICR snapshot knows that a Node object has no field for (:mod:`.aicr`).
SERVER_VERSION = "gpustack.dev/aicr-server-version"
CONTAINER_DRIVER = "gpustack.dev/aicr-driver-container"
#: Prefix of a systemd unit's state (``<ActiveState>/<UnitFileState>``), from the snapshot's
#: ``SystemD`` measurement: ``gpustack.dev/aicr-systemd.nvidia-imex.service: active/enabled``.
SYSTEMD_UNIT = "gpustack.dev/aicr-systemd."

_VERSION = re.compile(r"^v?(\d+)\.(\d+)")
_PCI = re.compile(
    r"^feature\.node\.kubernetes\.io/pci-(?:[0-9a-f]{4}_)?([0-9a-f]{4})(?:_[0-9a-f]{4})?\.present$"
)
NVIDIA_PCI_VENDOR = "10de"


def info(node: JSON, field: str) -> str | None:
    value = get(node, "status", "nodeInfo", field)
    return str(value) if value else None


def minor_of(version: str) -> tuple[int, int] | None:
    """``v1.33.4+k3s1`` -> ``(1, 33)``."""
    found = _VERSION.match(version)
    return (int(found.group(1)), int(found.group(2))) if found else None


def kubelet_minor(node: JSON) -> tuple[int, int] | None:
    return minor_of(info(node, "kubeletVersion") or "")


def _annotation(node: JSON, key: str) -> str | None:
    found = get(node, "metadata", "annotations")
    value = found.get(key) if isinstance(found, dict) else None
    return str(value) if value else None


def server_version(node: JSON) -> str | None:
    """The API server's version, where the state knows it (an AICR snapshot's ``K8s/server``)."""
    return _annotation(node, SERVER_VERSION)


def container_driver_seen(node: JSON) -> bool:
    """An AICR snapshot lists a ``driver`` image among the cluster's pods: the driver it saw
    loaded may be a driver container's."""
    return _annotation(node, CONTAINER_DRIVER) == "true"


def systemd_unit(node: JSON, unit: str) -> tuple[str, str] | None:
    """``(ActiveState, UnitFileState)`` of a host systemd unit (``UnitFileState`` empty where
    the unit has no file, as for a unit not installed), where the state records it; ``None``
    where it does not (a ``kubectl get`` state, a snapshot whose agent did not collect it)."""
    raw = _annotation(node, SYSTEMD_UNIT + unit)
    if raw is None:
        return None
    active, _, file_state = raw.partition("/")
    return active, file_state


def is_control_plane(node: JSON) -> bool:
    return CONTROL_PLANE in labels(node) or "node-role.kubernetes.io/master" in labels(node)


def runtime(node: JSON) -> tuple[str, str] | None:
    """``containerd://1.7.27-k3s1`` -> ``("containerd", "1.7.27-k3s1")``; CRI-O's ``cri-o``
    is the profile's ``crio``."""
    raw = info(node, "containerRuntimeVersion")
    if not raw or "://" not in raw:
        return None
    name, _, version = raw.partition("://")
    return ("crio" if name == "cri-o" else name), version


def version_parts(version: str) -> tuple[int, ...]:
    """The leading numbers of a version: ``1.7.27-k3s1`` -> ``(1, 7, 27)``."""
    found = re.match(r"^v?(\d+(?:\.\d+)*)", version)
    return tuple(int(p) for p in found.group(1).split(".")) if found else ()


def kernel(node: JSON) -> str | None:
    return info(node, "kernelVersion") or labels(node).get(f"{NFD}kernel-version.full")


def rhcos_build(node: JSON) -> str | None:
    """The node's RHCOS build, as NFD labels it from ``/etc/os-release`` ``OSTREE_VERSION``
    (``None`` where NFD has not labelled it, or the node runs another OS)."""
    return labels(node).get(f"{NFD}system-os_release.OSTREE_VERSION")


#: ``status.nodeInfo.osImage`` patterns -> (os_release ID, VERSION_ID) where NFD has not
#: labelled the node. RHCOS writes its OpenShift release as ``418.94...`` (4.18).
_OS_IMAGES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^Ubuntu (\d+\.\d+)"), "ubuntu"),
    (re.compile(r"^Red Hat Enterprise Linux CoreOS (\d)(\d+)\.\d+\."), "rhcos"),
    (re.compile(r"^Red Hat Enterprise Linux (?!CoreOS)\D*(\d+\.\d+)"), "rhel"),
    (re.compile(r"^Rocky Linux (\d+\.\d+)"), "rocky"),
    (re.compile(r"^Amazon Linux (\d+)"), "amzn"),
    (re.compile(r"^SUSE Linux Enterprise Server (\d+) SP(\d+)"), "sles"),
    (re.compile(r"^Container-Optimized OS"), "cos"),
    (re.compile(r"^Bottlerocket OS"), "bottlerocket"),
)


def os_release(node: JSON) -> tuple[str, str] | None:
    """The node's OS as ``(ID, VERSION_ID)`` of its os-release: NFD's labels, else read from
    the kubelet's ``osImage``."""
    own = labels(node)
    os_id = own.get(f"{NFD}system-os_release.ID")
    if os_id:
        return os_id, own.get(f"{NFD}system-os_release.VERSION_ID", "")
    image = info(node, "osImage") or ""
    for pattern, name in _OS_IMAGES:
        found = pattern.match(image)
        if found:
            return name, ".".join(found.groups())
    return None


def os_tag(node: JSON) -> str | None:
    """The driver image OS suffix this node needs (``ubuntu22.04``, ``rhel9.6``, ``rhcos4.18``),
    as NVIDIA tags ``nvcr.io/nvidia/driver`` images: os-release ID and VERSION_ID."""
    found = os_release(node)
    return f"{found[0]}{found[1]}" if found else None


def os_shown(node: JSON) -> str:
    return info(node, "osImage") or (os_tag(node) or "an unknown OS")


def product_label(node: JSON) -> str | None:
    return labels(node).get("nvidia.com/gpu.product")


def product(node: JSON) -> str | None:
    """The catalog product GPU feature discovery found on the node (``None``: no label, or a
    name the catalog does not know; :func:`product_label` has the raw name)."""
    raw = product_label(node)
    return catalog.product_from_name(raw) if raw else None


def architecture(node: JSON) -> str | None:
    """GFD's ``gpu.family`` (``ada-lovelace`` is the catalog's ``ada``), else its compute
    capability as GFD maps it to a family, else the known product's."""
    own = labels(node)
    family = own.get("nvidia.com/gpu.family")
    if family in catalog.GFD_FAMILIES:
        return catalog.GFD_FAMILIES[family]
    major, minor = own.get("nvidia.com/gpu.compute.major"), own.get("nvidia.com/gpu.compute.minor")
    if not major or not major.isdigit():
        known = product(node)
        return catalog.PRODUCTS[known].architecture if known else None
    low = int(minor) if minor and minor.isdigit() else 0
    by_major = {
        3: "kepler",
        5: "maxwell",
        6: "pascal",
        9: "hopper",
        10: "blackwell",
        12: "blackwell",
    }
    if int(major) == 7:
        return "volta" if low < 5 else "turing"
    if int(major) == 8:
        return "ampere" if low < 9 else "ada"
    return by_major.get(int(major))


def gpu_count(node: JSON) -> int | None:
    raw = labels(node).get("nvidia.com/gpu.count")
    return int(raw) if raw and raw.isdigit() else None


def mig_capable(node: JSON) -> bool | None:
    raw = labels(node).get("nvidia.com/mig.capable")
    return None if raw is None else raw == "true"


def driver_version(node: JSON) -> str | None:
    """The loaded NVIDIA driver GFD reports (``580.105.08``), from either label family."""
    own = labels(node)
    full = own.get("nvidia.com/cuda.driver-version.full")
    if full:
        return full
    parts = [own.get(f"nvidia.com/cuda.driver.{p}") for p in ("major", "minor", "rev")]
    if not parts[0]:
        return None
    return ".".join(p for p in parts if p)


#: Managed clouds: (name, a label every node of theirs carries, providerID scheme).
MANAGED_CLOUDS = (
    ("GKE", "cloud.google.com/gke-nodepool", "gce"),
    ("EKS", "eks.amazonaws.com/nodegroup", "aws"),
    ("AKS", "kubernetes.azure.com/cluster", "azure"),
)


def cloud(node: JSON) -> str | None:
    """``GKE``/``EKS``/``AKS`` for a managed node pool (by its labels), else the providerID's
    scheme (``gce``, ``aws``, ``azure``, ``oci``...), else ``None``."""
    own = labels(node)
    for name, label, _scheme in MANAGED_CLOUDS:
        if label in own:
            return name
    provider = str(get(node, "spec", "providerID") or "")
    return provider.partition("://")[0] or None if "://" in provider else None


def distribution(node: JSON) -> str:
    """The Kubernetes distribution the kubelet says it belongs to: k3s, RKE2 and k0s mark their
    kubelet version (``v1.33.4+k3s1``, ``+rke2r1``, ``+k0s``), MicroK8s labels its nodes
    ``microk8s.io/cluster``, OpenShift ``node.openshift.io/os_id``; anything else is generic."""
    version = info(node, "kubeletVersion") or ""
    for mark, name in (("+k3s", "k3s"), ("+rke2", "rke2"), ("+k0s", "k0s")):
        if mark in version:
            return name
    own = labels(node)
    if "microk8s.io/cluster" in own:
        return "microk8s"
    if "node.openshift.io/os_id" in own:
        return "openshift"
    return "generic"


def nvidia_pci(node: JSON) -> bool | None:
    """Whether Node Feature Discovery found an NVIDIA PCI device (``True``/``False``), or
    ``None`` where NFD has labelled no PCI device at all (it has not run there)."""
    seen = False
    for key, value in labels(node).items():
        found = _PCI.match(key)
        if found:
            seen = True
            if found.group(1) == NVIDIA_PCI_VENDOR and value == "true":
                return True
    return False if seen else None


#: Labels that say a node has NVIDIA GPUs without NFD: GFD's, and the clouds' accelerator labels.
GPU_NODE_LABELS = (
    "nvidia.com/gpu.count",
    "nvidia.com/gpu.product",
    "cloud.google.com/gke-accelerator",
    "k8s.amazonaws.com/accelerator",
    "kubernetes.azure.com/accelerator",
)


def has_nvidia_gpu(node: JSON) -> bool | None:
    """Whether the node has an NVIDIA GPU: NFD's PCI labels, GFD's or a cloud's accelerator
    labels, or ``nvidia.com/gpu`` capacity; ``None`` when nothing on the node tells."""
    if nvidia_pci(node):
        return True
    own = labels(node)
    if any(k in own for k in GPU_NODE_LABELS):
        return True
    capacity = get(node, "status", "capacity") or {}
    if isinstance(capacity, dict) and any(str(k).startswith("nvidia.com/") for k in capacity):
        return True
    return nvidia_pci(node)


def taints(node: JSON) -> list[tuple[str, str, str]]:
    """The node's ``(key, value, effect)`` taints that keep pods off it."""
    out = []
    for t in get(node, "spec", "taints") or ():
        if isinstance(t, dict) and t.get("effect") in ("NoSchedule", "NoExecute"):
            out.append((str(t.get("key", "")), str(t.get("value") or ""), str(t["effect"])))
    return out
