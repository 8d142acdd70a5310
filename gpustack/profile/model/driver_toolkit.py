"""``driver.driverToolkit``: on OpenShift, the Driver Toolkit image of each RHCOS build the GPU
nodes run, which the driver pod builds its kernel modules with.

Why apart from :mod:`gpustack.profile.model.driver`: only OpenShift profiles set it, and what it
declares (a build and its image, one driver DaemonSet per build) concerns no other platform.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpustack.fields import key
from gpustack.profile.model.common import IMAGE_REF

#: An RHCOS build as Node Feature Discovery labels it (``OSTREE_VERSION``).
RHCOS_BUILD = r"^[0-9][0-9.]*-[0-9]+$"


@dataclass(frozen=True)
class DriverToolkitBuild:
    """One more RHCOS build the GPU nodes may run, with the Driver Toolkit image of its release.

    Why a list: the Driver Toolkit image carries one RHCOS build's kernel packages, so the
    driver pod of a build runs only on nodes of that build. During a cluster update the nodes
    move from one build to the next one by one; the GPU Operator renders one driver DaemonSet per
    ``OSTREE_VERSION`` it finds on the nodes, named after the build, pinned to it, with that
    build's image (``ocpDriverToolkitDaemonSets`` and ``transformOpenShiftDriverToolkitContainer``,
    ``controllers/object_controls.go``, v26.7.0). gpustack renders one per build the profile
    names, so listing the next build before the update keeps every GPU node's driver."""

    rhcos_version: str = key(
        "RHCOS version",
        "The build, as Node Feature Discovery labels it"
        " (feature.node.kubernetes.io/system-os_release.OSTREE_VERSION).",
        pattern=RHCOS_BUILD,
        examples=["418.94.202502101302-0"],
    )
    image: str = key(
        "Image",
        "The Driver Toolkit image of that build's OpenShift release, by digest.",
        pattern=IMAGE_REF,
        examples=["quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + "1" * 64],
    )


@dataclass(frozen=True)
class DriverToolkit:
    """OpenShift's Driver Toolkit: on RHCOS the driver container cannot install kernel headers, so
    it builds the modules in a side-car running the Driver Toolkit image of the nodes' OpenShift
    release, which carries the matching kernel packages (as the GPU Operator does:
    ``transformOpenShiftDriverToolkitContainer``, ``golden/driver-openshift-drivertoolkit.yaml``,
    v26.7.0). The operator looks both values up in the cluster; gpustack takes them from the
    profile, so an OpenShift upgrade is a profile change like a driver bump."""

    image: str | None = key(
        "Image",
        "The Driver Toolkit image of the nodes' OpenShift release, by digest"
        " (`oc adm release info --image-for=driver-toolkit`).",
        default=None,
        pattern=IMAGE_REF,
        examples=["quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + "0" * 64],
    )
    rhcos_version: str | None = key(
        "RHCOS version",
        "The nodes' RHCOS build, as Node Feature Discovery labels it"
        " (feature.node.kubernetes.io/system-os_release.OSTREE_VERSION); the driver runs only"
        " there.",
        default=None,
        pattern=RHCOS_BUILD,
        examples=["418.94.202501221327-0"],
    )
    openshift_version: str | None = key(
        "OpenShift version",
        "The cluster's OpenShift minor release (the driver container's OPENSHIFT_VERSION).",
        default=None,
        pattern=r"^4\.\d+$",
        examples=["4.18"],
    )
    builds: tuple[DriverToolkitBuild, ...] = key(
        "Further RHCOS builds",
        "More RHCOS builds the GPU nodes run, each with its Driver Toolkit image (nodes of the"
        " old and the new build during a cluster update): one more driver DaemonSet per build,"
        " nvidia-driver-daemonset-<build> (dots as hyphens), pinned to it, as the GPU Operator"
        " renders one per build it finds. gpustack validate --state names GPU nodes on a build"
        " the profile lacks.",
        factory=tuple,
        examples=[
            [
                {
                    "rhcosVersion": "418.94.202502101302-0",
                    "image": "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:" + "1" * 64,
                }
            ]
        ],
    )

    def all_builds(self) -> tuple[tuple[str, str], ...]:
        """(RHCOS build, Driver Toolkit image) of every build the profile names, the first
        (``rhcosVersion``, ``image``) first; empty while those two are unset."""
        if self.rhcos_version is None or self.image is None:
            return ()
        return ((self.rhcos_version, self.image),) + tuple(
            (b.rhcos_version, b.image) for b in self.builds
        )
