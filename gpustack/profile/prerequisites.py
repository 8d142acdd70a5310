"""What a cluster folder needs from the cluster before it is applied, stated by the folder.

Why: ``kubectl apply --server-side -k dist/clusters/<cluster>`` works in one pass only on a
cluster that already serves every kind the folder creates and that its own CRDs do not define
(issue 20, item 4: ``no matches for kind "ServiceMonitor"`` where the Prometheus Operator is
missing), and a pod's wait for a file that something outside gpustack writes never ends without
it. So each folder states its prerequisites in a machine-readable object of its own (the
``gpustack-prerequisites`` ConfigMap of :mod:`gpustack.constructs.common`), derived here from the
profile, and the end-to-end tier prepares a cluster from that statement alone. A test derives
the external kinds from the synthesized objects of every example and holds this statement to it.

The folder itself applies in one pass otherwise: it creates no custom resource of a CRD it ships
(gpustack's GPU node rule goes into NFD's worker configuration when gpustack deploys NFD, and is a
NodeFeatureRule only for a cluster's own NFD, whose CRDs are then a prerequisite). The one
exception is a workload that needs a custom resource of its own: an example job in a
ComputeDomain (``workloads.examples[].dra.computeDomain``) ships the ComputeDomain next to NVIDIA's
CRD for it. kubectl cannot create both in one call, so the statement's ``applyFirst`` names that
CRD: ``kubectl apply`` it (the folder's own file), then the folder. Argo CD needs nothing (the
CRD's sync wave comes first, and the ComputeDomain skips the dry run while its kind is unknown),
nor does Flux (its kustomize-controller applies CRDs before the objects that use them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from gpustack.profile.graph import graph_edges
from gpustack.profile.model import Profile


@dataclass(frozen=True)
class ExternalApi:
    """A kind gpustack creates whose CRD another project installs."""

    group: str
    version: str
    kind: str
    plural: str
    provider: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def crd(self) -> str:
        """The CRD's name (``<plural>.<group>``)."""
        return f"{self.plural}.{self.group}"


#: Node Feature Discovery's API group and version (its CRDs: :mod:`gpustack.constructs.nfd_crds`).
NFD_GROUP: Final = "nfd.k8s-sigs.io"
NFD_VERSION: Final = "v1alpha1"
SERVICE_MONITOR: Final = ExternalApi(
    "monitoring.coreos.com", "v1", "ServiceMonitor", "servicemonitors", "the Prometheus Operator"
)
NODE_FEATURE_RULE: Final = ExternalApi(
    NFD_GROUP,
    NFD_VERSION,
    "NodeFeatureRule",
    "nodefeaturerules",
    "the cluster's Node Feature Discovery",
)


@dataclass(frozen=True)
class Prerequisite:
    """One thing the cluster must have: a CRD (``kind: crd``, ``name``: the CRD's name, ``api``:
    the kind the folder creates) or a file a pod waits for (``kind: file``, ``name``: its host
    path); who provides it, and the profile setting that needs it."""

    kind: str
    name: str
    provider: str
    because: str
    api: ExternalApi | None = None

    def as_dict(self) -> dict[str, str]:
        kind = {"apiVersion": self.api.api_version, "kind": self.api.kind} if self.api else {}
        return {"name": self.name, **kind, "from": self.provider, "because": self.because}


def prerequisites(profile: Profile) -> tuple[Prerequisite, ...]:
    """Every prerequisite of ``profile``'s cluster folder: CRDs first, then files."""
    found: list[Prerequisite] = []
    monitor = profile.dcgm_exporter.service_monitor
    if profile.dcgm_exporter.enabled and monitor.enabled:
        api = SERVICE_MONITOR
        found.append(Prerequisite("crd", api.crd, api.provider, "dcgmExporter.serviceMonitor", api))
    nfd = profile.node_feature_discovery
    if nfd.gpu_node_rule and not nfd.enabled:
        api = NODE_FEATURE_RULE
        because = "nodeFeatureDiscovery.gpuNodeRule with nodeFeatureDiscovery.enabled: false"
        found.append(Prerequisite("crd", api.crd, api.provider, because, api))
    files: dict[str, Prerequisite] = {}
    for edge in graph_edges(profile).edges:
        if edge.external is not None and not edge.writers:
            provider, because = edge.external
            files.setdefault(edge.file, Prerequisite("file", edge.file, provider, because))
    return (*found, *files.values())


#: The ComputeDomain CRD NVIDIA's DRA driver defines (gpustack ships it with ``dra``).
COMPUTE_DOMAIN_CRD: Final = "computedomains.resource.nvidia.com"


def apply_first(profile: Profile) -> tuple[Prerequisite, ...]:
    """The folder's own CRDs that its custom resources need established before they can be
    created (an example job's ComputeDomain)."""
    for i, example in enumerate(profile.workloads.examples):
        if example.dra is not None and example.dra.compute_domain:
            because = f"workloads.examples[{i}].dra.computeDomain"
            provider = "this folder (dra-driver)"
            return (Prerequisite("crd", COMPUTE_DOMAIN_CRD, provider, because),)
    return ()


#: The CRDs gpustack ships in a folder that another project's chart installs too, by part:
#: Node Feature Discovery's three (its own chart, and the GPU Operator's, which deploys NFD as a
#: dependency: ``deployments/gpu-operator/Chart.yaml`` at v26.7.0) and NVIDIA's DRA driver's two
#: ComputeDomain CRDs (its Helm chart's ``crds/`` folder, ``deployments/helm/<chart>/crds/`` in
#: NVIDIA/k8s-dra-driver-gpu).
NFD_CRDS: Final = tuple(
    f"{p}.{NFD_GROUP}" for p in ("nodefeaturegroups", "nodefeaturerules", "nodefeatures")
)
COMPUTE_DOMAIN_CRDS: Final = (COMPUTE_DOMAIN_CRD, "computedomaincliques.resource.nvidia.com")
_NFD_CHARTS: Final = "the node-feature-discovery chart, and the GPU Operator chart (nfd.enabled)"
_DRA_CHART: Final = "NVIDIA's DRA driver Helm chart (its crds/ folder)"


def owned(profile: Profile) -> tuple[Prerequisite, ...]:
    """The CRDs the folder ships that another chart also ships: the folder owns them, so that
    chart must not install them beside it (two owners of one CRD overwrite each other's schema
    on every sync, and deleting either deletes every custom resource of it)."""
    found: list[Prerequisite] = []
    if profile.node_feature_discovery.enabled:
        because = "nodeFeatureDiscovery.enabled"
        found += [Prerequisite("crd", name, _NFD_CHARTS, because) for name in NFD_CRDS]
    if profile.dra.enabled and profile.dra.compute_domains:
        because = "dra.computeDomains"
        found += [Prerequisite("crd", name, _DRA_CHART, because) for name in COMPUTE_DOMAIN_CRDS]
    return tuple(found)


def statement(profile: Profile) -> dict[str, list[dict[str, str]]]:
    """The folder's statement: ``crds`` and ``files`` it needs from the cluster, its own CRDs to
    ``applyFirst``, and the CRDs it ``owns`` that another chart also ships (``alsoShippedBy``:
    that chart, to install without them); each a list (empty: none)."""
    found = prerequisites(profile)
    out = {
        kind: [p.as_dict() for p in found if p.kind == singular]
        for kind, singular in (("crds", "crd"), ("files", "file"))
    }
    out["applyFirst"] = [p.as_dict() for p in apply_first(profile)]
    out["owns"] = [
        {"name": p.name, "alsoShippedBy": p.provider, "because": p.because} for p in owned(profile)
    ]
    return out
