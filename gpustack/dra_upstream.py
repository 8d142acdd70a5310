"""What NVIDIA's DRA driver for GPUs publishes and how the kubelet talks to a DRA plugin: facts.

Everything here was read in the upstream sources named next to it; the simulated driver
(:mod:`gpustack.plugin.dra.slices`), the DRA driver's constructs, lint, doctor and the tests
derive from these tables, so a fact is declared once. Pure data, so every layer may read it.
Sources:

- ``DRA_DRIVER``: github.com/kubernetes-sigs/dra-driver-nvidia-gpu (before:
  NVIDIA/k8s-dra-driver-gpu) at tag ``v0.4.1`` (VERSION file ``v0.4.1``; the newest tag, after
  v25.12.0). It vendors Kubernetes ``v0.36.0-rc.0`` (``k8s.io/dynamic-resource-allocation``,
  ``k8s.io/kubelet``). ``main`` at 95932046 (VERSION ``v0.5.0-dev``, the release the GPU
  Operator v26.7.0 pins, not yet tagged) keeps every name, attribute and DeviceClass below and
  adds what :data:`ADDED_ON_MAIN` lists.
- ``KUBERNETES``: the kubelet and its gRPC APIs as vendored by github.com/openshift/microshift
  (``k8s.io/kubelet v1.36.2``: ``vendor/k8s.io/kubelet/pkg/apis/dra/v1/api.proto``,
  ``.../pluginregistration/v1/api.proto``; kubelet code under
  ``deps/github.com/openshift/kubernetes/pkg/kubelet/``).

Value kinds are the four members of ``resource.k8s.io/v1`` ``DeviceAttribute``: ``string``,
``int``, ``bool``, ``version`` (a semantic version string).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

DRA_DRIVER_REPO: Final = "github.com/kubernetes-sigs/dra-driver-nvidia-gpu"
DRA_DRIVER_TAG: Final = "v0.4.1"

# --- Driver names -----------------------------------------------------------------------------
#: cmd/gpu-kubelet-plugin/main.go ``DriverName``.
GPU_DRIVER: Final = "gpu.nvidia.com"
#: cmd/compute-domain-kubelet-plugin/main.go ``DriverName``.
COMPUTE_DOMAIN_DRIVER: Final = "compute-domain.nvidia.com"

#: api/nvidia.com/resource/v1beta1: the ComputeDomain custom resource's group and version.
COMPUTE_DOMAIN_API_GROUP: Final = "resource.nvidia.com"
COMPUTE_DOMAIN_API_VERSION: Final = "v1beta1"

# --- Pools and slices -------------------------------------------------------------------------
# cmd/gpu-kubelet-plugin/driver.go publishResources (without the DynamicMIG feature gate): ONE
# ResourceSlice per node holding every GPU, MIG and VFIO device; pool name = the node name
# (``Pools: {nodeName: {Slices: [slice]}}``). With DynamicMIG (alpha) one slice per physical GPU,
# plus (Kubernetes >= 1.35) a first slice holding only ``sharedCounters``.
# vendor/k8s.io/dynamic-resource-allocation/resourceslice/resourceslicecontroller.go: a node-local
# slice gets ``spec.nodeName`` = node, ``spec.pool = {name, generation, resourceSliceCount}``, an
# ownerReference to the Node (``controller: true``; the Node's UID is read with a GET when not
# known), and ``metadata.generateName`` ``<index as %05x>-<driver>-<node>-``; the controller lists
# with the field selector ``spec.driver=<driver>,spec.nodeName=<node>``.
SLICE_NAME_INDEX_DIGITS: Final = 5

# --- Device names ---------------------------------------------------------------------------
#: deviceinfo.go GpuInfo.CanonicalName: ``gpu-<minor>`` (the /dev/nvidia<minor> number).
GPU_DEVICE_NAME: Final = "gpu-{minor}"
#: mig.go MigSpecTuple.ToCanonicalName: profile with dots removed, RFC 1123 lowered, then the
#: GPU-instance profile ID and the placement start, e.g. ``gpu-0-mig-1g10gb-19-0``.
MIG_DEVICE_NAME: Final = "gpu-{minor}-mig-{profile}-{profile_id}-{placement_start}"
#: deviceinfo.go VfioDeviceInfo.CanonicalName.
VFIO_DEVICE_NAME: Final = "gpu-vfio-{index}"
#: compute-domain-kubelet-plugin/deviceinfo.go: ``<type>-<id>``; nvlib.go publishes ``daemon-0``
#: and ``channel-0`` only (driver.go skips channels with id != 0).
COMPUTE_DOMAIN_DEVICE_NAMES: Final = ("channel-0", "daemon-0")

Kind = Literal["string", "int", "bool", "version"]


@dataclass(frozen=True)
class Attribute:
    """One device attribute as the driver publishes it."""

    name: str
    kind: Kind
    #: Published only where the platform provides it (otherwise always).
    conditional: str = ""


#: The standard attributes of k8s.io/dynamic-resource-allocation/deviceattribute/attribute.go;
#: fully qualified, so CEL reads them as ``device.attributes['resource.kubernetes.io'].pciBusID``.
PCI_BUS_ID: Final = "resource.kubernetes.io/pciBusID"
PCIE_ROOT: Final = "resource.kubernetes.io/pcieRoot"

#: deviceinfo.go GpuInfo.Attributes(); values from nvlib.go getGpuInfo.
GPU_ATTRIBUTES: Final = (
    Attribute("type", "string"),  # "gpu" (types.go GpuDeviceType)
    Attribute("uuid", "string"),  # NVML UUID, GPU-…
    Attribute("productName", "string"),  # nvmlDeviceGetName, e.g. "NVIDIA H100 80GB HBM3"
    Attribute("brand", "string"),  # go-nvlib GetBrandAsString: "Nvidia", "Tesla", "GeForce", …
    Attribute("architecture", "string"),  # go-nvlib GetArchitectureAsString: "Hopper", …
    # Versions go through Masterminds semver MustParse(...).String(): always major.minor.patch
    # with leading zeros dropped ("9.0" -> "9.0.0", "570.158.01" -> "570.158.1").
    Attribute("cudaComputeCapability", "version"),
    Attribute("driverVersion", "version"),
    # nvmlSystemGetCudaDriverVersion 12080 -> "12.8" -> "12.8.0".
    Attribute("cudaDriverVersion", "version"),
    # go-nvlib GetPCIBusID: lower case, 8-digit domain cut to 4 ("0000:3b:00.0").
    Attribute(PCI_BUS_ID, "string"),
    # "pci<domain>:<bus>" of the root complex, from sysfs.
    Attribute(PCIE_ROOT, "string", conditional="the PCIe root resolves in sysfs"),
    # "ATS", "HMM" or "None" on coherent-memory platforms (GH200, GB200).
    Attribute("addressingMode", "string", conditional="the platform reports an addressing mode"),
)
#: mig.go CommonAttributesMig plus deviceinfo.go MigDeviceInfo.GetDevice (``uuid``); the PCI
#: attributes and ``addressingMode`` are the parent GPU's.
MIG_ATTRIBUTES: Final = (
    Attribute("type", "string"),  # "mig"
    Attribute("uuid", "string"),  # MIG-…
    Attribute("parentUUID", "string"),
    Attribute("profile", "string"),  # e.g. "1g.10gb"
    *(a for a in GPU_ATTRIBUTES if a.name not in ("type", "uuid")),
)
#: compute-domain-kubelet-plugin/deviceinfo.go GetDevice.
COMPUTE_DOMAIN_ATTRIBUTES: Final = (
    Attribute("type", "string"),  # "channel" or "daemon"
    Attribute("id", "int"),
)

#: partitions.go fullGpuCapacity: ``memory`` in bytes (NVML total memory), BinarySI quantity;
#: absent when NVML reports memory as not supported.
GPU_CAPACITIES: Final = ("memory",)
#: mig.go CommonCapacitiesMig (GPU-instance profile info; memory = MemorySizeMB * 2^20) plus one
#: ``memorySlice<i>`` (value 1) per memory slice the placement covers.
MIG_CAPACITIES: Final = (
    "multiprocessors",
    "copyEngines",
    "decoders",
    "encoders",
    "jpegEngines",
    "ofaEngines",
    "memory",
)
MIG_MEMORY_SLICE_CAPACITY: Final = "memorySlice{index}"

#: types.go: the ``type`` attribute values.
TYPE_GPU: Final = "gpu"
TYPE_MIG: Final = "mig"
TYPE_VFIO: Final = "vfio"
#: go-nvlib device.go GetArchitectureAsString: every value ``architecture`` can take.
ARCHITECTURES: Final = (
    "Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ada Lovelace", "Hopper",
    "Blackwell", "Unknown",
)  # fmt: skip


@dataclass(frozen=True)
class DeviceClass:
    """deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-*.yaml."""

    name: str
    cel: str
    #: Rendered only when the chart targets resource.k8s.io/v1 (needs the DRAExtendedResource
    #: feature gate to have an effect).
    extended_resource_name: str = ""


#: The DeviceClass names, each once (the table below holds their selectors).
GPU_DEVICE_CLASS: Final = "gpu.nvidia.com"
MIG_DEVICE_CLASS: Final = "mig.nvidia.com"
VFIO_DEVICE_CLASS: Final = "vfio.gpu.nvidia.com"
COMPUTE_DOMAIN_DEVICE_CLASSES: Final = (
    "compute-domain-daemon.nvidia.com",
    "compute-domain-default-channel.nvidia.com",
)

DEVICE_CLASSES: Final = (
    DeviceClass(
        GPU_DEVICE_CLASS,
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
        extended_resource_name="nvidia.com/gpu",
    ),
    DeviceClass(
        MIG_DEVICE_CLASS,
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'",
    ),
    DeviceClass(
        VFIO_DEVICE_CLASS,
        "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'vfio'",
    ),
    DeviceClass(
        COMPUTE_DOMAIN_DEVICE_CLASSES[0],
        "device.driver == 'compute-domain.nvidia.com' && "
        "device.attributes['compute-domain.nvidia.com'].type == 'daemon'",
    ),
    DeviceClass(
        COMPUTE_DOMAIN_DEVICE_CLASSES[1],
        "device.driver == 'compute-domain.nvidia.com' && "
        "device.attributes['compute-domain.nvidia.com'].type == 'channel' && "
        "device.attributes['compute-domain.nvidia.com'].id == 0",
    ),
)

# --- Sockets ----------------------------------------------------------------------------------
# vendor/k8s.io/dynamic-resource-allocation/kubeletplugin/draplugin.go (Start): defaults that the
# driver's --kubelet-registrar-directory-path / --kubelet-plugins-directory-path
# (KUBELET_REGISTRAR_DIRECTORY_PATH, KUBELET_PLUGINS_DIRECTORY_PATH) override; the chart mounts
# both host folders at the same paths. NVIDIA's driver sets no rolling-update UID, so the names
# carry none (with one: ``<driver>-<uid>-reg.sock`` and ``dra-<uid>.sock``).
# Both are folders of the kubelet's root (--root-dir: /var/lib/kubelet unless a distribution
# moves it, as k0s and MicroK8s do); the chart takes them as values
# (deployments/helm/dra-driver-nvidia-gpu/values.yaml kubeletRegistrarDirectoryPath,
# kubeletPluginsDirectoryPath) for such kubelets.
REGISTRY_SUBDIR: Final = "plugins_registry"
PLUGINS_SUBDIR: Final = "plugins"
KUBELET_REGISTRY_DIR: Final = f"/var/lib/kubelet/{REGISTRY_SUBDIR}"
KUBELET_PLUGINS_DIR: Final = f"/var/lib/kubelet/{PLUGINS_SUBDIR}"
#: In KUBELET_REGISTRY_DIR; serves pluginregistration.Registration.
REGISTRATION_SOCKET: Final = "{driver}-reg.sock"
#: In KUBELET_PLUGINS_DIR/<driver>/; serves the DRAPlugin service; GetInfo's endpoint.
DRA_SOCKET: Final = "dra.sock"
# pkg/kubelet/pluginmanager/pluginwatcher/plugin_watcher.go: the kubelet considers only unix
# sockets in the registry folder whose names do not start with ".".

# --- The kubelet's gRPC APIs ------------------------------------------------------------------
#: pluginregistration/v1/constants.go ``DRAPlugin``: PluginInfo.type of a DRA plugin.
PLUGIN_TYPE: Final = "DRAPlugin"
#: dra/v1/types.go ``DRAPluginService`` and dra/v1beta1's: PluginInfo.supported_versions. The
#: kubelet (cm/dra/plugin/dra_plugin.go servicesSupportedByKubelet) takes the first it knows.
DRA_SERVICE_V1: Final = "v1.DRAPlugin"
DRA_SERVICE_V1BETA1: Final = "v1beta1.DRAPlugin"
#: Full gRPC method paths (api_grpc.pb.go ``*_FullMethodName``): the proto packages are
#: ``k8s.io.kubelet.pkg.apis.dra.v1`` and ``pluginregistration``.
DRA_METHODS: Final = (
    "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources",
    "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodeUnprepareResources",
)
REGISTRATION_METHODS: Final = (
    "/pluginregistration.Registration/GetInfo",
    "/pluginregistration.Registration/NotifyRegistrationStatus",
)
# pkg/kubelet/pluginmanager/operationexecutor/operation_generator.go: the kubelet dials the
# registration socket (10 s), calls GetInfo (1 s timeout), falls back to the registration socket
# when PluginInfo.endpoint is empty, validates, then NotifyRegistrationStatus (5 s).
# cm/dra/plugin/dra_plugin_manager.go: when a driver's last plugin goes away the kubelet deletes
# the node's ResourceSlices of that driver (DeleteCollection with spec.nodeName, spec.driver).
# kubeletplugin/draplugin.go NodePrepareResources: GET each ResourceClaim; an unallocated claim
# or one whose UID differs from the request is an error.

# --- CDI ----------------------------------------------------------------------------------------
# cmd/gpu-kubelet-plugin/cdi.go: one transient spec per claim, vendor ``k8s.<driver>``, class
# ``claim``, file ``<vendor>-claim_<claim uid>`` under the CDI root (/var/run/cdi); each prepared
# device is ``<claim uid>-<device name>``, so the ID returned is
# ``k8s.gpu.nvidia.com/claim=<claim uid>-gpu-0``.
CDI_VENDOR: Final = "k8s.{driver}"
CDI_CLASS: Final = "claim"

# --- RBAC of the GPU kubelet plugin -----------------------------------------------------------
#: deployments/helm/dra-driver-nvidia-gpu/templates/rbac-kubeletplugin.yaml ClusterRole
#: (group, resource, verbs); the namespaced Role adds ``computedomaincliques: get`` (and, with
#: the MPSSupport gate, Deployments).
KUBELET_PLUGIN_CLUSTER_RULES: Final = (
    ("resource.nvidia.com", "computedomains", ("get", "list", "watch")),
    ("resource.k8s.io", "resourceclaims", ("get", "list", "watch")),
    ("resource.k8s.io", "resourceslices", ("get", "list", "watch", "create", "update", "delete")),
    ("", "nodes", ("get", "list", "watch", "update")),
    ("", "pods", ("get", "list", "watch")),
)

#: What ``main`` (95932046, v0.5.0-dev) adds over v0.4.1, none of it published by gpustack's
#: simulated driver until a tag carries it:
#: - deviceinfo.go/mig.go addNumaNodeAttribute: ``resource.kubernetes.io/numaNode`` (int) on GPU,
#:   MIG and VFIO devices when the NUMA node is known (>= 0); with the DRAListTypeAttributes gate
#:   a one-element ``ints`` list instead; VFIO devices drop their ``numa`` attribute;
#: - with the FabricManagerPartitioning gate: ``gpuModuleID`` and ``partition<N>`` (int);
#: - rbac-kubeletplugin.yaml: ``nodes`` also ``patch``;
#: - deviceclass-compute-domain-daemon.yaml: rendered only when IMEX is not host-managed;
#: - ``--consumable-shares`` (CONSUMABLE_SHARES, default ``disabled``).
ADDED_ON_MAIN: Final = (
    Attribute("resource.kubernetes.io/numaNode", "int", conditional="the NUMA node is known"),
    Attribute("gpuModuleID", "int", conditional="FabricManagerPartitioning gate"),
)
