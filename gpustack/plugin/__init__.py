"""gpustack's Kubernetes device plugin (kubelet device plugin API v1beta1).

Imports only the standard library, grpcio, protobuf, PyYAML and pynvml so the plugin image
stays small; ``config`` is the one module the rest of gpustack shares.
"""
