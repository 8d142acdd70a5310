"""Which nodes a driver pod may run on: the OS the image was built for, the kernel of a
precompiled image, the RHCOS build of a Driver Toolkit, and one driver per node.

A driver image builds or carries modules for one OS release and kernel; on a node with another
it fails to build, or loads modules that do not fit. Node Feature Discovery labels each node with
what it runs, and the driver DaemonSets (:mod:`gpustack.constructs.driver`) select by those
labels here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from gpustack.constructs import k8s
from gpustack.kube.labels import HOSTNAME_LABEL
from gpustack.profile.model import DriverToolkit

#: Node Feature Discovery's labels for ``/etc/os-release`` ``ID`` and ``VERSION_ID``.
OS_ID_LABEL: Final = "feature.node.kubernetes.io/system-os_release.ID"
OS_VERSION_LABEL: Final = "feature.node.kubernetes.io/system-os_release.VERSION_ID"
#: Node Feature Discovery's label for the running kernel (``uname -r``).
KERNEL_LABEL: Final = "feature.node.kubernetes.io/kernel-version.full"
#: Node Feature Discovery's label for the RHCOS build (``/etc/os-release`` ``OSTREE_VERSION``).
OSTREE_LABEL: Final = "feature.node.kubernetes.io/system-os_release.OSTREE_VERSION"


def pinned(
    precompiled_kernel: str | None, build: DriverToolkit | None
) -> tuple[tuple[str, str], ...]:
    """NFD labels a node must carry this value of: the precompiled kernel, the RHCOS build of
    the DaemonSet's Driver Toolkit."""
    pins: list[tuple[str, str]] = []
    if precompiled_kernel:
        pins.append((KERNEL_LABEL, precompiled_kernel))
    if build is not None and build.rhcos_version:
        pins.append((OSTREE_LABEL, build.rhcos_version))
    return tuple(pins)


def os_affinity(
    os_release: tuple[str, str], pinned: tuple[tuple[str, str], ...] = ()
) -> k8s.NodeAffinity:
    """Keep the driver off nodes that Node Feature Discovery says run another OS.

    One image serves one OS release (``driver.osTag``); the GPU Operator picks the tag per node
    from these labels. gpustack's profile names one OS (a fleet's GPU nodes normally share an
    image): a node labelled with another OS is left without a driver pod rather than given one
    that cannot build, and a node without the labels (no NFD) is taken to run that OS.

    ``pinned`` labels (a precompiled kernel's ``kernel-version.full``, a Driver Toolkit's RHCOS
    ``OSTREE_VERSION``) are required by both terms: a node without the label gets no pod (as
    with the GPU Operator's nodeSelector), since modules built for another kernel do not load.
    """
    os_id, version = os_release
    required = [
        k8s.NodeSelectorRequirement(key=key, operator="In", values=[value]) for key, value in pinned
    ]
    match = k8s.NodeSelectorTerm(
        match_expressions=[
            k8s.NodeSelectorRequirement(key=OS_ID_LABEL, operator="In", values=[os_id]),
            k8s.NodeSelectorRequirement(key=OS_VERSION_LABEL, operator="In", values=[version]),
            *required,
        ]
    )
    unlabelled = k8s.NodeSelectorTerm(
        match_expressions=[
            k8s.NodeSelectorRequirement(key=OS_ID_LABEL, operator="DoesNotExist"),
            *required,
        ]
    )
    return k8s.NodeAffinity(
        required_during_scheduling_ignored_during_execution=k8s.NodeSelector(
            node_selector_terms=[match, unlabelled]
        )
    )


def one_per_node(selector: Mapping[str, str]) -> k8s.PodAntiAffinity:
    """No two driver pods on a node, whichever of the driver DaemonSets they belong to: two
    drivers would fight over the same kernel modules."""
    return k8s.PodAntiAffinity(
        required_during_scheduling_ignored_during_execution=[
            k8s.PodAffinityTerm(
                label_selector=k8s.LabelSelector(match_labels=dict(selector)),
                topology_key=HOSTNAME_LABEL,
            )
        ]
    )
