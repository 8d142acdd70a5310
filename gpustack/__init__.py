"""gpustack: the NVIDIA GPU stack for Kubernetes as plain, reviewable GitOps manifests."""

__version__ = "0.1.0"
