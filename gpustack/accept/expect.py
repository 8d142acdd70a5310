"""What the acceptance run expects of each node, derived from the profile.

One :class:`Group` per plugin config (the top-level one and each node config): the resources
its devices Job requests to hold every device a node advertises, what ``nvidia-smi -L`` must
then list, and whether an all-reduce is measured there, against which threshold.

Shared GPUs (time-slicing, MPS) are checked by requesting every replica: where a container may
ask for one replica only (``failRequestsGreaterThanOne``, and always with MPS) the pod has one
container per replica, so it is admitted only if the node offers them all (at most
:data:`MAX_CONTAINERS`). MIG devices are requested by profile (``mixed``) or as the plugin's
resource (``single``). The all-reduce needs whole GPUs: not with MIG or sharing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpustack.profile import catalog, derive
from gpustack.profile.model import Profile

#: The most containers one devices pod gets for per-replica requests.
MAX_CONTAINERS = 64
#: Default share by which a measured bus bandwidth may fall short of the expected one.
DEFAULT_TOLERANCE = 0.2


@dataclass(frozen=True)
class Bandwidth:
    """The bus bandwidth an all-reduce must reach (GB/s): ``expected`` from the interconnect
    (:func:`gpustack.profile.catalog.expected_busbw`), less ``tolerance``; or the user's."""

    source: str
    expected: float
    threshold: float


@dataclass(frozen=True)
class Host:
    """One GPU node known by name (from a recorded state): ``name`` is the Node object's name
    (what the pods print as their node), ``hostname`` its ``kubernetes.io/hostname`` label
    (:data:`~gpustack.kube.labels.HOSTNAME_LABEL`: what a pod is pinned by; the name where the
    label is missing)."""

    name: str
    hostname: str


@dataclass(frozen=True)
class Group:
    """The nodes of one plugin config: ``config`` is the node config's name (``None``: the
    top-level config), ``nodes`` how many of them the run covers, and ``hosts`` which ones
    when a state names them (empty: only counted, so the pods cannot be pinned)."""

    config: str | None
    view: Profile
    nodes: int
    #: Requests of each devices container, and how many such containers.
    requests: tuple[tuple[str, int], ...]
    containers: int
    #: What each container's ``nvidia-smi -L`` must show (the harness's GPUSTACK_EXPECT).
    expect: dict[str, object] = field(default_factory=dict)
    bandwidth: Bandwidth | None = None
    #: Why there is no all-reduce here (one GPU per node, MIG, sharing, no product).
    no_bandwidth: str | None = None
    hosts: tuple[Host, ...] = ()

    @property
    def suffix(self) -> str:
        return f"-{self.config}" if self.config else ""


def smi_name(product: str | None) -> str | None:
    """The name ``nvidia-smi`` prints for a catalog product."""
    for smi, name in catalog.SMI_PRODUCT_NAMES.items():
        if name == product:
            return smi
    return None


def bandwidth(
    view: Profile, tolerance: float, min_busbw: float | None
) -> tuple[Bandwidth | None, str | None]:
    if min_busbw is not None:
        return Bandwidth("--min-busbw", min_busbw, min_busbw), None
    found = catalog.expected_busbw(view.gpus.product) if view.gpus.product else None
    if found is None:
        return None, "gpus.product is not set, so no interconnect is known (give --min-busbw)"
    link, expected = found
    threshold = round(expected * (1 - tolerance), 2)
    return Bandwidth(f"{view.gpus.product} {link.name}", expected, threshold), None


def group(
    config: str | None,
    view: Profile,
    nodes: int,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    min_busbw: float | None = None,
    hosts: tuple[Host, ...] = (),
) -> Group:
    dp, gpus = view.device_plugin, view.gpus
    per_node = gpus.per_node
    expect: dict[str, object] = {"gpus": per_node, "product": smi_name(gpus.product)}
    requests: list[tuple[str, int]] = []
    containers = 1
    whole = True
    if derive.is_simulated(view):
        expect = {"simulated": True}
    if dp.mig_strategy == "mixed" and gpus.mig:
        whole = False
        expect["mig"] = {name: n * per_node for name, n in gpus.mig}
        requests = [
            (derive.shared_name(view, f"{derive.MIG_RESOURCE_PREFIX}{name}"), n * per_node)
            for name, n in gpus.mig
        ]
    elif dp.mig_strategy == "single" and gpus.mig:
        whole = False
        name, n = gpus.mig[0]
        expect["mig"] = {name: n * per_node}
        requests = [(derive.shared_name(view, dp.resource_name), n * per_node)]
    else:
        resource = derive.shared_name(view, dp.resource_name)
        shared = derive.shared_entry(view, resource)
        replicas = shared.replicas if shared is not None else 1
        if shared is not None:
            whole = False
            mode = derive.sharing(view)
            one_each = dp.mps is not None or (
                mode is not None and mode.fail_requests_greater_than_one
            )
            if one_each:
                containers = min(per_node * replicas, MAX_CONTAINERS)
                requests = [(resource, 1)]
                expect["gpus"] = 1
            else:
                requests = [(resource, per_node * replicas)]
        else:
            requests = [(resource, per_node)]
    measured, why = None, None
    if derive.is_simulated(view):
        why = "simulated GPUs: there is no NCCL to measure"
    elif not whole:
        why = "GPUs are partitioned (MIG) or shared: an all-reduce needs whole GPUs"
    elif per_node < 2 and nodes < 2:
        why = "one GPU on one node: nothing to all-reduce between"
    else:
        measured, why = bandwidth(view, tolerance, min_busbw)
    return Group(config, view, nodes, tuple(requests), containers, expect, measured, why, hosts)


def groups(
    profile: Profile,
    nodes: dict[str | None, int],
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    min_busbw: float | None = None,
    hosts: dict[str | None, tuple[Host, ...]] | None = None,
) -> list[Group]:
    """One group per plugin config that has nodes (``nodes``: config name -> node count;
    ``hosts``: config name -> its nodes by name, when a state names them)."""
    named = hosts or {}
    return [
        group(
            name,
            view,
            nodes[name],
            tolerance=tolerance,
            min_busbw=min_busbw,
            hosts=named.get(name, ()),
        )
        for name, view in derive.plugin_configs(profile)
        if nodes.get(name, 0) > 0
    ]
