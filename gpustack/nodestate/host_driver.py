"""The node-state checks of the driver: a driver already on the host (an image that ships one,
GKE's installer, or one loaded without gpustack's pod) against ``driver.enabled``, its version
and where it lives against ``driver.version`` and ``driver.hostDriverRoot``."""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.nodes import Nodes, stack_pods
from gpustack.kube.state import JSON, labels, name
from gpustack.nodestate import facts
from gpustack.nodestate.mismatch import mismatch
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile

#: Where GKE's driver installer puts the driver on COS and Ubuntu node images.
GKE_DRIVER_ROOT = "/home/kubernetes/bin/nvidia"
#: GKE's node label for the driver version its installer puts on a GPU node pool.
GKE_DRIVER_LABEL = "cloud.google.com/gke-gpu-driver-version"


def _host_driver(p: Profile, n: Nodes, node: JSON) -> str | None:
    """Why the node has a driver that is not gpustack's, or ``None``."""
    image = facts.info(node, "osImage") or ""
    if image.startswith("Container-Optimized OS"):
        return "Container-Optimized OS, where only GKE's installer puts a driver"
    if image.startswith("Bottlerocket"):
        return f"{image}, whose NVIDIA variants ship the driver in the image"
    gke = labels(node).get(GKE_DRIVER_LABEL)
    if gke and gke != "disabled":
        return f"GKE installs a driver ({GKE_DRIVER_LABEL}={gke})"
    version = facts.driver_version(node)
    if facts.container_driver_seen(node):
        return None
    if version and not stack_pods(n.state, p, "driver", name(node)):
        return f"driver {version} is loaded and no gpustack driver pod runs there"
    return None


def host_driver_absent(p: Profile, n: Nodes) -> Iterator[Finding]:
    if not p.driver.enabled:
        return
    yield from mismatch(
        ("driver", "enabled"),
        n.selected,
        lambda node: _host_driver(p, n, node),
        lambda v: True,
        lambda v: f"a host driver ({v})",
        "driver.enabled is true: gpustack's driver container would be a second driver",
        "set driver.enabled: false (and driver.hostDriverRoot where the host keeps it), or"
        " remove the host's driver first",
    )


def driver_version_matches_host(p: Profile, n: Nodes) -> Iterator[Finding]:
    want = p.driver.version
    if p.driver.enabled:
        return
    yield from mismatch(
        ("driver", "version"),
        n.selected,
        facts.driver_version,
        lambda v: v != want,
        lambda v: f"driver {v} loaded",
        f"driver.version says the host driver is {want} (the CUDA and GPU rules check that)",
        "set driver.version to the hosts' (`nvidia-smi` or GFD's nvidia.com/cuda.driver-version"
        ".full)",
    )


def gke_host_driver_root(p: Profile, n: Nodes) -> Iterator[Finding]:
    if p.driver.enabled or p.driver.host_driver_root == GKE_DRIVER_ROOT:
        return
    yield from mismatch(
        ("driver", "hostDriverRoot"),
        n.selected,
        lambda node: (
            "GKE"
            if facts.cloud(node) == "GKE"
            and labels(node).get(GKE_DRIVER_LABEL, "default") != "disabled"
            else None
        ),
        lambda v: True,
        lambda v: f"GKE's driver under {GKE_DRIVER_ROOT}",
        f"driver.hostDriverRoot is {p.driver.host_driver_root}",
        f"set driver.hostDriverRoot: {GKE_DRIVER_ROOT} (where GKE's installer puts the driver)",
    )
