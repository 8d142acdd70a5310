"""Node Feature Discovery (kubernetes-sigs, the version the GPU Operator's chart depends on), and
the GPU node rule that labels NVIDIA GPU nodes ``nvidia.com/gpu.present=true``.

Why gpustack ships it: the default node selector is ``nvidia.com/gpu.present``, and GPU feature
discovery's labels reach the nodes only through NFD's worker (GFD writes them to a file in
``features.d``). The objects are NFD's ``deployment/base`` ones built as constructs: the worker
DaemonSet (every node: it must run before a node is known to have a GPU), the master and the
garbage collector Deployments, their ServiceAccounts and RBAC, and the three ``nfd.k8s-sigs.io``
CRDs (:mod:`gpustack.constructs.nfd_crds`). Settings follow the GPU Operator's chart values: the
worker's PCI source lists network, display and 3D controller classes by vendor (so an NVIDIA GPU
gives ``feature.node.kubernetes.io/pci-10de.present``), and the master accepts labels in the
``nvidia.com`` namespace (GFD's, and the rule's).

RBAC: each rule is what v0.19.0's code calls (``pkg/nfd-master``, ``pkg/nfd-worker``,
``pkg/nfd-gc``) in gpustack's configuration, which is narrower than upstream's manifests: no
leader election (one master replica), no NodeFeature namespace selector, no pruning, no topology
updater. The calls are the same as v0.18.2's, so an older pinned NFD gets the same rules. New in
v0.19.0: the worker's NodeFeature owner references come from ``-owner-refs`` (default ``pod`` and
``ds``): the pod's from ``POD_NAME``/``POD_UID`` (set here), the DaemonSet's from a get of its own
pod (granted); only the ``node`` owner, not used here, would need ``nodes`` get.

Where the GPU node rule lives: with gpustack's NFD, in the worker's configuration
(``sources.custom``, the same rule syntax as a NodeFeatureRule: NFD v0.19.0's
``source/custom/custom.go`` runs those rules over every feature the worker discovered, and
``pkg/nfd-worker/nfd-worker.go`` publishes a custom rule's labels unmangled, so the master
applies ``nvidia.com/gpu.present`` as it applies GFD's labels). The PCI source discovers every
device with its ``class`` and ``vendor`` whatever ``deviceClassWhitelist`` says (that list only
picks the ``pci-*`` labels, ``source/pci``). So the folder creates no custom resource of a CRD
it ships, and ``kubectl apply -k`` applies it in one pass (a custom resource cannot be created
in the call that creates its CRD: issue 20, item 4). With ``nodeFeatureDiscovery.enabled:
false`` the rule is a NodeFeatureRule for the cluster's own NFD, whose CRD is then a stated
prerequisite of the folder (:mod:`gpustack.profile.prerequisites`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

from constructs import Construct

from gpustack.constructs import k8s, kube
from gpustack.constructs.config_text import config_yaml
from gpustack.constructs.labels import Identity
from gpustack.constructs.nfd_crds import CRDS, GROUP, VERSION
from gpustack.constructs.node_daemonset import CONFIG_CHECKSUM, NodeApp, NodeDaemonSet
from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.constructs.rbac import TOKEN_DIR, Access, grant, token_volume
from gpustack.profile.model import Profile

COMPONENT: Final = "node-feature-discovery"
MASTER: Final = "nfd-master"
WORKER: Final = "nfd-worker"
GC: Final = "nfd-gc"
#: The NodeFeatureRule that labels GPU nodes (for a cluster's own NFD).
GPU_RULE: Final = "gpustack-nvidia-gpu-nodes"
GPU_PRESENT: Final = "nvidia.com/gpu.present"
#: Where the worker reads feature files (GPU feature discovery writes its labels there).
FEATURES_D: Final = "/etc/kubernetes/node-feature-discovery/features.d"
CONF_DIR: Final = "/etc/kubernetes/node-feature-discovery"
#: The worker's ConfigMap and its file (which holds the GPU node rule with gpustack's NFD).
WORKER_CONF_MAP: Final = "nfd-worker-conf"
WORKER_CONF_KEY: Final = "nfd-worker.conf"
#: Role names (Role for the worker, ClusterRoles for master and gc), as the docs name them.
WORKER_ROLE: Final = "gpustack-nfd-worker"
MASTER_ROLE: Final = "gpustack-nfd-master"
GC_ROLE: Final = "gpustack-nfd-gc"

WORKER_RULES: Final = (
    Access(
        GROUP,
        ("nodefeatures",),
        ("get", "create", "update"),
        "publish its node's features (one NodeFeature per node, in the stack's namespace)",
    ),
    Access("", ("pods",), ("get",), "read its own pod, the owner of that NodeFeature"),
)
MASTER_RULES: Final = (
    Access("", ("nodes",), ("get", "list", "patch"), "read nodes; set their feature labels"),
    Access("", ("nodes/status",), ("patch",), "set extended resources from rules"),
    Access(
        GROUP,
        ("nodefeatures", "nodefeaturerules", "nodefeaturegroups"),
        ("get", "list", "watch"),
        "read the workers' features and the rules (informers)",
    ),
    Access(GROUP, ("nodefeaturegroups/status",), ("update",), "record a group's nodes"),
)
GC_RULES: Final = (
    Access("", ("nodes",), ("list", "watch"), "notice removed nodes (metadata informer)"),
    Access(
        GROUP, ("nodefeatures",), ("list", "delete"), "delete the NodeFeatures of removed nodes"
    ),
)

#: PCI classes the worker labels by vendor (GPU Operator chart values): network (02, 0200,
#: 0207), VGA (0300) and 3D controllers (0302).
PCI_CLASSES: Final = ("02", "0200", "0207", "0300", "0302")
HTTP_PORT: Final = 8080

# (volume, host path, container path) of the worker's read-only host mounts (upstream's).
_WORKER_HOST: Final = (
    ("host-boot", "/boot", "/host-boot"),
    ("host-os-release", "/etc/os-release", "/host-etc/os-release"),
    ("host-sys", "/sys", "/host-sys"),
    ("host-proc-swaps", "/proc/swaps", "/host-proc/swaps"),
    ("host-usr-lib", "/usr/lib", "/host-usr/lib"),
    ("host-lib", "/lib", "/host-lib"),
)


@dataclass(frozen=True)
class NfdProps:
    """Properties for :class:`NodeFeatureDiscovery`, from ``nodeFeatureDiscovery`` and
    ``cluster`` (the profile model owns the defaults).

    - ``deploy``: synthesize NFD itself (``enabled``); else only the rule.
    - ``gpu_rule``: the GPU node rule: a custom rule in the worker's config with ``deploy``,
      else the NodeFeatureRule :data:`GPU_RULE` for the cluster's own NFD.
    - ``container``: NFD image, pull policy, resources (every NFD container).
    - ``placement``: namespace, pull secrets and tolerations; the worker ignores the node
      selector (it runs on every node) and the master and gc take no node selector.
    - ``version``: the image tag, for the version label.
    """

    deploy: bool
    gpu_rule: bool
    container: ContainerSettings
    placement: Placement
    version: str

    @classmethod
    def from_profile(cls, profile: Profile) -> NfdProps:
        nfd = profile.node_feature_discovery
        return cls(
            deploy=nfd.enabled,
            gpu_rule=nfd.gpu_node_rule,
            container=ContainerSettings(
                image=nfd.image_ref(),
                image_pull_policy=nfd.image_pull_policy,
                env=(),
                resources=nfd.resources,
            ),
            placement=Placement.from_profile(profile),
            version=nfd.version,
        )


def worker_config(gpu_rule: bool) -> str:
    """``nfd-worker.conf``: PCI devices of :data:`PCI_CLASSES` labelled by vendor, and with
    ``gpu_rule`` the GPU node rule as a custom rule (see the module docstring)."""
    sources: dict[str, object] = {
        "pci": {"deviceClassWhitelist": list(PCI_CLASSES), "deviceLabelFields": ["vendor"]}
    }
    if gpu_rule:
        sources["custom"] = gpu_rules()
    return config_yaml({"core": {"sleepInterval": "60s"}, "sources": sources})


def master_config() -> str:
    """``nfd-master.conf``: labels in the ``nvidia.com`` namespace are published."""
    return config_yaml({"extraLabelNs": ["nvidia.com"]})


def gpu_rule_spec() -> dict[str, object]:
    """The NodeFeatureRule's spec (for a cluster's own NFD): :func:`gpu_rules`."""
    return {"rules": gpu_rules()}


def gpu_rules() -> list[dict[str, object]]:
    """The rule: a PCI display (0300) or 3D controller (0302) of vendor 10de -> gpu.present."""
    return [
        {
            "name": "nvidia-gpu-present",
            "labels": {GPU_PRESENT: "true"},
            "matchFeatures": [
                {
                    "feature": "pci.device",
                    "matchExpressions": {
                        "vendor": {"op": "In", "value": ["10de"]},
                        "class": {"op": "In", "value": ["0300", "0302"]},
                    },
                }
            ],
        }
    ]


def _container(
    name: str, settings: ContainerSettings, mounts: list[k8s.VolumeMount]
) -> k8s.Container:
    """One NFD daemon (``nfd-worker``, ``nfd-master``, ``nfd-gc``): the binary of its name, its
    pod's name and namespace, its health port probed, unprivileged."""
    return kube.main_container(
        name,
        settings,
        command=[name],
        env=kube.env_list([], field_refs=_POD_ENV),
        ports=[k8s.ContainerPort(name="http", container_port=HTTP_PORT)],
        liveness_probe=_probe(),
        readiness_probe=_probe(),
        security_context=_security(),
        volume_mounts=mounts,
    )


