"""``gpus``: the GPUs on the selected nodes, which the compatibility rules read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from gpustack.fields import SORTED_MAP, Spec, item, key
from gpustack.profile import catalog

#: A MIG layout per GPU: profile name to instance count, sorted.
MigLayout = Annotated[
    tuple[tuple[str, Annotated[int, item(minimum=1, maximum=7)]], ...], SORTED_MAP
]


@dataclass(frozen=True)
class Gpus:
    """The GPU inventory expected on the selected nodes; compatibility checks read it.

    Give ``product`` (a catalog name such as ``H100-SXM5-80GB``) or, when the exact product is
    unknown, only ``architecture``. ``mig`` is the MIG layout per GPU (profile -> count).
    """

    product: str | None = key(
        "Product",
        "GPU product on the nodes (implies the architecture).",
        default=None,
        enum=tuple(sorted(catalog.PRODUCTS)),
        examples=["H100-SXM5-80GB", "L4"],
    )
    architecture: str | None = key(
        "Architecture",
        "GPU architecture, when the exact product is not known.",
        default=None,
        enum=tuple(catalog.ARCHITECTURES),
        examples=["hopper"],
    )
    per_node: int = key(
        "GPUs per node",
        "How many GPUs each node has: the simulated backend advertises this many, "
        "and no example job may request more.",
        default=1,
        minimum=1,
        maximum=16,
        examples=[8],
    )
    mig: MigLayout = key(
        "MIG layout",
        "MIG instances per GPU: profile name to count (needs a MIG-capable product).",
        factory=tuple,
        keys=Spec(pattern=r"^\d+g\.\d+gb$", examples=("1g.10gb",)),
        examples=[{"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}],
    )
