"""A data table, and reads as one: each row is one property of NVIDIA's rendering of the
device plugin and GPU feature discovery, the file it was read from, and the check that holds
gpustack's output to it."""

from __future__ import annotations

from typing import Final

from gpustack.conformance import checks as c
from gpustack.conformance.row import (
    CONTROLS,
    DEVICE_PLUGIN,
    DP,
    FEATURES_D,
    GFD,
    GFD_DS,
    GFD_OPERAND,
    PLUGIN_DS,
    Fact,
    cdi_on,
    driver_root,
    gpu_class,
    has_gpu_class,
    kubelet_dir,
    mig_strategy,
    nvidia_plugin,
    plugin_class,
    src,
    toolkit_or_driver,
)

FACTS: Final[tuple[Fact, ...]] = (
    # --- device plugin --------------------------------------------------------------------
    Fact(DEVICE_PLUGIN, "runtime class", "runs with the GPU runtime class (setRuntimeClassName"
         " in TransformDevicePlugin): NVML comes from the runtime", src(CONTROLS),
         c.runtime_class(gpu_class), when=plugin_class),
    Fact(DEVICE_PLUGIN, "host paths", "the kubelet's device-plugins directory (its socket and"
         " registration)", PLUGIN_DS,
         c.host_path(DP, kubelet_dir("device-plugins"), at="/var/lib/kubelet/device-plugins")),
    Fact(DEVICE_PLUGIN, "env", "NVIDIA_VISIBLE_DEVICES=all: the runtime gives it every GPU",
         PLUGIN_DS, c.env(DP, "NVIDIA_VISIBLE_DEVICES", "all"), when=plugin_class),
    Fact(DEVICE_PLUGIN, "init containers", "toolkit-validation: it starts after the toolkit"
         " configured the runtime", PLUGIN_DS, c.init_container("toolkit-validation"),
         when=toolkit_or_driver),
    Fact(DEVICE_PLUGIN, "host paths", "the driver root HostToContainer at /driver-root (CDI"
         " spec generation and driver library lookup)", PLUGIN_DS,
         c.host_path(DP, driver_root, at="/driver-root", propagation="HostToContainer"),
         when=lambda p: nvidia_plugin(p) and cdi_on(p)),
    # --- GPU feature discovery ------------------------------------------------------------
    Fact(GFD_OPERAND, "runtime class", "runs with the GPU runtime class"
         " (TransformGPUDiscoveryPlugin)", src(CONTROLS), c.runtime_class(gpu_class),
         when=has_gpu_class),
    Fact(GFD_OPERAND, "host paths", "NFD's features.d, where its labels go"
         " (file output)", GFD_DS, c.host_path(GFD, FEATURES_D)),
    Fact(GFD_OPERAND, "host paths", "/sys, read-only", GFD_DS,
         c.host_path(GFD, "/sys")),
    Fact(GFD_OPERAND, "env", "GFD_SLEEP_INTERVAL and GFD_FAIL_ON_INIT_ERROR",
         GFD_DS, c.env(GFD, "GFD_FAIL_ON_INIT_ERROR", "true")),
    Fact(GFD_OPERAND, "init containers", "toolkit-validation", GFD_DS,
         c.init_container("toolkit-validation"), when=toolkit_or_driver),
    Fact(GFD_OPERAND, "privileges", "reads MIG devices with a MIG strategy"
         " (NVIDIA: privileged; gpustack: CAP_SYS_ADMIN, as NVIDIA's Helm chart)", GFD_DS,
         c.capability(GFD, "SYS_ADMIN"), when=mig_strategy),
)  # fmt: skip
