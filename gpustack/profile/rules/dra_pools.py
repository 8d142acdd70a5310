"""Rules for a device plugin pool next to a DRA pool (``dra.nodeSelector``): moving GPU nodes
from the device plugin to NVIDIA's DRA driver one pool at a time.

How gpustack places the two (the facts the rules stand on):

- NVIDIA's DRA kubelet plugin runs on the nodes that carry ``cluster.nodeSelector`` and every
  label of ``dra.nodeSelector``: the DRA pool.
- Every device plugin DaemonSet (the top-level one and one per node config, selected by
  ``<devicePlugin.nodeConfigLabel>=<name>``) runs on the nodes of ``cluster.nodeSelector`` and
  is kept off any node that carries one of ``dra.nodeSelector``'s labels (one ``NotIn`` per label:
  :func:`gpustack.profile.derive.device_plugin_avoids`). The two pools are disjoint by
  construction, so pools "overlap" when a plugin DaemonSet's own selection requires a label of
  the DRA pool: every node it would run on is one it is kept off, and it runs on none.
- The scheduler serves an ``nvidia.com/gpu`` limit from the device plugin on a node that
  advertises ``nvidia.com/gpu``, and from the DeviceClass whose ``extendedResourceName`` is
  ``nvidia.com/gpu`` on a node that does not (KEP-5004): the extended resource name helps only on
  nodes the device plugin leaves alone.

Without ``dra.nodeSelector`` the DRA pool is every GPU node; ``dra-device-plugin-same-gpus``
(:mod:`gpustack.profile.rules.dra`) refuses that next to an enabled device plugin.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack import dra_upstream
from gpustack.profile.derive import advertised_anywhere, dra_allocates_gpus
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile

#: The extended resource the ``gpu.nvidia.com`` DeviceClass answers with extendedResourceName.
EXTENDED_RESOURCE = next(
    c.extended_resource_name
    for c in dra_upstream.DEVICE_CLASSES
    if c.name == dra_upstream.GPU_DEVICE_CLASS
)


def _plugin_pools(p: Profile) -> Iterator[tuple[str, tuple[str, str]]]:
    """(the plugin DaemonSet's pool in words, one label every node of that pool carries)."""
    for pair in p.cluster.node_selector:
        yield "the device plugin's pool (cluster.nodeSelector)", pair
    label = p.device_plugin.node_config_label
    for nc in p.device_plugin.node_configs:
        yield f"the device plugin's node config {nc.name}", (label, nc.name)


def dra_pools_overlap(p: Profile) -> Iterator[Finding]:
    if not (dra_allocates_gpus(p) and p.device_plugin.enabled):
        return
    dra_labels = set(p.dra.node_selector)
    for pool, (key, value) in _plugin_pools(p):
        if (key, value) in dra_labels:
            yield Finding(
                ("dra", "nodeSelector", key),
                f"{pool} selects {key}={value}, a label of the DRA pool: the device plugin is"
                " kept off every node that carries it, so it would run on no node",
                "label the DRA pool's nodes with a label only they carry, such as"
                " nvidia.com/gpu.allocation=dra, and select that in dra.nodeSelector",
            )


def dra_extended_resource_same_nodes(p: Profile) -> Iterator[Finding]:
    dra = p.dra
    if not (dra_allocates_gpus(p) and dra.extended_resource_name and p.device_plugin.enabled):
        return
    if dra.node_selector or EXTENDED_RESOURCE not in advertised_anywhere(p):
        return
    yield Finding(
        ("dra", "extendedResourceName"),
        f"the device plugin advertises {EXTENDED_RESOURCE} on the nodes whose GPUs DRA"
        f" allocates (dra.nodeSelector is empty): the scheduler serves a {EXTENDED_RESOURCE}"
        f" limit from the device plugin wherever it advertises it, so the"
        f" {dra_upstream.GPU_DEVICE_CLASS} DeviceClass never serves it",
        "set dra.nodeSelector to the DRA pool's label (the device plugin stays off it), or"
        " devicePlugin.enabled: false",
    )
