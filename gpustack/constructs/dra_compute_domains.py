"""ComputeDomains (``dra.computeDomains``): the multi-node NVLink part of NVIDIA's DRA driver.

A ComputeDomain is a set of nodes whose GPUs share an IMEX domain. With it on, the DRA driver
(:mod:`gpustack.constructs.dra_driver`) adds what this module describes: the ``ComputeDomain`` and
``ComputeDomainClique`` CRDs (``resource.nvidia.com/v1beta1``), the controller Deployment, the
ServiceAccount and ClusterRole of the IMEX daemons the controller starts (the daemon pod template
in the image, ``templates/compute-domain-daemon.tmpl.yaml``, names
``compute-domain-daemon-service-account``), and the kubelet plugin's ComputeDomain rules.

The controller's ``leases`` rule is for leader election, off with one replica
(``LEADER_ELECTION_ENABLED=false``, as NVIDIA renders it), and is left out.
"""

from __future__ import annotations

from typing import Any, Final

from constructs import Construct

from gpustack import dra_upstream
from gpustack.constructs import k8s, kube
from gpustack.constructs.labels import Identity
from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.constructs.rbac import Access, grant, token_volume
from gpustack.kube.labels import CONTROL_PLANE

CONTROLLER: Final = "nvidia-dra-driver-controller"
#: Fixed in the driver image's daemon pod template (``templates/compute-domain-daemon.tmpl.yaml``).
DAEMON_SA: Final = "compute-domain-daemon-service-account"
CONTROLLER_CLUSTER_ROLE: Final = "gpustack-nvidia-dra-driver-controller"
CONTROLLER_ROLE: Final = "gpustack-nvidia-dra-driver-controller-daemons"
DAEMON_CLUSTER_ROLE: Final = "gpustack-compute-domain-daemon"

CRD_GROUP: Final = dra_upstream.COMPUTE_DOMAIN_API_GROUP
CRD_VERSION: Final = dra_upstream.COMPUTE_DOMAIN_API_VERSION

#: The ComputeDomain kubelet plugin's (``cmd/compute-domain-kubelet-plugin/computedomain.go``).
KUBELET_PLUGIN_CD_RULES: Final = (
    Access(
        CRD_GROUP,
        ("computedomains",),
        ("list", "watch"),
        "computedomain.go: an informer on ComputeDomains (the domain a channel claim names)",
    ),
    Access(
        "",
        ("nodes",),
        ("get", "update", "patch"),
        "computedomain.go: labels its node with the ComputeDomain and clique it joins",
    ),
)
KUBELET_PLUGIN_CD_NAMESPACED: Final = (
    Access(
        CRD_GROUP,
        ("computedomaincliques",),
        ("get",),
        "computedomain.go: reads the clique of the node's IMEX daemon",
    ),
)
#: The controller's (``rbac-controller.yaml``), without leader election's ``leases``.
CONTROLLER_RULES: Final = (
    Access(
        CRD_GROUP,
        ("computedomains",),
        ("get", "list", "watch", "update"),
        "compute-domain-controller: reconciles ComputeDomains (finalizers)",
    ),
    Access(
        CRD_GROUP,
        ("computedomains/status",),
        ("update",),
        "compute-domain-controller: the ComputeDomain's status",
    ),
    Access(
        "resource.k8s.io",
        ("resourceclaimtemplates",),
        ("get", "list", "watch", "create", "update", "delete"),
        "compute-domain-controller: the channel and daemon ResourceClaimTemplates of a domain",
    ),
    Access(
        "",
        ("nodes",),
        ("get", "list", "watch", "update"),
        "compute-domain-controller: removes a domain's labels from nodes",
    ),
    Access("", ("pods",), ("get", "list", "watch"), "compute-domain-controller: daemon pods"),
)
CONTROLLER_NAMESPACED: Final = (
    Access(
        "apps",
        ("daemonsets",),
        ("get", "list", "watch", "create", "update", "patch", "delete"),
        "compute-domain-controller: one IMEX daemon DaemonSet per ComputeDomain",
    ),
    Access(
        CRD_GROUP,
        ("computedomaincliques",),
        ("get", "list", "watch", "update"),
        "compute-domain-controller: the cliques of its domains",
    ),
)
#: The IMEX daemons' (``rbac-compute-domain-daemon.yaml``).
DAEMON_RULES: Final = (
    Access(
        CRD_GROUP,
        ("computedomains", "computedomains/status"),
        ("get", "list", "watch", "update", "patch"),
        "compute-domain-daemon: reports its node into the ComputeDomain's status",
    ),
    Access(
        CRD_GROUP,
        ("computedomaincliques",),
        ("get", "list", "watch", "create", "update", "patch"),
        "compute-domain-daemon: its clique's member list (IMEX peers)",
    ),
    Access(
        "",
        ("pods",),
        ("get", "list", "watch", "patch"),
        "compute-domain-daemon: its own pod's readiness",
    ),
)


