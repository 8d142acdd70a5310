"""Objects every other component depends on: the Namespace, the RuntimeClasses and a
NetworkPolicy that lets no connection into the stack's pods; and the folder's statement of what
the cluster must have before it is applied (the ``gpustack-prerequisites`` ConfigMap, see
:mod:`gpustack.profile.prerequisites`).

The Namespace is labelled for the ``privileged`` Pod Security level: the driver and toolkit pods
are privileged host daemons, and the ``baseline``/``restricted`` levels would reject them.

On OpenShift that label is not enough: SecurityContextConstraints admission gives a pod only an
SCC its ServiceAccount may ``use``, and the default ``restricted-v2`` refuses privileged
containers, host paths and host PIDs. The GPU Operator grants each operand's ServiceAccount
``use`` of the ``privileged`` SCC (a Role per operand, e.g. ``assets/state-dcgm-exporter/
0200_role.yaml`` at v26.7.0, ``resourceNames: [privileged]``). gpustack grants the same in one
Role of the stack's namespace, bound to that namespace's ServiceAccounts (the group
``system:serviceaccounts:<namespace>``): every gpustack pod there is a host daemon. A pod that
needs no privilege still gets the most restrictive SCC it satisfies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from constructs import Construct

from gpustack.constructs import dcgm_exporter, k8s, kube
from gpustack.constructs.config_text import config_yaml
from gpustack.constructs.kube import object_meta
from gpustack.constructs.labels import Identity, selector_labels
from gpustack.constructs.rbac import Access
from gpustack.constructs.runtime import runtime_classes
from gpustack.kube.labels import PART_OF, PART_OF_LABEL
from gpustack.profile.model import Profile
from gpustack.profile.model.cluster import GKE_LIMITED_PRIORITY_CLASSES
from gpustack.profile.platform import platform
from gpustack.profile.prerequisites import statement

#: Namespaces Kubernetes owns: gpustack deploys into them but never declares (and so never prunes)
#: them.
SYSTEM_NAMESPACES: Final = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})

#: The folder's statement of its prerequisites, and its one key (a YAML document: ``crds`` and
#: ``files``, each a list of ``name``, ``from``, ``because``).
PREREQUISITES: Final = "gpustack-prerequisites"
PREREQUISITES_KEY: Final = "prerequisites.yaml"
#: Denies all ingress to the stack's pods (see :class:`Common`).
NETWORK_POLICY: Final = "gpustack-deny-ingress"
#: On GKE: the quota that lets the stack's critical-priority pods into its namespace.
CRITICAL_QUOTA: Final = "gpustack-critical-pods"
#: Its pod limit: high enough never to limit a fleet's DaemonSet pods (quota admission counts).
CRITICAL_QUOTA_PODS: Final = "1G"
#: The one exception: scrapers may reach the DCGM exporter's metrics port.
METRICS_POLICY: Final = "gpustack-allow-gpu-metrics"
#: The DCGM exporter's pods and metrics port (see :mod:`gpustack.constructs.dcgm_exporter`).
DCGM_EXPORTER_POD: Final = selector_labels(dcgm_exporter.NAME, dcgm_exporter.COMPONENT)
DCGM_METRICS_PORT: Final = 9400

#: OpenShift: the Role (and its binding) that lets the stack's pods use the privileged SCC.
SCC_ROLE: Final = "gpustack-scc-privileged"
SCC_RULES: Final = (
    Access(
        "security.openshift.io",
        ("securitycontextconstraints",),
        ("use",),
        "OpenShift admits the stack's host daemons (privileged containers, host paths, host PID)"
        " only with the privileged SCC",
        names=("privileged",),
    ),
)

_POD_SECURITY: Final = {
    f"pod-security.kubernetes.io/{mode}": "privileged" for mode in ("enforce", "audit", "warn")
}


@dataclass(frozen=True)
class CommonProps:
    """Properties for :class:`Common`, all from the profile (:meth:`from_profile`; the profile
    model owns the defaults).

    - ``namespace``: the stack's namespace (``cluster.namespace``). A Kubernetes-owned namespace
      (``kube-system``...) is used but not declared.
    - ``labels``: the profile's ``metadata.labels``, on every object.
    - ``runtime_classes``: RuntimeClass names, each with the handler of the same name; see
      :func:`gpustack.constructs.runtime.runtime_classes`.
    - ``metrics_from``: with the DCGM exporter, the (namespace, pod) label selectors of who may
      scrape its metrics port (``dcgmExporter.metricsFrom``); ``None`` without.
    - ``openshift``: ``cluster.runtime.distribution: openshift`` (the SCC grant, see above).
    - ``critical_quota``: on GKE (:func:`gpustack.profile.platform.platform`: stated, or
      recognised from what only GKE has), the priority classes a ResourceQuota in the namespace
      must name so GKE admits the stack's critical pods there; empty elsewhere.
    - ``prerequisites``: the text of :data:`PREREQUISITES` (CRDs of other projects the folder
      creates objects of, files a pod waits for that something outside gpustack writes).

    No ``version``: nothing here runs a versioned image, so these objects carry no version label
    and a toolkit or driver bump leaves them alone.
    """

    namespace: str
    labels: tuple[tuple[str, str], ...]
    runtime_classes: tuple[str, ...]
    metrics_from: tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] | None
    openshift: bool
    critical_quota: tuple[str, ...]
    prerequisites: str

    @classmethod
    def from_profile(cls, profile: Profile) -> CommonProps:
        return cls(
            namespace=profile.cluster.namespace,
            labels=profile.metadata.labels,
            runtime_classes=runtime_classes(profile),
            metrics_from=(
                (
                    profile.dcgm_exporter.metrics_from.namespace_selector,
                    profile.dcgm_exporter.metrics_from.pod_selector,
                )
                if profile.dcgm_exporter.enabled
                else None
            ),
            openshift=profile.cluster.runtime.distribution == "openshift",
            critical_quota=(
                GKE_LIMITED_PRIORITY_CLASSES
                if platform(profile) == "gke" and profile.cluster.namespace != "kube-system"
                else ()
            ),
            prerequisites=config_yaml(statement(profile)),
        )


class Common(Construct):
    """The Namespace (privileged Pod Security), the GPU RuntimeClasses and the NetworkPolicy
    ``gpustack-deny-ingress`` (no ingress to any pod labelled ``part-of: gpustack``).

    No RBAC for itself: nothing here runs. On OpenShift, the Role :data:`SCC_ROLE` and its
    binding for the stack's ServiceAccounts.
    """

    def __init__(self, scope: Construct, id: str, props: CommonProps) -> None:
        super().__init__(scope, id)
        self.props = props
        self.ident = Identity("gpustack", "common", "", props.labels)
        if props.namespace not in SYSTEM_NAMESPACES:
            self._namespace()
        if props.critical_quota:
            self._critical_quota()
        self._prerequisites()
        self._deny_ingress()
        if props.metrics_from is not None:
            self._metrics_policy(*props.metrics_from)
        if props.openshift:
            self._scc_grant()
        for name in props.runtime_classes:
            kube.runtime_class(
                self, f"runtime-class-{name}", handler=name, metadata=self._meta(name, None)
            )

    def _meta(self, name: str, namespace: str | None) -> k8s.ObjectMeta:
        """Metadata of one of these objects: its name, gpustack's labels and annotations."""
        ident = self.ident
        return object_meta(
            name, namespace=namespace, labels=ident.labels(), annotations=ident.annotations()
        )

    def _namespace(self) -> None:
        """The stack's namespace, labelled for the ``privileged`` Pod Security level."""
        ident = self.ident
        kube.namespace(
            self,
            "namespace",
            metadata=object_meta(
                self.props.namespace,
                namespace=None,
                labels={**ident.labels(), **_POD_SECURITY},
                annotations=ident.annotations(),
            ),
        )

    def _critical_quota(self) -> None:
        """GKE's ResourceQuota admission refuses critical-priority pods outside kube-system
        unless a quota scoped to their priority class covers the namespace ("insufficient quota
        to match these scopes"): without it no DaemonSet gets a pod."""
        scope = k8s.ScopedResourceSelectorRequirement(
            operator="In", scope_name="PriorityClass", values=list(self.props.critical_quota)
        )
        kube.resource_quota(
            self,
            "critical-quota",
            metadata=self._meta(CRITICAL_QUOTA, self.props.namespace),
            spec=k8s.ResourceQuotaSpec(
                hard={"pods": CRITICAL_QUOTA_PODS},
                scope_selector=k8s.ScopeSelector(match_expressions=[scope]),
            ),
        )

    def _prerequisites(self) -> None:
        """Read before the folder is applied (by people, the end-to-end tier, tools); in the
        cluster it says what the stack expected to find there."""
        kube.config_map(
            self,
            "prerequisites",
            metadata=self._meta(PREREQUISITES, self.props.namespace),
            data={PREREQUISITES_KEY: self.props.prerequisites},
        )

    def _deny_ingress(self) -> None:
        """No gpustack pod serves anything (the plugin talks to the kubelet over a unix socket),
        so none accepts connections. Only gpustack's pods are selected: the namespace may be
        shared. Egress stays open: the driver container may fetch kernel headers."""
        kube.network_policy(
            self,
            "network-policy",
            metadata=self._meta(NETWORK_POLICY, self.props.namespace),
            spec=k8s.NetworkPolicySpec(
                pod_selector=k8s.LabelSelector(match_labels={PART_OF_LABEL: PART_OF}),
                policy_types=["Ingress"],
            ),
        )

    def _metrics_policy(
        self, namespaces: tuple[tuple[str, str], ...], pods: tuple[tuple[str, str], ...]
    ) -> None:
        """The exception to :meth:`_deny_ingress` (policies add up): the metrics port of the
        DCGM exporter's pods, from the scrapers the profile names."""
        peer = k8s.NetworkPolicyPeer(
            namespace_selector=k8s.LabelSelector(match_labels=dict(namespaces) or None),
            pod_selector=k8s.LabelSelector(match_labels=dict(pods) or None),
        )
        port = k8s.NetworkPolicyPort(port=DCGM_METRICS_PORT, protocol="TCP")
        kube.network_policy(
            self,
            "metrics-network-policy",
            metadata=self._meta(METRICS_POLICY, self.props.namespace),
            spec=k8s.NetworkPolicySpec(
                pod_selector=k8s.LabelSelector(match_labels=dict(DCGM_EXPORTER_POD)),
                policy_types=["Ingress"],
                ingress=[k8s.NetworkPolicyIngressRule(from_=[peer], ports=[port])],
            ),
        )

    def _scc_grant(self) -> None:
        """``use`` of the privileged SCC for every ServiceAccount of the stack's namespace."""
        namespace = self.props.namespace
        meta = self._meta(SCC_ROLE, namespace)
        kube.rbac_rules(
            self, "scc-role", "Role", metadata=meta, rules=[r.rule() for r in SCC_RULES]
        )
        kube.rbac_binding(
            self,
            "scc-binding",
            "RoleBinding",
            metadata=meta,
            role_ref=k8s.RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name=SCC_ROLE),
            subjects=[
                k8s.Subject(
                    kind="Group",
                    name=f"system:serviceaccounts:{namespace}",
                    api_group="rbac.authorization.k8s.io",
                )
            ],
        )
