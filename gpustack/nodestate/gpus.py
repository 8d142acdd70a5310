"""The node-state checks of the profile's GPUs: product, architecture, count and MIG against
what GPU Feature Discovery labels the nodes with (:mod:`.facts`)."""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.nodes import Nodes, node_view
from gpustack.kube.state import JSON, labels
from gpustack.nodestate import facts
from gpustack.nodestate.mismatch import mismatch, names, node_word
from gpustack.profile import catalog
from gpustack.profile.document import JsonPath
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile

DP = "devicePlugin"


def gpu_product_matches_nodes(p: Profile, n: Nodes) -> Iterator[Finding]:
    want = p.gpus.product
    if want is None:
        return

    def found(node: JSON) -> object:
        raw = facts.product_label(node)
        return None if raw is None else (facts.product(node), raw)

    yield from mismatch(
        ("gpus", "product"),
        n.selected,
        found,
        lambda v: isinstance(v, tuple) and v[0] != want,
        lambda v: (
            f"{v[1]} (gpus.product {v[0]})"
            if isinstance(v, tuple) and v[0]
            else f"{v[1] if isinstance(v, tuple) else v}, a product gpustack's catalog lacks"
        ),
        f"gpus.product is {want}",
        "set gpus.product to the nodes' (GFD's nvidia.com/gpu.product, as nvidia-smi names it),"
        " or select only the nodes that have it",
    )


def host_architecture_matches_product(p: Profile, n: Nodes) -> Iterator[Finding]:
    want = catalog.PRODUCT_HOST_ARCH.get(p.gpus.product or "")
    if want is None:
        return
    yield from mismatch(
        ("gpus", "product"),
        n.selected,
        lambda node: facts.info(node, "architecture"),
        lambda v: v != want,
        lambda v: f"{v} hosts",
        f"{p.gpus.product} is only built into {want} hosts",
        "set gpus.product to the nodes' GPU, or select the nodes that carry it",
    )


def gpu_architecture_matches_nodes(p: Profile, n: Nodes) -> Iterator[Finding]:
    want = p.gpus.architecture
    if want is None or p.gpus.product is not None:
        return  # with a product, gpu-product-matches-nodes says more
    yield from mismatch(
        ("gpus", "architecture"),
        n.selected,
        facts.architecture,
        lambda v: v != want,
        lambda v: f"{v} GPUs",
        f"gpus.architecture is {want}",
        "set gpus.architecture to the nodes' (GFD's nvidia.com/gpu.family)",
    )


def _node_config_index(p: Profile, node: JSON) -> int | None:
    chosen = labels(node).get(p.device_plugin.node_config_label)
    for i, nc in enumerate(p.device_plugin.node_configs):
        if nc.name == chosen:
            return i
    return None


def _promised_count(p: Profile, node: JSON) -> int | None:
    """What GFD's ``nvidia.com/gpu.count`` should say on this node: its GPUs, or under the
    ``single`` MIG strategy (product ``<name>-MIG-<profile>``) its MIG devices (k8s-device-plugin
    v0.20.0 internal/lm/mig-strategy_test.go); ``None`` where the layout is not known."""
    view = node_view(p, node)
    if "-MIG-" in (facts.product_label(node) or ""):
        return view.gpus.per_node * sum(n for _, n in view.gpus.mig) if view.gpus.mig else None
    return view.gpus.per_node


def gpu_count_matches_nodes(p: Profile, n: Nodes) -> Iterator[Finding]:
    """``gpus.perNode`` (or a node config's) against GFD's ``nvidia.com/gpu.count``."""
    by_path: dict[tuple[JsonPath, int], list[JSON]] = {}
    for node in n.selected:
        want = _promised_count(p, node)
        if want is None:
            continue
        i = _node_config_index(p, node)
        own = i is not None and p.device_plugin.node_configs[i].gpus.per_node is not None
        at: JsonPath = (DP, "nodeConfigs", i, "gpus", "perNode") if own else ("gpus", "perNode")  # type: ignore[assignment]
        by_path.setdefault((at, want), []).append(node)
    for (at, want), nodes in by_path.items():
        yield from mismatch(
            at,
            nodes,
            facts.gpu_count,
            lambda v, want=want: v != want,  # type: ignore[misc]
            lambda v: f"{v} GPU{'' if v == 1 else 's'}",
            f"the profile promises {want} GPU{'' if want == 1 else 's'} per node",
            "set perNode to what the nodes have (examples, sharing and the acceptance run"
            " count on it)",
        )


def mig_capable_nodes(p: Profile, n: Nodes) -> Iterator[Finding]:
    found: dict[JsonPath, list[JSON]] = {}
    for node in n.selected:
        view = node_view(p, node)
        if view.device_plugin.mig_strategy == "none" and not view.gpus.mig:
            continue
        if facts.mig_capable(node) is not False:
            continue
        at: JsonPath = ("gpus", "mig") if view.gpus.mig else (DP, "migStrategy")
        found.setdefault(at, []).append(node)
    for at, nodes in found.items():
        shown = ", ".join(sorted({facts.product_label(x) or "GPU" for x in nodes}))
        yield Finding(
            at,
            f"the profile partitions GPUs with MIG, but {node_word(len(nodes))} {names(nodes)}"
            f" {'is' if len(nodes) == 1 else 'are'} not MIG-capable (nvidia.com/mig.capable"
            f"=false; {shown})",
            "remove the MIG settings for these nodes (a node config without MIG), or select"
            " MIG-capable nodes",
        )
