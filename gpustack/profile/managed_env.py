"""Environment variables gpustack sets itself in the driver, toolkit and device plugin
containers, with the profile setting each one comes from.

A profile's ``env`` adds variables; it may not replace these (issue #11, item 12): an override
such as ``CONTAINERD_CONFIG`` with a host path the toolkit does not mount breaks every node, and
the profile already has a setting for what the variable says. The rule ``env-not-managed`` reads
these tables; the constructs refuse (in :func:`gpustack.constructs.kube.env_list`) any user
variable that collides with one they set, and a test checks that every variable the
synthesized containers carry is listed here, so the two cannot drift apart.
"""

from __future__ import annotations

from typing import Final

_RUNTIME = "cluster.runtime"

#: Variable -> the profile setting it comes from (``None``: gpustack's own plumbing).
DRIVER: Final[dict[str, str | None]] = {
    "KERNEL_MODULE_TYPE": "driver.kernelModuleType",
    "NVIDIA_VISIBLE_DEVICES": None,
    "OPENSHIFT_VERSION": "driver.driverToolkit.openshiftVersion",
    "RHCOS_VERSION": "driver.driverToolkit.rhcosVersion",
    "GPU_DIRECT_RDMA_ENABLED": "driver.rdma.enabled",
    "USE_HOST_MOFED": "driver.rdma.useHostMofed",
    "NODE_NAME": None,
    "NODE_IP": None,
    "DRIVER_CONFIG_DIGEST": None,
}
TOOLKIT: Final[dict[str, str | None]] = {
    "ROOT": "toolkit.installDir",
    "NVIDIA_VISIBLE_DEVICES": None,
    "TOOLKIT_PID_FILE": None,
    "RUNTIME": f"{_RUNTIME}.name",
    "RUNTIME_CONFIG": f"{_RUNTIME}.configPath",
    "CONTAINERD_CONFIG": f"{_RUNTIME}.configPath",
    "CRIO_CONFIG": f"{_RUNTIME}.configPath",
    "RUNTIME_DROP_IN_CONFIG": f"{_RUNTIME}.dropInConfigPath",
    "RUNTIME_DROP_IN_CONFIG_HOST_PATH": f"{_RUNTIME}.dropInConfigPath",
    "RUNTIME_SOCKET": f"{_RUNTIME}.socketPath",
    "CONTAINERD_SOCKET": f"{_RUNTIME}.socketPath",
    "RUNTIME_CONFIG_SOURCE": f"{_RUNTIME}.configSource",
    "RUNTIME_RESTART_MODE": f"{_RUNTIME}.restartMode",
    "NVIDIA_RUNTIME_NAME": "toolkit.runtimeClass",
    "CONTAINERD_RUNTIME_CLASS": "toolkit.runtimeClass",
    "NVIDIA_RUNTIME_SET_AS_DEFAULT": "toolkit.setAsDefault",
    "CDI_ENABLED": "toolkit.cdi.enabled",
    "NVIDIA_CONTAINER_RUNTIME_MODE": "toolkit.cdi.enabled",
    "NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND": "toolkit.cdi.enabled",
    "CDI_OUTPUT_DIR": None,
    "CRIO_CONFIG_MODE": "toolkit.cdi.enabled",
    "CRIO_HOOKS_DIR": f"{_RUNTIME}.distribution",
    "RUNTIME_EXECUTABLE_PATH": f"{_RUNTIME}.distribution",
    "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS": "devicePlugin.deviceListStrategy",
    "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED": "devicePlugin.deviceListStrategy",
}
DEVICE_PLUGIN: Final[dict[str, str | None]] = {
    "CONFIG_FILE": None,
    "NVIDIA_VISIBLE_DEVICES": "devicePlugin.backend",
    "NVIDIA_DRIVER_CAPABILITIES": None,
    "NVIDIA_MIG_MONITOR_DEVICES": "devicePlugin.migStrategy",
    "NVIDIA_CDI_HOOK_PATH": "toolkit.installDir",
    "DP_DISABLE_HEALTHCHECKS": "devicePlugin.healthChecks",
    "DP_ENABLE_HEALTHCHECKS": "devicePlugin.healthChecks",
}

#: Profile section -> its managed variables.
BY_SECTION: Final[dict[str, dict[str, str | None]]] = {
    "driver": DRIVER,
    "toolkit": TOOLKIT,
    "devicePlugin": DEVICE_PLUGIN,
}
