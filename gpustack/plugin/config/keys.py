"""Patterns and field declarations that both parts of the plugin config file use.

NVIDIA's part (:mod:`.model`) and gpustack's block (:mod:`.extensions`) both name resources and
host paths; their declarations are made here once.
"""

from __future__ import annotations

from typing import Any, Final

from gpustack.fields import key

#: Extended resource name: ``<domain>/<name>``, at most 63 characters in all.
RESOURCE_NAME: Final = (
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"  # domain
    r"/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"  # name
)
MAX_RESOURCE_NAME: Final = 63
#: The resource of whole GPUs: NVIDIA's plugin always advertises it; gpustack's by default.
GPU_RESOURCE: Final = "nvidia.com/gpu"

_PATH = "an absolute path; start it with '/'"


def abs_path(title: str, description: str, **spec: Any) -> Any:
    """A host or container path field: absolute."""
    return key(title, description, pattern="^/", hint=_PATH, **spec)


def resource_name(title: str, description: str, **spec: Any) -> Any:
    """An extended resource name field, e.g. ``nvidia.com/gpu``."""
    return key(
        title,
        description,
        pattern=RESOURCE_NAME,
        hint="a resource name like 'nvidia.com/gpu'",
        max_length=MAX_RESOURCE_NAME,
        **spec,
    )
