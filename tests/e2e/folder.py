"""What a cluster folder in ``dist/clusters/`` asks of a cluster, and what its nodes look like.

Why here and not from the constructs: the tier checks the written folder as a cluster receives
it, so it reads the folder's manifests (and the profile they came from, for the GPUs a node has)
and decides from them, at each stage of a node's life, which labels and resources the node
carries and which pods must land on it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from gpustack.checker import check_paths
from gpustack.constructs import device_plugin_props as plugin_names
from gpustack.constructs import dra_driver, driver
from gpustack.constructs.common import PREREQUISITES, PREREQUISITES_KEY
from gpustack.constructs.nfd import WORKER_CONF_KEY, WORKER_CONF_MAP
from gpustack.profile.derive import plugin_configs
from gpustack.profile.model import Profile
from tests.e2e import gfd
from tests.e2e.advertised import advertised, node_gpus

REPO: Final = Path(__file__).resolve().parents[2]
CLUSTERS: Final = REPO / "dist" / "clusters"
PROFILES: Final = REPO / "profiles"
#: CRDs of other projects, by the name a folder's statement gives them (the Prometheus
#: Operator's ServiceMonitor): what a cluster that meets the prerequisites has installed.
EXTERNAL_CRDS: Final = REPO / "tests" / "crds"

#: Label prefixes the kubelet or the cloud sets when a node joins; a selector on them is the
#: platform's business, and every fake node carries the profile's values for them.
PLATFORM_PREFIXES: Final = (
    "kubernetes.io/",
    "node.kubernetes.io/",
    "topology.kubernetes.io/",
    "cloud.google.com/",
    "eks.amazonaws.com/",
    "kubernetes.azure.com/",
    "node-role.kubernetes.io/",
)
#: GKE's driver installer puts the host driver here; the toolkit installs there on GKE too.
GKE_DRIVER_ROOT: Final = "/home/kubernetes/bin/nvidia"
#: Labels and taints only GKE's node pools carry (``gke-accelerator``, ``gke-nodepool``...).
GKE_PREFIX: Final = "cloud.google.com/gke-"
#: The taint GKE puts on every node of a GPU node pool (GKE's "About GPUs in GKE": GPU nodes are
#: tainted ``nvidia.com/gpu=present:NoSchedule``); its CPU pools carry none.
GKE_GPU_TAINT: Final = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
#: Selector labels that a CPU node of the same cluster carries too, with the same value: the
#: region, the zone, the OS and architecture, node roles and GKE's OS image. Every other label a
#: selector names (an accelerator, a node pool's name, a team's label) is a GPU pool's.
SHARED_WITH_CPU_NODES: Final = (
    "topology.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "kubernetes.io/os",
    "kubernetes.io/arch",
    "node-role.kubernetes.io/",
    "cloud.google.com/gke-os-distribution",
)
#: The label Node Feature Discovery's worker sets for any PCI device of NVIDIA (vendor 10de) with
#: its default configuration (``deviceLabelFields: [vendor]``); NVIDIA's vendor ID.
NVIDIA_VENDOR: Final = "10de"
NFD_PREFIX: Final = "feature.node.kubernetes.io/"
NFD_NVIDIA_LABEL: Final = f"{NFD_PREFIX}pci-{NVIDIA_VENDOR}.present"
#: The PCI class of a 3D controller (datacenter GPUs), as NFD reports it.
GPU_PCI_CLASS: Final = "0302"
NFD_COMPONENT: Final = "node-feature-discovery"

#: Stages of a GPU node's life, in order.
STAGES: Final = ("fresh", "labelled", "advertised")
#: The pool of GPU nodes whose GPUs NVIDIA's DRA driver hands out (``dra.nodeSelector``); not a
#: device plugin node config (those are DNS labels, this is not one).
DRA_POOL: Final = "(dra)"


@dataclass(frozen=True)
class Folder:
    """One cluster folder: its manifests in kustomization order, and its profile."""

    name: str
    path: Path
    objects: tuple[Mapping[str, Any], ...]
    profile: Profile
    #: Labels the team puts on its GPU nodes itself (deploy labels, when required).
    team_labels: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def load(
        cls, path: Path, profiles: Path = PROFILES, team_labels: Mapping[str, str] | None = None
    ) -> Folder:
        kustomization = yaml.safe_load((path / "kustomization.yaml").read_text())
        objects: list[Mapping[str, Any]] = []
        for rel in kustomization["resources"]:
            objects += [o for o in yaml.safe_load_all((path / rel).read_text()) if o]
        result = check_paths([profiles / f"{path.name}.yaml"])
        assert result.ok, [str(i) for i in result.issues]
        (loaded,) = result.profiles
        return cls(path.name, path, tuple(objects), loaded.profile, dict(team_labels or {}))

    def resources(self) -> list[str]:
        """The files of the kustomization, in its order."""
        doc = yaml.safe_load((self.path / "kustomization.yaml").read_text())
        return list(doc["resources"])

    def of_kind(self, kind: str) -> Iterator[Mapping[str, Any]]:
        return (o for o in self.objects if o["kind"] == kind)

    def prerequisites(self) -> dict[str, list[dict[str, str]]]:
        """The folder's own statement of what the cluster must have before it is applied
        (the ``gpustack-prerequisites`` ConfigMap: ``crds`` and ``files``)."""
        (statement,) = [
            o["data"][PREREQUISITES_KEY]
            for o in self.of_kind("ConfigMap")
            if o["metadata"]["name"] == PREREQUISITES
        ]
        found: dict[str, list[dict[str, str]]] = yaml.safe_load(statement)
        return found

    def external_crds(self) -> list[Path]:
        """The CRDs the folder states as prerequisites, each from tests/crds/ (by its name):
        the tier installs what the statement names, and knows nothing else about the folder's
        needs."""
        available = {
            yaml.safe_load(p.read_text())["metadata"]["name"]: p
            for p in sorted(EXTERNAL_CRDS.glob("*.yaml"))
        }
        wanted = [c["name"] for c in self.prerequisites()["crds"]]
        missing = [name for name in wanted if name not in available]
        assert not missing, f"{self.name} states CRDs tests/crds/ lacks: {missing}"
        return [available[name] for name in wanted]

    def apply_first(self) -> list[Path]:
        """The folder's own CRD files its statement says to apply before the folder (a
        custom resource of them is in the folder: an example's ComputeDomain)."""
        wanted = {c["name"] for c in self.prerequisites().get("applyFirst", [])}
        found = [
            self.path / rel
            for rel in self.resources()
            if rel.rpartition("/")[2].startswith("customresourcedefinition-")
            and rel.rpartition("/")[2]
            .removeprefix("customresourcedefinition-")
            .removesuffix(".yaml")
            in wanted
        ]
        assert len(found) == len(wanted), f"{self.name}: applyFirst names {sorted(wanted)}"
        return found

    def namespaces(self) -> list[str]:
        names = {o["metadata"]["namespace"] for o in self.objects if o["metadata"].get("namespace")}
        return sorted(names | {o["metadata"]["name"] for o in self.of_kind("Namespace")})

    def daemonsets(self) -> dict[str, str]:
        """DaemonSet name -> its component (``app.kubernetes.io/component``)."""
        return {
            d["metadata"]["name"]: d["metadata"]["labels"]["app.kubernetes.io/component"]
            for d in self.of_kind("DaemonSet")
        }

    def gpu_stack(self) -> set[str]:
        """The DaemonSets a GPU node must run: all but NFD's worker, which runs everywhere."""
        return {n for n, c in self.daemonsets().items() if c != NFD_COMPONENT}

    def pools(self) -> dict[str, str | None]:
        """GPU node name -> the device plugin node config it is labelled for (``None``: the
        top-level config). Nodes of the top-level config: one per example Job pod, so all can
        be bound at once (at least two: a two-node Job needs both)."""
        default = max(2, sum(self.jobs().values()))  # every Job's pods at once
        nodes: dict[str, str | None] = {f"gpu-{i}": None for i in range(default)}
        for name, _ in plugin_configs(self.profile):
            if name is not None:
                nodes[f"gpu-{name}"] = name
        if self.profile.dra.enabled and self.profile.dra.gpus and self.profile.dra.node_selector:
            # the node pool whose GPUs NVIDIA's DRA driver hands out (dra.nodeSelector)
            nodes |= {f"gpu-dra-{i}": DRA_POOL for i in range(default)}
        return nodes

    def _view(self, pool: str | None) -> Profile:
        return dict(plugin_configs(self.profile))[None if pool == DRA_POOL else pool]

    @staticmethod
    def _plugin_pods(pool: str | None, view: Profile) -> set[str]:
        """The device plugin DaemonSets a node of ``pool`` runs (gpustack's naming)."""
        mps = view.device_plugin.mps is not None
        if pool == DRA_POOL:
            return set()  # DRA hands out these nodes' GPUs
        if pool is None:
            return {plugin_names.DAEMONSET} | ({plugin_names.MPS_DAEMON} if mps else set())
        own = {f"{plugin_names.NAME}-{pool}"}
        return own | ({f"{plugin_names.MPS_DAEMON_PREFIX}-{pool}"} if mps else set())

    def expected_on(self, pool: str | None) -> set[str]:
        """DaemonSets on a GPU node of ``pool``: the GPU stack with the pool's own device plugin
        (not another pool's), and NFD's worker."""
        plugins = set().union(*(self._plugin_pods(n, v) for n, v in plugin_configs(self.profile)))
        own = self._plugin_pods(pool, self._view(pool))
        stack = self.gpu_stack()
        if self.profile.dra.node_selector and pool != DRA_POOL:
            stack -= {dra_driver.KUBELET_PLUGIN}  # DRA's kubelet plugin runs on its pool only
        return (stack - plugins) | (own & stack) | self.everywhere()

    def dra_nodes(self) -> list[str]:
        """The GPU nodes NVIDIA's DRA kubelet plugin runs on (it publishes their devices)."""
        return [
            node
            for node, pool in self.pools().items()
            if dra_driver.KUBELET_PLUGIN in self.expected_on(pool)
        ]

    def everywhere(self) -> set[str]:
        return {n for n, c in self.daemonsets().items() if c == NFD_COMPONENT}

    def jobs(self) -> dict[tuple[str, str], int]:
        """(namespace, name) -> the pods it runs at once."""
        return {
            (j["metadata"]["namespace"], j["metadata"]["name"]): int(
                j["spec"].get("parallelism", 1)
            )
            for j in self.of_kind("Job")
        }

    # --- the node at each stage -------------------------------------------------------------

    def on_gke(self) -> bool:
        """The profile is for GKE nodes: it says so, or it names what only GKE has (its node
        pool labels or taints, its driver folder for the driver or the toolkit). Decided here
        from the profile as written, not by gpustack's reading of it, so a profile that looks
        like GKE meets GKE's admission whatever gpustack makes of it (issue 31, item 1)."""
        p = self.profile
        cluster = p.cluster
        keys = [k for k, _ in (*cluster.node_selector, *p.dra.node_selector)]
        keys += [t.key or "" for t in (*cluster.tolerations, *cluster.node_taints)]
        return (
            cluster.platform == "gke"
            or any(k.startswith(GKE_PREFIX) for k in keys)
            or GKE_DRIVER_ROOT in (p.driver.host_driver_root, p.toolkit.install_dir)
        )

    def gpu_node_taints(self) -> list[dict[str, str]]:
        """The taints of the GPU pool: GKE's on GKE, and those the profile says its GPU nodes
        carry (``cluster.nodeTaints``, the team's statement of its pools)."""
        taints = [GKE_GPU_TAINT] if self.on_gke() else []
        for t in self.profile.cluster.node_taints:
            taint = {"key": t.key, "effect": t.effect} | ({"value": t.value} if t.value else {})
            if taint not in taints:
                taints.append(taint)
        return taints

    def cpu_node_labels(self) -> dict[str, str]:
        """A CPU node of the same cluster: it shares the selector's region, zone, OS and role
        labels (a fleet overlay's region selects it too), never a GPU pool's."""
        return {
            k: v
            for k, v in self.profile.cluster.node_selector
            if k in SHARED_WITH_CPU_NODES or k.startswith(SHARED_WITH_CPU_NODES)
        }

    def platform_labels(self) -> dict[str, str]:
        return {
            k: v for k, v in self.profile.cluster.node_selector if k.startswith(PLATFORM_PREFIXES)
        }

    def rhcos_builds(self) -> list[str]:
        """The RHCOS builds the profile names a Driver Toolkit for (an OpenShift cluster whose
        GPU nodes are mid-update runs more than one); empty elsewhere."""
        return [b for b, _ in self.profile.driver.driver_toolkit.all_builds()]

    def node_build(self, node: str) -> str | None:
        """The RHCOS build of a GPU node: the top-level pool's nodes take the builds in turn
        (gpu-1 runs the second build when there is one), every other node the first."""
        builds = self.rhcos_builds()
        if not builds:
            return None
        if node not in self.pools() or self.pools()[node] is not None:
            return builds[0]
        return builds[int(node.rpartition("-")[2]) % len(builds)]

    def driver_of_build(self, build: str) -> str:
        """The driver DaemonSet of an RHCOS build (gpustack's naming: the first build keeps the
        plain name, a further one adds its build with hyphens for dots)."""
        first = self.rhcos_builds()[0]
        return (
            driver.DAEMONSET if build == first else f"{driver.DAEMONSET}-{build.replace('.', '-')}"
        )

    def expected_on_node(self, node: str, pool: str | None) -> set[str]:
        """:meth:`expected_on` for one node: of the driver DaemonSets, only its build's."""
        want = self.expected_on(pool)
        build = self.node_build(node)
        if build is None:
            return want
        others = {self.driver_of_build(b) for b in self.rhcos_builds() if b != build}
        return want - others

    def nfd_labels(self, node: str | None = None) -> dict[str, str]:
        """What NFD (gpustack's, or the cluster's own when gpustack's is off) and the folder's
        rules leave on a GPU node: the labels of its NodeFeatureRules and of its worker's custom
        rules (``sources.custom``) where they match an NVIDIA 3D controller."""
        labels = {NFD_NVIDIA_LABEL: "true", **self.system_labels(node)}
        rules = [r for o in self.of_kind("NodeFeatureRule") for r in o["spec"]["rules"]]
        for conf in self.of_kind("ConfigMap"):
            text = conf.get("data", {}).get(WORKER_CONF_KEY)
            if conf["metadata"]["name"] == WORKER_CONF_MAP and text:
                rules += yaml.safe_load(text).get("sources", {}).get("custom", [])
        for rule in rules:
            if _matches_nvidia_gpu(rule.get("matchFeatures", [])):
                labels.update(rule.get("labels", {}))
        return labels

    def system_labels(self, node: str | None = None) -> dict[str, str]:
        """What NFD's system and kernel sources write on a node of the OS and kernel the
        profile is for (``driver.osTag``, a precompiled ``driver.kernelVersion``, the Driver
        Toolkit's RHCOS build): a real GPU node carries them before anything else runs."""
        d = self.profile.driver
        os_id, version = d.os_release
        labels = {
            f"{NFD_PREFIX}system-os_release.ID": os_id,
            f"{NFD_PREFIX}system-os_release.VERSION_ID": version,
            f"{NFD_PREFIX}kernel-version.full": d.kernel_version or "6.8.0-60-generic",
        }
        rhcos = self.node_build(node) if node else d.driver_toolkit.rhcos_version
        if rhcos:
            labels[f"{NFD_PREFIX}system-os_release.OSTREE_VERSION"] = rhcos
        return labels

    def gfd_labels(self, pool: str | None = None) -> dict[str, str]:
        """What GPU feature discovery writes (through NFD's worker) on a node of ``pool``, when
        the folder deploys it: GFD's own rules (:mod:`tests.e2e.gfd`) applied to the node's
        boards and the config its DaemonSet gives it, not gpustack's catalog."""
        found = [
            d
            for d in self.of_kind("DaemonSet")
            if d["metadata"]["labels"].get("app.kubernetes.io/component") == "gpu-feature-discovery"
        ]
        if not found:
            return {}
        config_maps = {c["metadata"]["name"]: c for c in self.of_kind("ConfigMap")}
        view = self._view(pool)
        return gfd.labels(
            view.gpus.product,
            view.gpus.per_node,
            dict(view.gpus.mig),
            self.profile.driver.version or "0.0",
            gfd.config_of(found[0], config_maps),
        )

    def gpu_resources(self, pool: str | None = None) -> dict[str, str]:
        """What the device plugin advertises on one node of ``pool``: read from the ConfigMap
        its DaemonSet mounts, as that plugin reads it (:mod:`tests.e2e.advertised`), for the
        GPUs the node has (``gpus.perNode``, split by the MIG layout); not from gpustack's
        derivation of the resources, which sized the Jobs."""
        if pool == DRA_POOL:
            return {}
        view = self._view(pool)
        own = self._plugin_pods(pool, view) - {
            plugin_names.MPS_DAEMON,
            f"{plugin_names.MPS_DAEMON_PREFIX}-{pool}",
        }
        plugins = [d for d in self.of_kind("DaemonSet") if d["metadata"]["name"] in own]
        if not plugins:
            return {}
        (plugin,) = plugins
        config_maps = {c["metadata"]["name"]: c for c in self.of_kind("ConfigMap")}
        gpus = node_gpus(view.gpus.per_node, dict(view.gpus.mig))
        return advertised(plugin, config_maps, gpus)

    def gpu_node_labels(
        self, stage: str, pool: str | None = None, node: str | None = None
    ) -> dict[str, str]:
        labels = self.platform_labels() | self.nfd_labels(node) | dict(self.team_labels)
        if pool == DRA_POOL:  # the administrator labels DRA's pool
            labels |= dict(self.profile.dra.node_selector)
        elif pool is not None:  # the administrator labels a pool's nodes with its config
            labels[self.profile.device_plugin.node_config_label] = pool
        if stage != "fresh":
            labels |= self.gfd_labels(pool)
        return labels


