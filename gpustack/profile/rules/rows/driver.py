"""A data table, and reads as one: the registry's rows for ``driver`` (and the GPUs it must run),
each the whole declaration of one rule."""

from __future__ import annotations

from gpustack.profile.rules import (
    driver,
    gpus,
)
from gpustack.profile.rules.rule import Rule

RULES: tuple[Rule, ...] = (
    Rule(
        id="precompiled-needs-kernel",
        check=driver.precompiled_needs_kernel,
        section="driver",
        summary="precompiled driver images name the kernel they are built for",
        fix="set `driver.kernelVersion`",
    ),
    Rule(
        id="host-driver-root-needs-host-driver",
        check=driver.host_driver_root_needs_host_driver,
        section="driver",
        summary="`hostDriverRoot` only for a preinstalled driver (`enabled: false`)",
        fix="remove `driver.hostDriverRoot`, or set `driver.enabled: false`",
    ),
    Rule(
        id="driver-config-maps-known-os",
        check=driver.driver_config_maps_known_os,
        section="driver",
        summary="repository and certificate ConfigMaps only for a driver container gpustack"
        " knows where to mount them in",
        fix="remove the ConfigMap, or use a driver image for a known OS",
    ),
    Rule(
        id="rdma-needs-driver-container",
        check=driver.rdma_needs_driver_container,
        section="driver",
        summary="GPUDirect RDMA only with gpustack's driver pod (it loads nvidia-peermem)",
        fix="set `driver.enabled: true`, or load nvidia-peermem on the host",
    ),
    Rule(
        id="rhcos-driver-needs-openshift",
        check=driver.rhcos_driver_needs_openshift,
        section="driver",
        summary="a driver image for Red Hat CoreOS (`osTag: rhcos*`) only with distribution"
        " `openshift` (RHCOS's /usr is read-only; only OpenShift's layout has the writable hook"
        " folder)",
        fix="set `cluster.runtime.distribution: openshift`, or the nodes' real OS tag",
    ),
    Rule(
        id="openshift-driver-needs-driver-toolkit",
        check=driver.openshift_driver_needs_driver_toolkit,
        section="driver",
        summary="on OpenShift the driver container names the Driver Toolkit image, RHCOS build and"
        " OpenShift release its build side-car needs",
        fix="set `driver.driverToolkit.image`, `rhcosVersion` and `openshiftVersion`",
    ),
    Rule(
        id="driver-toolkit-builds-distinct",
        check=driver.driver_toolkit_builds_distinct,
        section="driver",
        summary="each RHCOS build in `driver.driverToolkit` (`rhcosVersion`, then `builds`) is"
        " named once, and `builds` only with a first `rhcosVersion` (one driver DaemonSet per"
        " build)",
        fix="name each build once; set `rhcosVersion` and `image` for the first build",
    ),
    Rule(
        id="host-mofed-needs-rdma",
        check=driver.host_mofed_needs_rdma,
        section="driver",
        summary="`rdma.useHostMofed` only with RDMA enabled",
        fix="set `driver.rdma.enabled: true`, or remove `useHostMofed`",
    ),
    Rule(
        id="product-matches-architecture",
        check=gpus.product_matches_architecture,
        section="gpus",
        summary="`gpus.architecture` agrees with the product's",
        fix="remove `gpus.architecture`, or set the product's",
    ),
    Rule(
        id="driver-supports-gpu",
        check=driver.driver_supports_gpu,
        section="driver",
        summary="the driver is new enough for the GPU product or architecture",
        fix="raise `driver.version` to the minimum shown",
        acceptable=True,
    ),
    Rule(
        id="driver-still-supports-gpu",
        check=driver.driver_still_supports_gpu,
        section="driver",
        summary="the driver branch still supports the architecture (legacy GPUs stay on their"
        " last branch)",
        fix="use a release of the last branch shown",
        acceptable=True,
    ),
    Rule(
        id="kernel-modules-fit-gpu",
        check=driver.kernel_modules_fit_gpu,
        section="driver",
        summary="open kernel modules where the GPU needs them, proprietary where it lacks a GSP",
        fix="set `driver.kernelModuleType` as the hint says, or `auto`",
    ),
    Rule(
        id="open-modules-need-r515",
        check=driver.open_modules_need_r515,
        section="driver",
        summary="open kernel modules only with a driver that ships them",
        fix="raise `driver.version`, or use proprietary modules",
    ),
)
