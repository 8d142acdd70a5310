"""What several rule modules share: where sections live (JSON paths) and how to name a GPU.

Only helpers that speak the rules' language (paths, message fragments) belong here; what a
profile means goes to :mod:`gpustack.profile.derive`, which the constructs share too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

from gpustack.plugin.config.keys import GPU_RESOURCE, MAX_RESOURCE_NAME
from gpustack.profile import catalog
from gpustack.profile.derive import architecture_of
from gpustack.profile.document import JsonPath
from gpustack.profile.model import Mps, Profile, TimeSlicing

DP = "devicePlugin"
TS: JsonPath = (DP, "sharing", "timeSlicing")
MPS: JsonPath = (DP, "sharing", "mps")
NC: JsonPath = (DP, "nodeConfigs")

_RESOURCE_NAME = re.compile(
    r"^nvidia\.com/([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$"
)


def well_formed(name: str) -> bool:
    """A resource name both device plugins accept: ``nvidia.com/<DNS subdomain>``, at most
    :data:`MAX_RESOURCE_NAME` characters with the prefix (the plugin config's own limit)."""
    return _RESOURCE_NAME.fullmatch(name) is not None and len(name) <= MAX_RESOURCE_NAME


#: The resources GPU workloads ask for by name: whole GPUs, and the shared GPUs that sharing with
#: ``renameByDefault`` advertises (NVIDIA's k8s-device-plugin, api/config/v1/resources.go and
#: replicas.go: the default resource, and the ``.shared`` suffix its rename adds).
WELL_KNOWN_RESOURCES = (GPU_RESOURCE, f"{GPU_RESOURCE}.shared")


def near_miss(name: str) -> str | None:
    """The well-known resource ``name`` is a slip of (another case, or one letter added,
    dropped, changed, or two swapped), or ``None``: a name of one's own differs by more."""
    folded = name.lower()
    for known in WELL_KNOWN_RESOURCES:
        if name != known and _one_slip(folded, known):
            return known
    return None


def _one_slip(a: str, b: str) -> bool:
    if a == b:
        return True
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diff) == 1:
            return True
        i = diff[0]
        return len(diff) == 2 and diff[1] == i + 1 and a[i] == b[i + 1] and a[i + 1] == b[i]
    short, long = sorted((a, b), key=len)
    if len(long) - len(short) != 1:
        return False
    i = next((i for i, (x, y) in enumerate(zip(short, long, strict=False)) if x != y), len(short))
    return short[i:] == long[i + 1 :]


def sharing_kind(shared: TimeSlicing) -> str:
    """How messages name a sharing section: ``MPS`` or ``time-slicing``."""
    return "MPS" if isinstance(shared, Mps) else "time-slicing"


def example_path(i: int, *rest: str) -> JsonPath:
    return ("workloads", "examples", i, *rest)


def sharing_sections(profile: Profile) -> Iterator[tuple[JsonPath, TimeSlicing]]:
    """Each sharing section the profile gives, with its path: timeSlicing, then mps."""
    dp = profile.device_plugin
    if dp.time_slicing is not None:
        yield TS, dp.time_slicing
    if dp.mps is not None:
        yield MPS, dp.mps


def gpu_minimum(
    profile: Profile, attr: Literal["min_driver", "first_cuda"]
) -> tuple[str, str] | None:
    """A minimum (``min_driver`` or ``first_cuda``) of the profile's GPUs, with how to name who
    needs it: the product where it overrides its architecture, else the architecture."""
    arch = architecture_of(profile)
    if arch is None:
        return None
    product = catalog.PRODUCTS.get(profile.gpus.product or "")
    if product is not None and getattr(product, attr) is not None:
        return getattr(product, attr), f"{product.name}, which needs"
    minimum = getattr(arch, attr)
    return (minimum, f"{arch.name.capitalize()} GPUs, which need") if minimum else None
