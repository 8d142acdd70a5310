"""The plan's values: what one cluster's change does, in frozen dataclasses that the renderers
(text, JSON, a pull-request comment) and ``synth``'s rollout note read.

The effect names are the JSON format's vocabulary (``docs/how-to/plan.md``): stable strings,
not enum members, so a reader in another language compares them as they are written.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: A driver pod's replacement reinstalls the driver: its driver manager evicts the node's GPU
#: pods (draining it if that is not enough) first.
EVICTS: str = "evicts-gpu-workloads"
#: A toolkit pod's restart runs the installer's cleanup and restarts containerd or CRI-O.
RUNTIME_RESTART: str = "restarts-container-runtime"
#: While a device-plugin or DRA-plugin pod restarts its node advertises (or prepares) no GPUs.
GPU_DIP: str = "allocatable-gpus-dip"
#: An ``OnDelete`` workload's pods keep their old template until someone deletes them.
WAITS_FOR_DELETE: str = "waits-for-pod-delete"
#: A DaemonSet whose placement (node selector, node affinity, tolerations) changes: the
#: controller deletes its pods on the nodes it no longer selects at once, whatever the update
#: strategy (``OnDelete`` too: placement is not an update), and starts pods on the nodes it
#: newly selects (the DaemonSet controller's ``nodeShouldRunDaemonPod``, Kubernetes
#: ``pkg/controller/daemon/daemon_controller.go``; the e2e tier sees it happen).
PLACEMENT: str = "placement-changes"


@dataclass(frozen=True, order=True)
class Ref:
    """One object: kind, namespace (``""`` for a cluster-scoped one), name."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"


@dataclass(frozen=True)
class Rollout:
    """A workload whose pod template changes: its pods are replaced.

    ``strategy``: ``OnDelete``, ``RollingUpdate`` (with ``max_unavailable``/``max_surge`` as
    written or Kubernetes' defaults) or ``Recreate``. ``nodes``: which nodes run it (its node
    selector and required node affinity, ``all nodes`` when none), which tells node pools apart.
    ``changed``: what in the template differs (``image``, ``env``, ``labels``...).
    ``effects``: the names above.
    """

    ref: Ref
    component: str
    strategy: str
    max_unavailable: str
    max_surge: str
    nodes: str
    changed: tuple[str, ...]
    effects: tuple[str, ...]
    selector: str
    version: tuple[str, str] = ("", "")


@dataclass(frozen=True)
class ConfigChange:
    """A ConfigMap or Secret whose content changes, the keys that change, and the workloads
    that mount it with whether each rolls (its template changes too) or keeps reading the old
    content until its pods restart."""

    ref: Ref
    keys: tuple[str, ...]
    mounted_by: tuple[tuple[Ref, bool], ...] = ()


@dataclass(frozen=True)
class ManualStep:
    """What no sync does by itself, why, and the commands that do it."""

    kind: str
    ref: Ref
    why: str
    commands: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClusterPlan:
    """One cluster's change. ``status``: ``changed``, ``unchanged``, ``added`` (a new cluster:
    nothing running changes) or ``removed`` (its folder goes). ``replaced``: Jobs whose spec
    changes; a Job's pod template is immutable, so the sync deletes and creates it again (the
    example Jobs carry Argo CD's ``Replace=true`` and Flux's ``force``) and it runs again."""

    name: str
    status: str
    rollouts: tuple[Rollout, ...] = ()
    configs: tuple[ConfigChange, ...] = ()
    mig_configs: tuple[str, ...] = ()
    in_place: tuple[Ref, ...] = ()
    replaced: tuple[Ref, ...] = ()
    metadata_only: tuple[Ref, ...] = ()
    added: tuple[Ref, ...] = ()
    removed: tuple[Ref, ...] = ()
    manual: tuple[ManualStep, ...] = ()

    @property
    def disruptive(self) -> bool:
        """Whether a pod is replaced, a node repartitioned or a manual step needed."""
        return bool(self.rollouts or self.mig_configs or self.manual or self.replaced)


@dataclass(frozen=True)
class Plan:
    """Every cluster compared, by name, and the two sides' names (``base``: a git ref)."""

    base: str
    head: str
    clusters: tuple[ClusterPlan, ...] = field(default_factory=tuple)

    @property
    def disruptive(self) -> bool:
        return any(c.disruptive for c in self.clusters)
