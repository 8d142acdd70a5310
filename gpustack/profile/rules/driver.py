"""Rules on ``driver``: how it is installed, and whether it drives the profile's GPUs.

Which driver a GPU needs (and which it outlived) comes from :mod:`gpustack.profile.catalog`.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.profile import catalog
from gpustack.profile.catalog import parse_driver
from gpustack.profile.derive import architecture_of
from gpustack.profile.finding import Finding
from gpustack.profile.model import DRIVER_OS_PATHS, Profile
from gpustack.profile.rules.common import gpu_minimum


def precompiled_needs_kernel(p: Profile) -> Iterator[Finding]:
    if p.driver.enabled and p.driver.use_precompiled and not p.driver.kernel_version:
        yield Finding(
            ("driver", "usePrecompiled"),
            "precompiled driver images are tagged by kernel, but driver.kernelVersion is unset",
            "set driver.kernelVersion, e.g. 6.8.0-60-generic",
        )


def rhcos_driver_needs_openshift(p: Profile) -> Iterator[Finding]:
    # RHCOS is OpenShift's node OS: its /usr is read-only and CRI-O reads OCI hooks from
    # /run/containers/oci/hooks.d, which only distribution: openshift configures; the GPU
    # Operator builds the driver there with the Driver Toolkit side-car
    # (assets/state-driver/0500_daemonset.yaml, transformOpenShiftDriverToolkitContainer,
    # v26.7.0). Elsewhere gpustack would write the hook under /usr.
    d = p.driver
    if d.enabled and d.os_family == "rhcos" and p.cluster.runtime.distribution != "openshift":
        yield Finding(
            ("driver", "osTag"),
            f"driver.osTag {d.os_tag} is Red Hat CoreOS, OpenShift's node OS, but"
            f" cluster.runtime.distribution is {p.cluster.runtime.distribution}",
            "set cluster.runtime.distribution: openshift, or the osTag of the nodes' OS"
            " (e.g. rhel9.4, ubuntu24.04)",
        )


def host_driver_root_needs_host_driver(p: Profile) -> Iterator[Finding]:
    d = p.driver
    if d.enabled and d.host_driver_root != "/":
        yield Finding(
            ("driver", "hostDriverRoot"),
            "hostDriverRoot is where a preinstalled driver lives, but gpustack installs the"
            " driver (driver.enabled: true), which lives under /run/nvidia/driver",
            "remove driver.hostDriverRoot, or set driver.enabled: false",
        )


def driver_config_maps_known_os(p: Profile) -> Iterator[Finding]:
    # Repository and certificate ConfigMaps go where the driver image's OS reads them; for an
    # OS gpustack does not know that place, and they only matter to gpustack's driver pod.
    d = p.driver
    for key, value, what in (
        ("repoConfigMap", d.repo_config_map, "package repository files"),
        ("certConfigMap", d.cert_config_map, "CA certificates"),
    ):
        if value is None:
            continue
        if not d.enabled:
            yield Finding(
                ("driver", key),
                "the driver is preinstalled on the host (driver.enabled: false), so no driver"
                " container would use this ConfigMap",
                f"remove driver.{key}",
            )
        elif d.os_family not in DRIVER_OS_PATHS:
            yield Finding(
                ("driver", key),
                f"gpustack does not know where a {d.os_tag} driver image reads {what}",
                f"use a driver image for {', '.join(sorted(DRIVER_OS_PATHS))}, or build one with"
                " your repositories and certificates inside",
            )


def rdma_needs_driver_container(p: Profile) -> Iterator[Finding]:
    # nvidia-peermem is loaded by a sidecar of gpustack's driver pod; with a host-installed
    # driver there is no driver pod, so the setting would silently do nothing.
    if p.driver.rdma.enabled and not p.driver.enabled:
        yield Finding(
            ("driver", "rdma", "enabled"),
            "GPUDirect RDMA is enabled, but the driver is installed on the host"
            " (driver.enabled: false), so gpustack cannot load nvidia-peermem",
            "load nvidia-peermem on the host and remove driver.rdma, or let gpustack install"
            " the driver: driver.enabled: true",
        )


def host_mofed_needs_rdma(p: Profile) -> Iterator[Finding]:
    rdma = p.driver.rdma
    if rdma.use_host_mofed and not rdma.enabled:
        yield Finding(
            ("driver", "rdma", "useHostMofed"),
            "driver.rdma.useHostMofed is set, but GPUDirect RDMA is not enabled, so it has"
            " no effect",
            "set driver.rdma.enabled: true, or remove useHostMofed",
        )


def driver_supports_gpu(p: Profile) -> Iterator[Finding]:
    found = gpu_minimum(p, "min_driver")
    if found is None:
        return
    minimum, what = found
    if parse_driver(p.driver.version) < parse_driver(minimum):
        yield Finding(
            ("driver", "version"),
            f"driver {p.driver.version} is too old for {what} {minimum} or newer",
            f"set driver.version to {minimum} or newer",
        )


def driver_still_supports_gpu(p: Profile) -> Iterator[Finding]:
    # Legacy architectures stay on their last branch: a newer driver does not see the GPU.
    arch = architecture_of(p)
    if arch is None or arch.last_driver_branch is None:
        return
    if parse_driver(p.driver.version)[0] > arch.last_driver_branch:
        branch = arch.last_driver_branch
        yield Finding(
            ("driver", "version"),
            f"driver {p.driver.version} no longer supports {arch.name.capitalize()} GPUs;"
            f" R{branch} is the last driver branch that does",
            f"set driver.version to an R{branch} release, {branch}.x",
        )


def kernel_modules_fit_gpu(p: Profile) -> Iterator[Finding]:
    arch = architecture_of(p)
    if arch is None:
        return
    product = catalog.PRODUCTS.get(p.gpus.product or "")
    module = p.driver.kernel_module_type
    if module == "proprietary" and (arch.open_required or (product and product.open_required)):
        if product and product.open_required:
            what = f"{product.name} needs"
        else:
            what = f"{arch.name.capitalize()} GPUs need"
        yield Finding(
            ("driver", "kernelModuleType"),
            f"{what} the open GPU kernel modules; the proprietary ones do not support it",
            "set driver.kernelModuleType: open or auto",
        )
    if module == "open" and not arch.open_modules:
        yield Finding(
            ("driver", "kernelModuleType"),
            f"the open GPU kernel modules do not support {arch.name.capitalize()} GPUs, which "
            "lack a GSP",
            "set driver.kernelModuleType: proprietary or auto",
        )


def open_modules_need_r515(p: Profile) -> Iterator[Finding]:
    first = catalog.FIRST_OPEN_MODULE_DRIVER
    if p.driver.kernel_module_type == "open" and parse_driver(p.driver.version) < parse_driver(
        first
    ):
        yield Finding(
            ("driver", "kernelModuleType"),
            f"driver {p.driver.version} has no open GPU kernel modules; they ship from {first}",
            f"set driver.version to {first} or newer, or kernelModuleType: proprietary",
        )


def openshift_driver_needs_driver_toolkit(p: Profile) -> Iterator[Finding]:
    # On RHCOS the driver container builds its modules in OpenShift's Driver Toolkit side-car
    # (the GPU Operator's transformOpenShiftDriverToolkitContainer, v26.7.0): without the
    # toolkit image of the nodes' release it has no kernel headers and never loads a driver.
    d = p.driver
    if not d.enabled or d.use_precompiled or p.cluster.runtime.distribution != "openshift":
        return
    dtk = d.driver_toolkit
    missing = [
        name
        for name, value in (
            ("image", dtk.image),
            ("rhcosVersion", dtk.rhcos_version),
            ("openshiftVersion", dtk.openshift_version),
        )
        if value is None
    ]
    if missing:
        yield Finding(
            ("driver", "driverToolkit", missing[0]),
            "on OpenShift the driver is built in the Driver Toolkit side-car, but"
            f" driver.driverToolkit lacks {', '.join(missing)}",
            "set driver.driverToolkit.image (oc adm release info --image-for=driver-toolkit),"
            " rhcosVersion (the nodes' OSTREE_VERSION label) and openshiftVersion, or set"
            " driver.enabled: false with a preinstalled driver",
        )


def driver_toolkit_builds_distinct(p: Profile) -> Iterator[Finding]:
    # One driver DaemonSet per RHCOS build (issue 31 item 3): a build named twice would be two
    # DaemonSets pinned to the same nodes, and a further build without the first has no
    # DaemonSet name to follow.
    dtk = p.driver.driver_toolkit
    if dtk.builds and dtk.rhcos_version is None:
        yield Finding(
            ("driver", "driverToolkit", "builds"),
            "driver.driverToolkit.builds lists further RHCOS builds, but rhcosVersion (the"
            " first build) is not set",
            "set driver.driverToolkit.rhcosVersion and image for the first build",
        )
        return
    seen = {dtk.rhcos_version}
    for i, build in enumerate(dtk.builds):
        if build.rhcos_version in seen:
            yield Finding(
                ("driver", "driverToolkit", "builds", i, "rhcosVersion"),
                f"RHCOS build {build.rhcos_version} is named twice: two driver DaemonSets"
                " would be pinned to the same nodes",
                "name each build once",
            )
        seen.add(build.rhcos_version)
