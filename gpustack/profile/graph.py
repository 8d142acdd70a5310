"""The readiness and placement graph of a profile's stack: who waits for which file, who writes
it, and which node labels the pods' placement depends on.

Why: a pod that waits for a file no pod on its node writes never starts, and a pod placed by a
label that only a pod placed the same way writes never reaches a fresh node. Both are valid
manifests that place or start nothing, which only a real node shows (issue 20: ``a100-mig-mixed``
selected GFD's ``nvidia.com/gpu.product`` and placed nothing; without the device plugin, GFD,
the DCGM exporter and the MIG manager waited for ``toolkit-ready`` forever). The graph is read
from the component registry (:mod:`gpustack.profile.components`: ``waits_for``, ``writes_files``,
``writes_labels``, ``placement``), whose file decisions the constructs share
(:mod:`gpustack.profile.readiness`); the rules in :mod:`gpustack.profile.rules.readiness` and
:mod:`gpustack.profile.rules.node_labels` turn it into findings.

Placement, as the profile decides it: every component's pods but NFD's worker are placed by
``cluster.nodeSelector`` (:data:`~gpustack.profile.components.GPU_NODES`); the worker runs on every
node. Per-node switches the profile does not decide are taken as on: each component's own deploy
label (the team's and NVIDIA's driver manager's), the driver's OS and kernel pins (the profile
states the GPU nodes' OS in ``driver.osTag``), and the device plugin's node configs, whose
DaemonSets together cover every selected node. Pure: no cdk8s.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpustack.profile import components, readiness
from gpustack.profile import node_label_catalog as catalog
from gpustack.profile.model import Profile


@dataclass(frozen=True)
class Pods:
    """The pods of one enabled component under a profile."""

    component: components.Component
    waits: frozenset[str]
    writes: frozenset[str]
    labels: frozenset[str]

    @property
    def name(self) -> str:
        return self.component.name

    def covers(self, other: Pods) -> bool:
        """Whether these pods run on every node ``other``'s pods run on."""
        return self.component.placement in (components.EVERY_NODE, other.component.placement)


@dataclass(frozen=True)
class Edge:
    """A readiness file one component waits for, with the components that write it.

    ``writers``: enabled components that write it on every node of the waiter; ``elsewhere``:
    enabled ones that write it only on some; ``external``: who provides it and the setting that
    needs it, for a file no gpustack pod writes (:data:`gpustack.profile.readiness.EXTERNAL`)."""

    file: str
    waiter: Pods
    writers: tuple[Pods, ...]
    elsewhere: tuple[Pods, ...]
    external: tuple[str, str] | None

    @property
    def satisfied(self) -> bool:
        return bool(self.writers) or self.external is not None


@dataclass(frozen=True)
class Graph:
    """Every enabled component's pods and every wait between them, in registry order."""

    pods: tuple[Pods, ...]
    edges: tuple[Edge, ...]

    def label_writers(self, key: str) -> tuple[Pods, ...]:
        """The components whose pods write node label ``key``, per the label catalog."""
        known = catalog.lookup(key)
        if known is None:
            return ()
        return tuple(p for p in self.pods if known.source in p.labels)

    def self_placed(self, key: str) -> tuple[Pods, ...]:
        """The writers of ``key`` when only pods placed like the stack write it (no labeller
        outside the stack, none on every node): the stack can never reach a fresh node by it.
        Empty otherwise."""
        known = catalog.lookup(key)
        if known is None or known.source not in catalog.STACK_ONLY:
            return ()
        writers = self.label_writers(key)
        if any(w.component.placement == components.EVERY_NODE for w in writers):
            return ()
        return writers


def graph_edges(profile: Profile) -> Graph:
    """The readiness and placement graph of ``profile``'s enabled components."""
    pods = tuple(
        Pods(c, c.waits_for(profile), c.writes_files(profile), c.writes_labels(profile))
        for c in components.enabled(profile)
    )
    edges = []
    for waiter in pods:
        for file in sorted(waiter.waits):
            writing = [p for p in pods if file in p.writes]
            edges.append(
                Edge(
                    file,
                    waiter,
                    tuple(p for p in writing if p.covers(waiter)),
                    tuple(p for p in writing if not p.covers(waiter)),
                    readiness.EXTERNAL.get(file),
                )
            )
    return Graph(pods, tuple(edges))


def could_write(profile: Profile, file: str) -> tuple[components.Component, ...]:
    """Components this profile leaves off that would write ``file`` if turned on."""
    on = {c.name for c in components.enabled(profile)}
    return tuple(
        c for c in components.REGISTRY if c.name not in on and file in c.writes_files(profile)
    )
