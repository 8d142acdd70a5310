"""``workloads``: what gpustack ships next to the stack (``gitops`` lives in its own module)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpustack.fields import documented, key
from gpustack.profile.model.common import CUDA_VERSION, DNS_LABEL, IMAGE_REF

#: What an example job runs: the GPU check, or a few training steps on one GPU, with DDP on the
#: GPUs of one pod (torchrun), or with DDP across ``nodes`` pods (an Indexed Job).
ExampleKind = Literal["check", "train", "ddp", "multinode-ddp"]


@documented(
    "Example claims",
    "How an example gets its devices from NVIDIA's DRA driver instead of extended resources.",
)
@dataclass(frozen=True)
class ExampleDra:
    """An example's ResourceClaims (needs ``dra.enabled``): its GPUs by a ResourceClaimTemplate
    of the ``gpu.nvidia.com`` DeviceClass (``mig.nvidia.com`` with ``migProfile``), selected by
    CEL on the attributes NVIDIA's driver publishes; and for a ``multinode-ddp`` job, a
    ComputeDomain whose IMEX channel every pod claims."""

    gpus: bool = key(
        "GPUs by claim",
        "Claim the job's `gpus` GPUs from the DRA driver (false: request the device plugin's"
        " resource, e.g. for a ComputeDomain job on device-plugin GPUs).",
        default=True,
    )
    product_name: str | None = key(
        "Product name",
        "Only GPUs whose productName attribute (NVML's name) is this.",
        default=None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._-]*$",
        examples=["NVIDIA H100 80GB HBM3"],
    )
    mig_profile: str | None = key(
        "MIG profile",
        "Claim MIG devices of this profile (DeviceClass mig.nvidia.com) instead of whole GPUs.",
        default=None,
        pattern=r"^\d+g\.\d+gb(\+[a-z]+)*$",
        examples=["1g.10gb"],
    )
    compute_domain: bool = key(
        "ComputeDomain",
        "Run the pods of a multinode-ddp job in a ComputeDomain (multi-node NVLink): each pod"
        " claims the domain's IMEX channel.",
        default=False,
    )


@documented(
    "Example workload",
    "A PyTorch job that checks a GPU is usable from a pod, or trains a tiny model on it.",
)
@dataclass(frozen=True)
class Example:
    """An example GPU workload (a PyTorch Job) that proves the stack end to end."""

    name: str = key(
        "Name",
        "Job name (DNS-1123 label).",
        pattern=DNS_LABEL,
        max_length=63,
        examples=["pytorch-smoke"],
    )
    image: str = key(
        "Image",
        "Container image; its tag should say the CUDA version (cuda12.4, cu126).",
        default="docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
        pattern=IMAGE_REF,
        examples=["docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"],
    )
    cuda_version: str | None = key(
        "CUDA version",
        "CUDA release the image is built with, when the tag does not tell.",
        default=None,
        pattern=CUDA_VERSION,
        examples=["12.4", "13.0"],
    )
    kind: ExampleKind = key(
        "Kind",
        "check: CUDA and a matmul on every GPU; train: a few steps of a tiny model with a "
        "checkpoint; ddp: the same with DistributedDataParallel on the job's GPUs "
        "(torchrun); multinode-ddp: DDP across `nodes` pods (Indexed Job, headless Service).",
        default="check",
        examples=["train", "multinode-ddp"],
    )
    nodes: int = key(
        "Nodes",
        "Pods of a multinode-ddp job, each with `gpus` GPUs (other kinds run one pod).",
        default=2,
        minimum=2,
        maximum=64,
    )
    gpus: int = key(
        "GPUs",
        "How many of its resource the job requests; at most what one node offers.",
        default=1,
        minimum=1,
    )
    resource_name: str | None = key(
        "Resource name",
        "Resource the job requests; unset: the plugin's resource.",
        default=None,
        examples=["nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb"],
    )
    command: tuple[str, ...] = key(
        "Command",
        "Command of the job's container; empty runs gpustack's CUDA check.",
        factory=tuple,
        examples=[["python", "-c", "import torch; assert torch.cuda.is_available()"]],
    )
    dra: ExampleDra | None = key(
        "DRA claims",
        "Get the devices from NVIDIA's DRA driver (ResourceClaims) instead of `resourceName`.",
        default=None,
        examples=[{"productName": "NVIDIA H100 80GB HBM3"}],
    )


@dataclass(frozen=True)
class Workloads:
    """Workloads gpustack ships next to the stack; today the example jobs."""

    examples: tuple[Example, ...] = key(
        "Examples", "Example GPU jobs, one per entry.", factory=tuple
    )
