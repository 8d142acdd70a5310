"""A data table, and reads as one: each row is one property of NVIDIA's rendering of the driver
pod (the driver container and its k8s-driver-manager init container), the file it was read
from, and the check that holds gpustack's output to it."""

from __future__ import annotations

from typing import Final

from gpustack.conformance import checks as c
from gpustack.conformance.row import (
    CONTROLS,
    DRIVER_DS,
    DRV,
    GOLDEN,
    KERNEL_LABEL,
    MGR,
    Fact,
    dtk,
    openshift,
    precompiled,
    rdma,
    src,
)
from gpustack.profile.versions import tag_at_least

FACTS: Final[tuple[Fact, ...]] = (
    # --- driver ---------------------------------------------------------------------------
    Fact("driver", "privileges", "the driver container is privileged: it loads kernel modules"
         " and creates device nodes", src(f"{GOLDEN}/driver-minimal.yaml"), c.privileged(DRV)),
    Fact("driver", "host namespaces", "hostPID: the driver container checks and stops host"
         " processes holding the GPU", src(f"{GOLDEN}/driver-minimal.yaml"),
         c.pod_field("hostPID", True)),
    Fact("driver", "host paths", "/run/nvidia is shared with the host Bidirectionally: the"
         " driver root it mounts at /run/nvidia/driver must reach the toolkit and the plugins",
         DRIVER_DS, c.host_path(DRV, "/run/nvidia", propagation="Bidirectional")),
    Fact("driver", "host paths", "the host's /etc/os-release, read-only: the driver picks its"
         " kernel headers by the host OS", DRIVER_DS,
         c.host_path(DRV, "/etc/os-release", at="/host-etc/os-release")),
    Fact("driver", "host paths", "/sys/devices/system (v26.x; earlier only its"
         " memory/auto_online_blocks): memory onlining on coherent (Grace) systems",
         DRIVER_DS, c.host_path(DRV, "/sys/devices/system")),
    Fact("driver", "host paths", "the firmware search path parameter and the driver root's"
         " /lib/firmware: the GSP firmware is loaded from the driver container",
         DRIVER_DS, c.host_path(DRV, "/sys/module/firmware_class/parameters/path")),
    Fact("driver", "probes", "a startup probe gates readiness on the modules being loaded and"
         " nvidia-smi answering (a script from a ConfigMap since v26.x)", DRIVER_DS,
         c.probe(DRV, "startupProbe")),
    Fact("driver", "env", "KERNEL_MODULE_TYPE selects open or proprietary modules",
         src(f"{GOLDEN}/driver-full-spec.yaml"), c.env(DRV, "KERNEL_MODULE_TYPE")),
    Fact("driver", "env", "NVIDIA_VISIBLE_DEVICES=void: the runtime injects no GPU into the"
         " driver container even where the NVIDIA runtime is the default",
         src(f"{GOLDEN}/driver-minimal.yaml"), c.env(DRV, "NVIDIA_VISIBLE_DEVICES", "void")),
    Fact("driver", "node selection", "a precompiled driver runs only on nodes whose"
         " kernel-version.full label is the kernel it was built for"
         " (transformPrecompiledDriverDaemonset)",
         src(f"{GOLDEN}/driver-precompiled.yaml, {CONTROLS}"),
         c.selects_on(KERNEL_LABEL), when=precompiled),
    Fact("driver", "env", "with GPUDirect RDMA the driver container is told"
         " GPU_DIRECT_RDMA_ENABLED and where MOFED lives", src(f"{GOLDEN}/driver-rdma.yaml"),
         c.env(DRV, "GPU_DIRECT_RDMA_ENABLED", "true"), when=rdma),
    Fact("driver", "host paths", "with GPUDirect RDMA /run/mellanox/drivers is mounted"
         " HostToContainer (a MOFED driver container publishes there)",
         src(f"{GOLDEN}/driver-rdma.yaml"),
         c.host_path(DRV, "/run/mellanox/drivers", propagation="HostToContainer"), when=rdma),
    Fact("driver", "init containers", "with GPUDirect RDMA the nvidia-peermem side-car loads"
         " the peer-memory module", src(f"{GOLDEN}/driver-rdma.yaml"),
         lambda r: None if r.container("nvidia-peermem-ctr") else "no nvidia-peermem-ctr",
         when=rdma),
    Fact("driver", "RBAC", "on OpenShift the ServiceAccount may use the privileged SCC (the"
         " operator's Role per operand, resourceNames: [privileged]); without it SCC admission"
         " refuses the pod", src("assets/state-driver/0200_role.yaml"),
         c.granted("Role", "gpustack-scc-privileged", "security.openshift.io",
                   "securitycontextconstraints", "use"), when=openshift),
    Fact("driver", "side-cars", "on OpenShift the modules are built in the"
         " openshift-driver-toolkit-ctr side-car (the Driver Toolkit image of the nodes' release,"
         " privileged, sharing /mnt/shared-nvidia-driver-toolkit with the driver container)",
         src(f"{GOLDEN}/driver-openshift-drivertoolkit.yaml"),
         c.host_path("openshift-driver-toolkit-ctr", "/etc/os-release"), when=dtk),
    Fact("driver", "node selection", "with the Driver Toolkit the pod runs only on nodes of its"
         " RHCOS build (NFD's system-os_release.OSTREE_VERSION)",
         src(f"{GOLDEN}/driver-openshift-drivertoolkit.yaml"),
         c.selects_on("feature.node.kubernetes.io/system-os_release.OSTREE_VERSION"), when=dtk),
    # --- driver manager -------------------------------------------------------------------
    Fact("driver-manager", "init containers", "k8s-driver-manager runs first in the driver pod"
         " (transformDriverManagerInitContainer)", src(f"{GOLDEN}/driver-full-spec.yaml"),
         c.init_container(MGR), when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "privileges", "privileged: it unloads kernel modules",
         src(f"{GOLDEN}/driver-full-spec.yaml"), c.privileged(MGR),
         when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "host paths", "/run/nvidia Bidirectional, the host root read-only"
         " at /host (HostToContainer) and /sys", src(f"{GOLDEN}/driver-full-spec.yaml"),
         c.host_path(MGR, "/run/nvidia", propagation="Bidirectional"),
         when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "host paths", "the host root at /host, HostToContainer",
         src(f"{GOLDEN}/driver-full-spec.yaml"),
         c.host_path(MGR, "/", at="/host", propagation="HostToContainer"),
         when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "env", "DRIVER_CONFIG_DIGEST on the manager: v0.10+ restart a"
         " matching driver in place", src(f"{GOLDEN}/driver-full-spec.yaml"),
         c.env(MGR, "DRIVER_CONFIG_DIGEST"), when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "env", "NODE_NAME and OPERATOR_NAMESPACE (the namespace of the"
         " operands it pauses)", src(f"{GOLDEN}/driver-full-spec.yaml"),
         c.env(MGR, "OPERATOR_NAMESPACE"), when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "env", "NVIDIA_VISIBLE_DEVICES=void: the manager needs no GPU",
         src(f"{GOLDEN}/driver-full-spec.yaml"), c.env(MGR, "NVIDIA_VISIBLE_DEVICES", "void"),
         when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "RBAC", "evicts GPU pods (pods/eviction create)",
         src("assets/state-driver/0210_clusterrole.yaml"),
         c.granted("ClusterRole", "gpustack-nvidia-driver-manager", "", "pods/eviction", "create"),
         when=lambda p: p.driver.upgrade.driver_manager),
    Fact("driver-manager", "RBAC", "reads the ResourceClaims of pods (DRA GPU pods count as GPU"
         " pods from v0.12.0)", src("assets/state-driver/0210_clusterrole.yaml"),
         c.granted("ClusterRole", "gpustack-nvidia-driver-manager", "resource.k8s.io",
                   "resourceclaims", "get"),
         when=lambda p: p.driver.upgrade.driver_manager
         and tag_at_least(p.driver.upgrade.version, "v0.12.0")),
)  # fmt: skip