def add_controller(
    scope: Construct,
    ident: Identity,
    container: ContainerSettings,
    placement: Placement,
    gates: list[tuple[str, str]],
) -> None:
    """The controller's ServiceAccount, its two grants and its Deployment; ``gates``: its
    ``FEATURE_GATES`` and IMEX mode (:func:`gpustack.constructs.dra_gates.gate_env`)."""
    namespace = placement.namespace
    meta = kube.object_meta(
        CONTROLLER, namespace=namespace, labels=ident.labels(), annotations=ident.annotations()
    )
    kube.service_account(
        scope, "controller-sa", metadata=meta, automount_service_account_token=False
    )
    for role, rules, cluster in (
        (CONTROLLER_CLUSTER_ROLE, CONTROLLER_RULES, True),
        (CONTROLLER_ROLE, CONTROLLER_NAMESPACED, False),
    ):
        grant(
            scope,
            ident,
            name=role,
            namespace=namespace,
            service_account=CONTROLLER,
            rules=rules,
            cluster=cluster,
        )
    kube.deployment(
        scope,
        "controller",
        metadata=meta,
        spec=k8s.DeploymentSpec(
            replicas=1,
            selector=k8s.LabelSelector(match_labels=ident.selector()),
            template=k8s.PodTemplateSpec(
                metadata=k8s.ObjectMeta(labels=ident.pod_labels(versioned=False)),
                spec=_controller_pod(_controller_container(container, placement, gates), placement),
            ),
        ),
    )


def _controller_container(
    container: ContainerSettings, placement: Placement, gates: list[tuple[str, str]]
) -> k8s.Container:
    """``compute-domain``: the controller, unprivileged, with the image it starts daemons from;
    ``gates`` after ``NVIDIA_VISIBLE_DEVICES``, where NVIDIA's chart puts them."""
    env = [
        ("HTTP_ENDPOINT", ":8080"),
        ("METRICS_PATH", "/metrics"),
        ("LOG_VERBOSITY", "4"),
        ("LOG_VERBOSITY_CD_DAEMON", "4"),
        ("IMAGE_NAME", container.image),
        ("NVIDIA_VISIBLE_DEVICES", "void"),
        *gates,
        ("LEADER_ELECTION_ENABLED", "false"),
    ]
    if placement.image_pull_secrets:
        env.append(("CD_DAEMON_IMAGE_PULL_SECRET_NAMES", ",".join(placement.image_pull_secrets)))
    return kube.main_container(
        "compute-domain",
        container,
        command=["compute-domain-controller", "-v", "$(LOG_VERBOSITY)"],
        env=kube.env_list(
            env,
            container.env,
            field_refs={"POD_NAME": "metadata.name", "NAMESPACE": "metadata.namespace"},
        ),
        security_context=kube.unprivileged(),
        volume_mounts=[
            kube.mount("api-token", "/var/run/secrets/kubernetes.io/serviceaccount", read_only=True)
        ],
    )