def _probe() -> k8s.Probe:
    return k8s.Probe(http_get=k8s.HttpGetAction(path="/healthz", port="http"))


def _security() -> k8s.SecurityContext:
    """Upstream's container hardening: no privileges, read-only root, non-root user."""
    return k8s.SecurityContext(
        allow_privilege_escalation=False,
        capabilities=k8s.Capabilities(drop=["ALL"]),
        read_only_root_filesystem=True,
        run_as_non_root=True,
    )


_POD_ENV: Final = {
    "NODE_NAME": "spec.nodeName",
    "POD_NAME": "metadata.name",
    "POD_UID": "metadata.uid",
}


class NodeFeatureDiscovery(Construct):
    """The NFD CRDs, worker, master and gc with their RBAC, and the GPU node rule."""

    def __init__(self, scope: Construct, id: str, props: NfdProps) -> None:
        super().__init__(scope, id)
        self.props = props
        if props.deploy:
            self._crds()
            self._worker()
            self._deployment(MASTER, MASTER_ROLE, MASTER_RULES, master=True)
            self._deployment(GC, GC_ROLE, GC_RULES, master=False)
        if props.gpu_rule and not props.deploy:
            ident = Identity.placed(MASTER, COMPONENT, props.version, props.placement)
            kube.api_object(
                self,
                "gpu-rule",
                api_version=f"{GROUP}/{VERSION}",
                kind="NodeFeatureRule",
                name=GPU_RULE,
                namespace=None,
                labels=ident.labels(),
                annotations=ident.annotations(),
                body={"spec": gpu_rule_spec()},
            )

    def _ident(self, name: str) -> Identity:
        return Identity.placed(name, COMPONENT, self.props.version, self.props.placement)

    def _crds(self) -> None:
        ident = self._ident("nfd-crds")
        for kind, plural, scope, short, schema, status in CRDS:
            spec = kube.crd_spec(
                GROUP, VERSION, kind, plural, scope, schema, status=status, short=short
            )
            kube.api_object(
                self,
                f"crd-{plural}",
                api_version="apiextensions.k8s.io/v1",
                kind="CustomResourceDefinition",
                name=f"{plural}.{GROUP}",
                namespace=None,
                labels=ident.labels(),
                annotations=ident.annotations(),
                body={"spec": spec},
            )

    def _worker(self) -> None:
        props = self.props
        # on every node (no node selector, no deploy label): a GPU node is found only once the
        # worker ran there; the profile's tolerations let it onto tainted GPU nodes
        placement = replace(props.placement, node_selector=())
        app = NodeApp(self._ident(WORKER), placement, deploy=None)
        ds = NodeDaemonSet.own(self, app)
        grant(
            self,
            app.ident,
            name=WORKER_ROLE,
            namespace=placement.namespace,
            service_account=ds.service_account,
            rules=WORKER_RULES,
            cluster=False,
        )
        conf = ds.config_map(
            "config",
            WORKER_CONF_MAP,
            {WORKER_CONF_KEY: worker_config(props.gpu_rule)},
            checksum=CONFIG_CHECKSUM,
            volume="nfd-worker-conf",
        )
        mounts = [
            ds.mount(kube.host_path(volume, host), path, read_only=True)
            for volume, host, path in _WORKER_HOST
        ]
        mounts += [
            ds.mount(kube.host_path("features-d", FEATURES_D, "DirectoryOrCreate"), FEATURES_D,
                     read_only=True),
            ds.mount(conf, CONF_DIR, read_only=True),
            ds.mount(token_volume(), TOKEN_DIR, read_only=True),
        ]  # fmt: skip
        container = _container(WORKER, props.container, mounts)
        ds.add("worker", WORKER, containers=[container], dns_policy="ClusterFirstWithHostNet")

    def _deployment(self, name: str, role: str, rules: tuple[Access, ...], *, master: bool) -> None:
        props = self.props
        placement = props.placement
        app = NodeApp(self._ident(name), placement, deploy=None)
        kube.service_account(
            self, f"{name}-sa", metadata=app.meta(name), automount_service_account_token=False
        )
        grant(
            self,
            app.ident,
            name=role,
            namespace=placement.namespace,
            service_account=name,
            rules=rules,
            cluster=True,
        )
        mounts = [kube.mount("api-token", TOKEN_DIR, read_only=True)]
        volumes = [token_volume()]
        annotations = None
        if master:
            data = {"nfd-master.conf": master_config()}
            kube.config_map(self, "master-conf", metadata=app.meta("nfd-master-conf"), data=data)
            volumes.append(kube.config_map_volume("nfd-master-conf", "nfd-master-conf"))
            mounts.append(kube.mount("nfd-master-conf", CONF_DIR, read_only=True))
            annotations = {CONFIG_CHECKSUM: kube.data_checksum(data)}
        container = _container(name, props.container, mounts)
        pod = kube.pod_placement(replace(placement, node_selector=()), priority=False)
        kube.deployment(
            self,
            name,
            metadata=app.meta(name),
            spec=k8s.DeploymentSpec(
                replicas=1,
                selector=k8s.LabelSelector(match_labels=app.ident.selector()),
                template=k8s.PodTemplateSpec(
                    metadata=k8s.ObjectMeta(
                        labels=app.ident.pod_labels(versioned=False), annotations=annotations
                    ),
                    spec=k8s.PodSpec(
                        service_account_name=name,
                        automount_service_account_token=False,
                        enable_service_links=False,
                        security_context=kube.pod_security_context(),
                        containers=[container],
                        volumes=volumes,
                        **pod,
                    ),
                ),
            ),
        )
