"""gpustack: the NVIDIA GPU stack for Kubernetes as plain, reviewable GitOps manifests."""

__version__ = "0.2.0"
