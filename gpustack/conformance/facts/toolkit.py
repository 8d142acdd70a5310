"""A data table, and reads as one: each row is one property of NVIDIA's rendering of the
container toolkit, the file it was read from, and the check that holds gpustack's output to it."""

from __future__ import annotations

from typing import Final

from gpustack.conformance import checks as c
from gpustack.conformance.row import (
    CONTROLS,
    TK,
    TOOLKIT,
    TOOLKIT_DS,
    Fact,
    cdi_on,
    driver_root,
    install_dir,
    src,
)

FACTS: Final[tuple[Fact, ...]] = (
    # --- container toolkit ----------------------------------------------------------------
    Fact(TOOLKIT, "privileges", "privileged: it writes the runtime's config and"
         " signals the runtime", TOOLKIT_DS, c.privileged(TK)),
    Fact(TOOLKIT, "host namespaces", "hostPID: it restarts or signals the"
         " container runtime on the host", TOOLKIT_DS, c.pod_field("hostPID", True)),
    Fact(TOOLKIT, "host paths", "the install dir (ROOT) on the host, where the"
         " runtime finds nvidia-container-runtime", TOOLKIT_DS, c.host_path(TK, install_dir)),
    Fact(TOOLKIT, "env", "ROOT names that install dir", TOOLKIT_DS,
         c.env(TK, "ROOT", install_dir)),
    Fact(TOOLKIT, "host paths", "the driver root, HostToContainer, at /driver-root",
         TOOLKIT_DS, c.host_path(TK, driver_root, at="/driver-root",
                                 propagation="HostToContainer")),
    Fact(TOOLKIT, "host paths", "the host root at /host, HostToContainer", TOOLKIT_DS,
         c.host_path(TK, "/", at="/host", propagation="HostToContainer")),
    Fact(TOOLKIT, "host paths", "/var/run/cdi: the CDI specs it generates", TOOLKIT_DS,
         c.host_path(TK, "/var/run/cdi"), when=cdi_on),
    Fact(TOOLKIT, "env", "NVIDIA_VISIBLE_DEVICES=void", TOOLKIT_DS,
         c.env(TK, "NVIDIA_VISIBLE_DEVICES", "void")),
    Fact(TOOLKIT, "env", "TOOLKIT_PID_FILE under /run/nvidia/toolkit", TOOLKIT_DS,
         c.env(TK, "TOOLKIT_PID_FILE", "/run/nvidia/toolkit/toolkit.pid")),
    Fact(TOOLKIT, "env", "CDI_ENABLED with CDI on (transformToolkitCtrForCDI)",
         src(CONTROLS), c.env(TK, "CDI_ENABLED", "true"), when=cdi_on),
    Fact(TOOLKIT, "env", "the CDI default kind management.nvidia.com/gpu",
         TOOLKIT_DS, c.env(TK, "NVIDIA_CONTAINER_RUNTIME_MODES_CDI_DEFAULT_KIND",
                           "management.nvidia.com/gpu"), when=cdi_on),
    Fact(TOOLKIT, "host paths", "/dev/char, where the /dev/char symlinks to the"
         " NVIDIA device nodes are made (systemd cgroup device rules)",
         src("assets/state-container-toolkit/0500_daemonset.yaml (driver-validation)"),
         lambda r: None if "/dev/char" in r.host_paths().values() else "no /dev/char mount"),
)  # fmt: skip