def _controller_pod(container: k8s.Container, placement: Placement) -> k8s.PodSpec:
    """A cluster-wide controller: on any node, control plane preferred (NVIDIA's chart); not
    bound to the GPU nodes' selector."""
    pod = kube.pod_placement(placement)
    tolerations = [
        k8s.Toleration(key=CONTROL_PLANE, operator="Exists", effect="NoSchedule"),
        k8s.Toleration(key="CriticalAddonsOnly", operator="Exists"),
        *(pod["tolerations"] or []),
    ]
    control_plane = k8s.NodeSelectorTerm(
        match_expressions=[k8s.NodeSelectorRequirement(key=CONTROL_PLANE, operator="Exists")]
    )
    return k8s.PodSpec(
        service_account_name=CONTROLLER,
        automount_service_account_token=False,
        security_context=kube.pod_security_context(),
        containers=[container],
        volumes=[token_volume()],
        tolerations=tolerations,
        priority_class_name=pod["priority_class_name"],
        image_pull_secrets=pod["image_pull_secrets"],
        affinity=k8s.Affinity(
            node_affinity=k8s.NodeAffinity(
                preferred_during_scheduling_ignored_during_execution=[
                    k8s.PreferredSchedulingTerm(weight=100, preference=control_plane)
                ]
            )
        ),
    )


def add_daemon_access(scope: Construct, ident: Identity, namespace: str) -> None:
    """The IMEX daemons' ServiceAccount and ClusterRole."""
    kube.service_account(
        scope,
        "daemon-sa",
        metadata=kube.object_meta(
            DAEMON_SA, namespace=namespace, labels=ident.labels(), annotations=ident.annotations()
        ),
        # the daemon pods (their template is in the driver's image) call the API with it
        automount_service_account_token=True,
    )
    grant(
        scope,
        ident,
        name=DAEMON_CLUSTER_ROLE,
        namespace=namespace,
        service_account=DAEMON_SA,
        rules=DAEMON_RULES,
        cluster=True,
    )


def crd_bodies() -> list[tuple[str, str, dict[str, Any]]]:
    """(construct id, name, body) of each CRD: namespaced, one served and stored version."""
    out = []
    for kind, plural, schema, status in CRDS:
        spec = kube.crd_spec(
            CRD_GROUP, CRD_VERSION, kind, plural, "Namespaced", schema, status=status
        )
        out.append((f"crd-{plural}", f"{plural}.{CRD_GROUP}", {"spec": spec}))
    return out


def _obj(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = list(required)
    return out


_STRING: Final = {"type": "string"}
_META: Final = {
    "apiVersion": _STRING,
    "kind": _STRING,
    "metadata": {"type": "object"},
}
#: ``api/nvidia.com/resource/v1beta1/computedomain.go``: the spec (immutable), the status the
#: controller and daemons write (kept open: gpustack validates nothing the driver writes).
_COMPUTE_DOMAIN: Final = _obj(
    {
        **_META,
        "spec": {
            **_obj(
                {
                    "numNodes": {"type": "integer", "minimum": 0, "default": 0},
                    "channel": _obj(
                        {
                            "resourceClaimTemplate": _obj({"name": _STRING}, ("name",)),
                            "allocationMode": {
                                "type": "string",
                                "enum": ["All", "Single"],
                                "default": "Single",
                            },
                        },
                        ("resourceClaimTemplate",),
                    ),
                },
                ("channel",),
            ),
            "x-kubernetes-validations": [
                {"rule": "self == oldSelf", "message": "A ComputeDomain's spec is immutable"}
            ],
        },
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    }
)
#: ``api/nvidia.com/resource/v1beta1/computedomainclique.go``: the daemons of one NVLink clique.
_CLIQUE: Final = _obj(
    {
        **_META,
        "daemons": {
            "type": "array",
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["nodeName"],
            "items": _obj(
                {
                    "nodeName": _STRING,
                    "ipAddress": _STRING,
                    "cliqueID": _STRING,
                    "index": {"type": "integer"},
                    "status": {
                        "type": "string",
                        "enum": ["Ready", "NotReady"],
                        "default": "NotReady",
                    },
                },
                ("cliqueID", "ipAddress", "nodeName"),
            ),
        },
    }
)
#: (kind, plural, schema, status subresource)
CRDS: Final = (
    ("ComputeDomain", "computedomains", _COMPUTE_DOMAIN, True),
    ("ComputeDomainClique", "computedomaincliques", _CLIQUE, False),
)