def _matches_nvidia_gpu(match_features: list[Mapping[str, Any]]) -> bool:
    """Whether an NVIDIA 3D controller satisfies every ``pci.device`` expression of a rule
    (other feature kinds: assume satisfied)."""
    device = {"vendor": NVIDIA_VENDOR, "class": GPU_PCI_CLASS}
    for feature in match_features:
        if feature.get("feature") != "pci.device":
            continue
        for attr, expr in feature.get("matchExpressions", {}).items():
            if attr in device and expr.get("op") == "In" and device[attr] not in expr["value"]:
                return False
    return True


def node_manifest(
    name: str, labels: Mapping[str, str], taints: Sequence[Mapping[str, str]] = ()
) -> dict[str, Any]:
    """A Node as the kubelet registers it (its well-known labels) with ``labels`` and the
    taints of its pool."""
    node: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                **labels,
            },
        },
    }
    if taints:
        node["spec"] = {"taints": [dict(t) for t in taints]}
    return node


def node_status(resources: Mapping[str, str]) -> dict[str, Any]:
    """A Ready node's status with room for the stack, and ``resources`` (GPUs) on top."""
    room = {"cpu": "64", "memory": "512Gi", "pods": "110", "ephemeral-storage": "500Gi"}
    room |= dict(resources)
    return {
        "status": {
            "capacity": room,
            "allocatable": room,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "fake node of the e2e tier",
                }
            ],
        }
    }


def folders() -> list[Path]:
    return sorted(p for p in CLUSTERS.iterdir() if (p / "kustomization.yaml").is_file())
