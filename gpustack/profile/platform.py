"""Which platform a profile is for, from what it says and from what only that platform has.

Why: GKE admits pods of the ``system-node-critical`` and ``system-cluster-critical`` priority
classes outside ``kube-system`` only in a namespace whose ResourceQuota names those classes, so a
stack for GKE without that quota stays at ``desired=1 current=0`` on every node. A profile that
selects ``cloud.google.com/gke-accelerator`` or installs the toolkit into GKE's driver folder is
for GKE whatever ``cluster.platform`` says (issue 31, item 1): those labels are written only by
GKE's node pools, and ``/home/kubernetes/bin/nvidia`` is where GKE's driver installer puts the
driver (NVIDIA's GKE guide, cloud-native-docs ``gpu-operator/google-gke.rst``). With
``cluster.platform`` unset, such a profile is for GKE (and gets the quota); with it set to
``generic``, the profile contradicts itself and the rule ``gke-platform-stated`` refuses it at
the line of the signal.

Pure data over the typed profile: nothing here imports cdk8s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from gpustack.profile.document import JsonPath
from gpustack.profile.model import Profile

#: Where GKE's driver installer puts the driver, and where the toolkit installs on GKE.
GKE_DRIVER_FOLDER: Final = "/home/kubernetes/bin/nvidia"
#: The prefix of the node labels and taints GKE's node pools carry (``gke-accelerator``,
#: ``gke-nodepool``, ``gke-os-distribution``, ``gke-spot``...): written by nothing but GKE.
GKE_LABEL_PREFIX: Final = "cloud.google.com/gke-"


@dataclass(frozen=True)
class Signal:
    """One place in a profile that only makes sense on a platform: its JSON path, whether it
    points at a key (a label or taint key) rather than a value, and what it is."""

    path: JsonPath
    what: str
    at_key: bool = False


def gke_signals(p: Profile) -> tuple[Signal, ...]:
    """Every place where ``p`` names something only GKE has, in the order of the profile."""
    found: list[Signal] = []
    c = p.cluster
    for section, selector in (("cluster", c.node_selector), ("dra", p.dra.node_selector)):
        for key, _ in selector:
            if key.startswith(GKE_LABEL_PREFIX):
                found.append(
                    Signal(
                        (section, "nodeSelector", key),
                        f"the node label {key} is written only by GKE's node pools",
                        at_key=True,
                    )
                )
    taint_keys = (
        ("tolerations", [t.key for t in c.tolerations]),
        ("nodeTaints", [t.key for t in c.node_taints]),
    )
    for field, keys in taint_keys:
        for i, taint in enumerate(keys):
            if taint and taint.startswith(GKE_LABEL_PREFIX):
                found.append(Signal(("cluster", field, i, "key"), f"the taint {taint} is GKE's"))
    if p.toolkit.install_dir.rstrip("/") == GKE_DRIVER_FOLDER:
        found.append(
            Signal(
                ("toolkit", "installDir"),
                f"{GKE_DRIVER_FOLDER} is the writable folder of GKE's node images",
            )
        )
    if not p.driver.enabled and p.driver.host_driver_root.rstrip("/") == GKE_DRIVER_FOLDER:
        found.append(
            Signal(
                ("driver", "hostDriverRoot"),
                f"{GKE_DRIVER_FOLDER} is where GKE's driver installer puts the driver",
            )
        )
    return tuple(found)


def platform(p: Profile) -> str:
    """The platform the profile is for: ``cluster.platform`` where it is written, else ``gke``
    where the profile names something only GKE has, else ``generic``."""
    if p.cluster.platform is not None:
        return p.cluster.platform
    return "gke" if gke_signals(p) else "generic"
