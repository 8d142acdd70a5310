"""Rules on ``gpus``: the product against its architecture, and MIG on the product.

The MIG rules also run on each node config's view (a node config may set its own layout and
strategy); see :func:`gpustack.profile.rules.node_configs.per_node_config`.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.profile import catalog
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile
from gpustack.profile.rules.common import DP


def product_matches_architecture(p: Profile) -> Iterator[Finding]:
    gpus = p.gpus
    if gpus.product and gpus.architecture:
        actual = catalog.PRODUCTS[gpus.product].architecture
        if actual != gpus.architecture:
            yield Finding(
                ("gpus", "architecture"),
                f"the architecture of {gpus.product} is {actual}, not {gpus.architecture}",
                f"remove gpus.architecture or set it to {actual}",
            )


def _uses_mig(p: Profile) -> bool:
    return p.device_plugin.mig_strategy != "none" or bool(p.gpus.mig)


def mig_needs_capable_gpu(p: Profile) -> Iterator[Finding]:
    if not _uses_mig(p):
        return
    at = ("gpus", "mig") if p.gpus.mig else (DP, "migStrategy")
    product = catalog.PRODUCTS.get(p.gpus.product or "")
    if product is not None and not product.mig_capable:
        capable = ", ".join(n for n, q in catalog.PRODUCTS.items() if q.mig_capable)
        yield Finding(
            at,
            f"{product.name} does not support MIG",
            f"remove the MIG settings, or use a MIG-capable product: {capable}",
        )
    elif product is None and p.gpus.mig:
        yield Finding(
            ("gpus", "mig"),
            "a MIG layout needs gpus.product to check its profiles",
            "set gpus.product, e.g. A100-SXM4-80GB",
        )


def mig_layout_fits(p: Profile) -> Iterator[Finding]:
    product = catalog.PRODUCTS.get(p.gpus.product or "")
    if not p.gpus.mig or product is None or not product.mig_capable:
        return
    compute = memory = 0
    for name, count in p.gpus.mig:
        profile = product.mig.get(name)
        if profile is None:
            yield Finding(
                ("gpus", "mig", name),
                f"{name} is not a MIG profile of {product.name}",
                f"use one of: {', '.join(product.mig)}",
                at_key=True,
            )
            return
        compute += profile.compute * count
        memory += profile.memory * count
    if compute > product.compute_slices or memory > product.memory_slices:
        yield Finding(
            ("gpus", "mig"),
            f"the MIG layout needs {compute} compute and {memory} memory slices; {product.name} "
            f"has {product.compute_slices} and {product.memory_slices}",
            "use fewer or smaller instances",
        )


def mig_strategy_matches_layout(p: Profile) -> Iterator[Finding]:
    strategy = p.device_plugin.mig_strategy
    layout = p.gpus.mig
    # without the device plugin nothing advertises MIG resources (NVIDIA's DRA driver publishes
    # MIG devices whatever the plugin's strategy says)
    if layout and strategy == "none" and p.device_plugin.enabled:
        yield Finding(
            ("gpus", "mig"),
            "gpus.mig defines a MIG layout, but devicePlugin.migStrategy is none, so no MIG "
            "device is advertised",
            "set devicePlugin.migStrategy: mixed, or single for a uniform layout",
        )
    if strategy == "single" and len(layout) > 1:
        yield Finding(
            ("gpus", "mig"),
            "migStrategy single needs every MIG device to be the same profile",
            "use one MIG profile, or set devicePlugin.migStrategy: mixed",
        )
