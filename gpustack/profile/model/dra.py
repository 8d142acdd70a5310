"""Dynamic Resource Allocation: NVIDIA's DRA driver for GPUs (``dra``).

NVIDIA's driver (github.com/kubernetes-sigs/dra-driver-nvidia-gpu, before NVIDIA/k8s-dra-driver-gpu)
has two parts that a profile turns on separately, as the driver's Helm chart does
(``resources.gpus.enabled``, ``resources.computeDomains.enabled``):

- GPU allocation: the kubelet plugin's ``gpus`` container publishes each node's GPUs and MIG
  devices as ResourceSlices, and pods ask for them with ResourceClaims of the ``gpu.nvidia.com``
  and ``mig.nvidia.com`` DeviceClasses instead of ``nvidia.com/gpu`` limits;
- ComputeDomains: multi-node NVLink (IMEX channels) on GB200/GB300 NVL72 racks: a controller
  Deployment, the ``ComputeDomain`` custom resource and the plugin's ``compute-domains``
  container. They work next to the device plugin (which still hands out the GPUs).

A GPU must be handed out by the device plugin or by DRA, never both: ``nodeSelector`` names the
node pool whose GPUs DRA allocates, and the device plugin stays off it (rule
``dra-device-plugin-same-gpus``).

The image is the one NVIDIA's GPU Operator v26.7.0 deploys in its GPUCluster stack
(``deployments/gpu-operator/values.yaml``: ``draDriver``, ``nvcr.io/nvidia/dra-driver-nvidia-gpu``
``v0.5.0``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpustack.fields import key
from gpustack.profile.model import upstream
from gpustack.profile.model.common import (
    EnvVar,
    Labels,
    PullPolicy,
    Resources,
    digest,
    enabled,
    env,
    image_field,
    image_ref,
    pull_policy,
    resources,
    version_field,
)
from gpustack.profile.model.dra_gates import FeatureGates, ImexMode, imex_host_socket, imex_mode

#: NVIDIA's DRA driver for GPUs (the GPU Operator's ``draDriver``).
DRA_DRIVER_IMAGE = upstream.DRA_DRIVER.ref


@dataclass(frozen=True)
class Dra:
    """NVIDIA's DRA driver for GPUs: GPU allocation by ResourceClaims and ComputeDomains
    (multi-node NVLink). Needs Kubernetes 1.34 or later (``resource.k8s.io/v1``) and CDI."""

    enabled: bool = enabled("Deploy NVIDIA's DRA driver for GPUs.", False)
    gpus: bool = key(
        "GPU allocation",
        "Publish the nodes' GPUs and MIG devices for ResourceClaims (DeviceClasses"
        " gpu.nvidia.com and mig.nvidia.com); needs driver 565 or later.",
        default=True,
    )
    compute_domains: bool = key(
        "ComputeDomains",
        "Multi-node NVLink (IMEX channels): the ComputeDomain controller and CRDs; needs driver"
        " 570.158.01 or later and GPU feature discovery's nvidia.com/gpu.clique labels.",
        default=False,
    )
    node_selector: Labels = key(
        "Node selector",
        "Labels of the node pool whose GPUs DRA allocates; the device plugin stays off these"
        " nodes. Empty: every GPU node of the stack (then turn the device plugin off).",
        factory=tuple,
        examples=[{"nvidia.com/gpu.allocation": "dra"}],
    )
    extended_resource_name: bool = key(
        "Extended resource name",
        "Let pods that ask for nvidia.com/gpu in their limits get a GPU of the gpu.nvidia.com"
        " DeviceClass (needs the DRAExtendedResource feature gate: beta and on by default in"
        " Kubernetes 1.36, GA from 1.37, where no gate is needed).",
        default=False,
    )
    image: str = image_field(DRA_DRIVER_IMAGE[0])
    version: str = version_field(DRA_DRIVER_IMAGE[1])
    digest: str | None = digest("DRA driver")
    image_pull_policy: PullPolicy = pull_policy()
    env: tuple[EnvVar, ...] = env()
    resources: Resources = resources()
    feature_gates: FeatureGates = key(
        "Feature gates",
        "The driver's feature gates, named as its chart's featureGates names them; each one set"
        " goes into the FEATURE_GATES of the kubelet plugin and the ComputeDomain controller.",
        factory=FeatureGates,
        examples=[{"NVMLDeviceHealthCheck": True}],
    )
    imex_mode: ImexMode = imex_mode()
    imex_host_socket_path: str = imex_host_socket()

    def image_ref(self) -> str:
        return image_ref(self.image, self.version, self.digest)
