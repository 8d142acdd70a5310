"""A data table, and reads as one: each row is one property of NVIDIA's rendering of the
MIG manager, the file it was read from, and the check that holds gpustack's output to it; the
checks too long for a row come first."""

from __future__ import annotations

from typing import Final

import yaml

from gpustack.conformance import checks as c
from gpustack.conformance.row import (
    CONTROLS,
    MIG,
    MIG_DS,
    MIG_MANAGER,
    Fact,
    cdi_on,
    driver_root,
    gpu_class,
    has_gpu_class,
    src,
    toolkit_or_driver,
)
from gpustack.constructs import mig_manager as mig
from gpustack.constructs.scripts import SCRIPTS_DIR
from gpustack.profile.versions import tag_at_least


def _gpu_clients_file(r: c.Rendered) -> str | None:
    """GPU_CLIENTS_FILE names a file, mounted from a ConfigMap, listing the profile's services
    (NVIDIA's by default, held to them in ``tests/constructs/test_mig_manager.py``)."""
    path = f"{mig.GPU_CLIENTS_DIR}/{mig.GPU_CLIENTS_KEY}"
    problem = c.env(MIG, "GPU_CLIENTS_FILE", path)(r)
    if problem:
        return problem
    cm = c.mounted_config_map(r, MIG, mig.GPU_CLIENTS_DIR)
    if cm is None:
        return f"{MIG}: no ConfigMap mounted at {mig.GPU_CLIENTS_DIR}"
    clients = yaml.safe_load(cm["data"].get(mig.GPU_CLIENTS_KEY, "")) or {}
    want, got = list(r.profile.mig_manager.host_gpu_clients), clients.get("systemd-services")
    return None if got == want else f"{MIG}: the clients file lists {got}, expected {want}"


def _shutdown_follows_host_driver(r: c.Rendered) -> str | None:
    """The entrypoint exports WITH_SHUTDOWN_HOST_GPU_CLIENTS from driver-ready's IS_HOST_DRIVER
    before it runs the manager."""
    cm = c.mounted_config_map(r, MIG, SCRIPTS_DIR)
    script = (cm or {}).get("data", {}).get("entrypoint.sh", "")
    head = script.split("exec nvidia-mig-manager")[0]
    if "IS_HOST_DRIVER" not in head or "export WITH_SHUTDOWN_HOST_GPU_CLIENTS" not in head:
        return f"{MIG}: the entrypoint does not derive WITH_SHUTDOWN_HOST_GPU_CLIENTS"
    return None


def _host_root_writable(r: c.Rendered) -> str | None:
    problem = c.host_path(MIG, "/", at="/host", propagation="HostToContainer")(r)
    if problem:
        return problem
    paths = r.host_paths()
    for m in (r.container(MIG) or {}).get("volumeMounts", []):
        if paths.get(m["name"]) == "/" and m["mountPath"] == "/host" and m.get("readOnly"):
            return f"{MIG}: the host root is read-only at /host"
    return None


FACTS: Final[tuple[Fact, ...]] = (
    # --- MIG manager ----------------------------------------------------------------------
    Fact(MIG_MANAGER, "runtime class", "runs with the GPU runtime class (setRuntimeClassName"
         " in TransformMIGManager): its distroless image gets NVML and nvidia-smi from the"
         " runtime (mig-parted v0.15.0 deployments/container/Dockerfile)", src(CONTROLS),
         c.runtime_class(gpu_class), when=has_gpu_class),
    Fact(MIG_MANAGER, "privileges", "privileged: repartitions GPUs", MIG_DS, c.privileged(MIG)),
    Fact(MIG_MANAGER, "host namespaces", "hostPID and hostIPC", MIG_DS,
         c.pod_field("hostIPC", True)),
    Fact(MIG_MANAGER, "host paths", "/sys, the host root HostToContainer at /host, the driver"
         " root HostToContainer at /driver-root", MIG_DS,
         c.host_path(MIG, driver_root, at="/driver-root", propagation="HostToContainer")),
    Fact(MIG_MANAGER, "host paths", "/var/run/cdi: it regenerates CDI specs after a change",
         MIG_DS, c.host_path(MIG, "/var/run/cdi")),
    Fact(MIG_MANAGER, "env", "CDI_ENABLED and NVIDIA_CDI_HOOK_PATH with CDI and the toolkit",
         src(CONTROLS), c.env(MIG, "NVIDIA_CDI_HOOK_PATH"), when=cdi_on),
    Fact(MIG_MANAGER, "env", "DEFAULT_GPU_CLIENTS_NAMESPACE: where it waits for the paused"
         " clients", MIG_DS, c.env(MIG, "DEFAULT_GPU_CLIENTS_NAMESPACE")),
    Fact(MIG_MANAGER, "env", "GPU_CLIENTS_FILE names the host GPU clients file, a ConfigMap"
         " mounted at /gpu-clients listing the systemd services of NVSM, nv_peer_mem, DCGM and"
         " the DCGM exporter (default-gpu-clients; the volume's ConfigMap set by"
         " TransformMIGManager)",
         src("assets/state-mig-manager/0410_configmap.yaml, 0600_daemonset.yaml"),
         _gpu_clients_file),
    Fact(MIG_MANAGER, "entrypoint", "WITH_SHUTDOWN_HOST_GPU_CLIENTS is driver-ready's"
         " IS_HOST_DRIVER: with a host driver a MIG mode change stops those services (and"
         " kubelet.service) over the host's D-Bus and starts them again after (mig-parted v0.15.0"
         " pkg/mig/reconfigure); without it the change fails while DCGM holds the GPU",
         src("assets/state-mig-manager/0420_configmap.yaml"), _shutdown_follows_host_driver),
    Fact(MIG_MANAGER, "host paths", "the host root writable at /host: with host GPU clients it"
         " copies nvidia-mig-parted and its config under /host/usr/local/nvidia/mig-manager,"
         " runs it chrooted there and dials /host/run/dbus/system_bus_socket (mig-parted v0.15.0"
         " cmd/nvidia-mig-manager/main.go copyMigPartedToHost, pkg/mig/reconfigure New)",
         MIG_DS, _host_root_writable),
    Fact(MIG_MANAGER, "init containers", "toolkit-validation", MIG_DS,
         c.init_container("toolkit-validation"), when=toolkit_or_driver),
    Fact(MIG_MANAGER, "RBAC", "nodes patch (its labels), pods list in all namespaces"
         " (v0.15.0 waits for gpu.deploy.client DaemonSet pods)",
         src("assets/state-mig-manager/0210_clusterrole.yaml"),
         c.granted("ClusterRole", "gpustack-nvidia-mig-manager-pods", "", "pods", "list"),
         when=lambda p: tag_at_least(p.mig_manager.version, "v0.15.0")),
)  # fmt: skip
