"""NVIDIA's DRA driver for GPUs (``dra``), as plain manifests: no operator, no Helm.

What it is made of, held to NVIDIA's own rendering of it (the GPU Operator v26.7.0's
``internal/state/testdata/golden/gpucluster-dra-driver-full-spec.yaml`` and ``-gpus-only.yaml``,
rendered from ``manifests/state-dra-driver/``, which follows the driver's Helm chart
``deployments/helm/dra-driver-nvidia-gpu/templates/`` at kubernetes-sigs/dra-driver-nvidia-gpu):

- the kubelet plugin DaemonSet ``nvidia-dra-driver-kubelet-plugin`` with a ``gpus`` container
  (``gpu-kubelet-plugin``, GPU allocation) and/or a ``compute-domains`` container
  (``compute-domain-kubelet-plugin``), each privileged, with the kubelet's plugin registry and
  plugins folders (``Bidirectional`` for the plugins folder, where the DRA socket lives), the CDI
  folder it writes per-claim specs to, and the driver root at ``/driver-root``;
- the DeviceClasses (:func:`gpustack.profile.derive.dra_device_classes`), from
  :data:`gpustack.dra_upstream.DEVICE_CLASSES`;
- for ComputeDomains: the ``ComputeDomain`` and ``ComputeDomainClique`` CRDs
  (``resource.nvidia.com/v1beta1``), the controller Deployment and the ServiceAccount and
  ClusterRole of the IMEX daemons the controller starts (the daemon pod template in the image,
  ``templates/compute-domain-daemon.tmpl.yaml``, names ``compute-domain-daemon-service-account``);
- a ValidatingAdmissionPolicy that lets the plugin's ServiceAccount write only its own node's
  ResourceSlices (the chart's ``validatingadmissionpolicy.yaml``: the node name comes from the
  token's ``authentication.kubernetes.io/node-name`` extra).

Where gpustack differs from NVIDIA's rendering, and why:

- NVIDIA's operator puts its ``gpu-operator-validator`` in front of the plugin (an init container
  that writes a ``driver-ready`` env file the plugin sources). gpustack's operands already
  leave readiness files: the plugin waits, like the other operands, for the file of the stage it
  needs (:func:`dra_wait`), and gets ``NVIDIA_DRIVER_ROOT`` as the chart sets it
  (``nvidiaDriverRoot``: the driver container's root, or the host's ``driver.hostDriverRoot``).
  The operator's driver-validation Role (``daemonsets: list`` for its validator) is left out.
- The MPS Role (``deployments``) is the driver's ``MPSSupport`` feature gate's, which gpustack
  does not turn on; the controller's ``leases`` rule is for leader election, off with one
  replica (``LEADER_ELECTION_ENABLED=false``, as NVIDIA renders it). Both are left out, and the
  ComputeDomain rules are granted only when ComputeDomains are on.
- The plugin pods carry ``app: nvidia-dra-driver-kubelet-plugin`` and are placed by the deploy
  label ``nvidia.com/gpu.deploy.dra-driver``, as NVIDIA's: the driver manager (k8s-driver-manager
  v0.12.0, ``cmd/driver-manager/main.go`` ``evictKubeletPlugin``) pauses that label and waits for
  pods with that ``app`` label to stop before it unloads the driver, last, after the plugin's
  claim-holding clients.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Final

from constructs import Construct

from gpustack import dra_upstream
from gpustack.constructs import k8s, kube
from gpustack.constructs.kube import CDI_ROOT
from gpustack.constructs.labels import Identity
from gpustack.constructs.node_daemonset import NodeApp, NodeDaemonSet, WaitFor
from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.constructs.rbac import Access, grant, token_volume
from gpustack.constructs.scripts import DRIVER_ROOT_CTR_PATH
from gpustack.kube.labels import CONTROL_PLANE
from gpustack.profile import derive, readiness
from gpustack.profile.model import Profile

COMPONENT: Final = "dra-driver"
#: The DaemonSet and its pods' ``app`` label: NVIDIA's driver manager waits for these pods.
KUBELET_PLUGIN: Final = "nvidia-dra-driver-kubelet-plugin"
#: The plugin's ServiceAccount (the ResourceSlice policy names it).
KUBELET_PLUGIN_SA: Final = "nvidia-dra-driver-kubeletplugin"
CONTROLLER: Final = "nvidia-dra-driver-controller"
#: Fixed in the driver image's daemon pod template (``templates/compute-domain-daemon.tmpl.yaml``).
DAEMON_SA: Final = "compute-domain-daemon-service-account"

KUBELET_PLUGIN_CLUSTER_ROLE: Final = "gpustack-nvidia-dra-driver-kubeletplugin"
KUBELET_PLUGIN_ROLE: Final = "gpustack-nvidia-dra-driver-kubeletplugin-cliques"
#: The plugin's ComputeDomain reads, a ClusterRole of their own so each role's rules are fixed.
KUBELET_PLUGIN_CD_CLUSTER_ROLE: Final = "gpustack-nvidia-dra-driver-kubeletplugin-domains"
CONTROLLER_CLUSTER_ROLE: Final = "gpustack-nvidia-dra-driver-controller"
CONTROLLER_ROLE: Final = "gpustack-nvidia-dra-driver-controller-daemons"
DAEMON_CLUSTER_ROLE: Final = "gpustack-compute-domain-daemon"
SLICE_POLICY: Final = "gpustack-dra-resourceslices"

CRD_GROUP: Final = dra_upstream.COMPUTE_DOMAIN_API_GROUP
CRD_VERSION: Final = dra_upstream.COMPUTE_DOMAIN_API_VERSION

#: The plugins' gRPC health ports, NVIDIA's defaults: ``defaultGPUsHealthcheckPort`` and
#: ``defaultComputeDomainsHealthcheckPort`` in ``internal/state/dra_driver.go`` (GPU Operator
#: v26.7.0), as ``gpucluster-dra-driver-gpus-only.yaml`` renders them. The full-spec golden's
#: 52000 for ``gpus`` is an override its test sets (``gpucluster_render_test.go``), not a default.
GPUS_HEALTH_PORT: Final = 51516
CD_HEALTH_PORT: Final = 51515

#: The GPU kubelet plugin's rules: the calls its code makes (dra-driver-nvidia-gpu at 95932046,
#: v0.5.0-dev), fewer than NVIDIA's chart grants (``rbac-kubeletplugin.yaml``: claims and slices
#: also get/list/watch, nodes list/watch/update/patch, pods for the MPSSupport gate gpustack
#: leaves off).
KUBELET_PLUGIN_RULES: Final = (
    Access(
        "resource.k8s.io",
        ("resourceclaims",),
        ("get",),
        "vendor/k8s.io/dynamic-resource-allocation/kubeletplugin/draplugin.go"
        " getResourceClaims: NodePrepareResources reads each claim",
    ),
    Access(
        "resource.k8s.io",
        ("resourceslices",),
        ("list", "watch", "create", "update", "delete"),
        "resourceslice/resourceslicecontroller.go: watches the node's slices and creates,"
        " updates and deletes them",
    ),
    Access(
        "",
        ("nodes",),
        ("get",),
        "resourceslicecontroller.go: the Node's UID for the slices' owner reference",
    ),
)
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


def dra_wait(profile: Profile) -> WaitFor | None:
    """The plugin's init container: it waits for
    :func:`gpustack.profile.readiness.dra_plugin_wait`'s file (the one decision, which the
    readiness graph reads too)."""
    return WaitFor.on(profile, readiness.dra_plugin_wait(profile))


@dataclass(frozen=True)
class DraDriverProps:
    """Properties for :class:`DraDriver`, from ``dra``, ``driver`` and ``cluster``.

    - ``container``: image, pull policy, env and resources of the driver's containers.
    - ``placement``: the stack's placement; the plugin also selects ``dra.nodeSelector``.
    - ``version``: for the version label.
    - ``gpus`` / ``compute_domains``: the two parts (``dra.gpus``, ``dra.computeDomains``).
    - ``device_classes``: the DeviceClasses to create.
    - ``extended_resource``: ``gpu.nvidia.com`` answers ``nvidia.com/gpu`` limits.
    - ``driver_root``: the host driver root (``driver.root``).
    - ``registry_dir`` / ``plugins_dir``: the kubelet's plugin registration and plugin data
      folders, below its root folder (``cluster.kubeletRootDir``, or the distribution's: k0s and
      MicroK8s move it). The plugin's sockets must be where that kubelet looks, and the data
      folder has the same path inside the container as on the host (the kubelet hands the
      plugin paths in it: ``kubeletplugin/draplugin.go`` ``PluginDataDirectoryPath``).
    - ``wait_for``: see :func:`dra_wait`.
    """

    container: ContainerSettings
    placement: Placement
    version: str
    gpus: bool
    compute_domains: bool
    device_classes: tuple[str, ...]
    extended_resource: bool
    driver_root: str
    registry_dir: str
    plugins_dir: str
    wait_for: WaitFor | None

    @classmethod
    def from_profile(cls, profile: Profile) -> DraDriverProps:
        dra = profile.dra
        placement = Placement.from_profile(profile)
        selector = dict(placement.node_selector)
        selector.update(dra.node_selector)
        kubelet = profile.cluster.resolved_kubelet_root_dir().rstrip("/")
        return cls(
            container=ContainerSettings.from_section(dra),
            placement=replace(placement, node_selector=tuple(sorted(selector.items()))),
            version=dra.version,
            gpus=dra.gpus,
            compute_domains=dra.compute_domains,
            device_classes=derive.dra_device_classes(profile),
            extended_resource=dra.extended_resource_name,
            driver_root=profile.driver.root,
            registry_dir=f"{kubelet}/{dra_upstream.REGISTRY_SUBDIR}",
            plugins_dir=f"{kubelet}/{dra_upstream.PLUGINS_SUBDIR}",
            wait_for=dra_wait(profile),
        )


class DraDriver(Construct):
    """DeviceClasses, the kubelet plugin and, for ComputeDomains, the CRDs and controller."""

    def __init__(self, scope: Construct, id: str, props: DraDriverProps) -> None:
        super().__init__(scope, id)
        self.props = props
        if props.compute_domains:
            self._crds()
        self._device_classes()
        self._kubelet_plugin()
        self._slice_policy()
        if props.compute_domains:
            self._controller()
            self._daemon_access()

    def _ident(self, name: str) -> Identity:
        return Identity(name, COMPONENT, self.props.version, self.props.placement.labels)

    def _raw(self, id: str, api_version: str, kind: str, name: str, body: dict[str, Any]) -> None:
        """A cluster-scoped object of a kind :mod:`gpustack.constructs.kube` has no builder for."""
        ident = self._ident(name)
        kube.api_object(
            self,
            id,
            api_version=api_version,
            kind=kind,
            name=name,
            namespace=None,
            labels=ident.labels(),
            annotations=ident.annotations(),
            body=body,
        )

    def _device_classes(self) -> None:
        for device_class in dra_upstream.DEVICE_CLASSES:
            if device_class.name not in self.props.device_classes:
                continue
            spec: dict[str, Any] = {"selectors": [{"cel": {"expression": device_class.cel}}]}
            if self.props.extended_resource and device_class.extended_resource_name:
                spec["extendedResourceName"] = device_class.extended_resource_name
            self._raw(
                f"deviceclass-{device_class.name}",
                "resource.k8s.io/v1",
                "DeviceClass",
                device_class.name,
                {"spec": spec},
            )

    def _crds(self) -> None:
        for kind, plural, schema, status in CRDS:
            version: dict[str, Any] = {
                "name": CRD_VERSION,
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": schema},
            }
            if status:
                version["subresources"] = {"status": {}}
            names = {
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": plural,
                "singular": kind.lower(),
            }
            self._raw(
                f"crd-{plural}",
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                f"{plural}.{CRD_GROUP}",
                {
                    "spec": {
                        "group": CRD_GROUP,
                        "names": names,
                        "scope": "Namespaced",
                        "versions": [version],
                    }
                },
            )

    def _plugin_container(
        self, ds: NodeDaemonSet, name: str, binary: str, port: int, metrics: str, every: int
    ) -> k8s.Container:
        """One plugin container; ``every``: its liveness period (NVIDIA: 30 s for ``gpus``,
        10 s for ``compute-domains``)."""
        props = self.props
        env = [
            ("HTTP_ENDPOINT", metrics),
            ("METRICS_PATH", "/metrics"),
            ("LOG_VERBOSITY", "4"),
            ("NVIDIA_DRIVER_ROOT", props.driver_root),
            # runc must not hand the plugin's own container every GPU
            ("NVIDIA_VISIBLE_DEVICES", "void"),
            ("CDI_ROOT", CDI_ROOT),
            ("NVIDIA_MIG_CONFIG_DEVICES", "all"),
            ("KUBELET_REGISTRAR_DIRECTORY_PATH", props.registry_dir),
            ("KUBELET_PLUGINS_DIRECTORY_PATH", props.plugins_dir),
            ("HEALTHCHECK_PORT", str(port)),
        ]
        if binary == "compute-domain-kubelet-plugin":
            env.append(("GPU_CLIQUE_LABEL_ENABLED", "true"))
        probe = k8s.GrpcAction(port=port, service="liveness")
        return kube.main_container(
            name,
            props.container,
            command=[binary, "-v", "$(LOG_VERBOSITY)"],
            env=kube.env_list(
                env,
                props.container.env,
                field_refs={"NODE_NAME": "spec.nodeName", "NAMESPACE": "metadata.namespace"},
            ),
            # creates device nodes, reads NVML and writes CDI specs and sockets on the host
            security_context=k8s.SecurityContext(privileged=True),
            startup_probe=k8s.Probe(
                grpc=probe, failure_threshold=600, period_seconds=1, timeout_seconds=10
            ),
            liveness_probe=k8s.Probe(
                grpc=probe, failure_threshold=3, period_seconds=every, timeout_seconds=10
            ),
            volume_mounts=[
                ds.mount(
                    kube.host_path("plugins-registry", props.registry_dir), props.registry_dir
                ),
                ds.mount(
                    kube.host_path("plugins", props.plugins_dir),
                    props.plugins_dir,
                    propagation="Bidirectional",
                ),
                ds.mount(kube.host_path("cdi", CDI_ROOT, "DirectoryOrCreate"), CDI_ROOT),
                ds.mount(
                    kube.host_path("driver-root", props.driver_root, "DirectoryOrCreate"),
                    DRIVER_ROOT_CTR_PATH,
                    read_only=True,
                    propagation="HostToContainer",
                ),
                ds.mount(
                    token_volume(), "/var/run/secrets/kubernetes.io/serviceaccount", read_only=True
                ),
            ],
        )

    def _kubelet_plugin(self) -> None:
        props = self.props
        app = NodeApp(self._ident(KUBELET_PLUGIN), props.placement)
        kube.service_account(
            self,
            "kubelet-plugin-sa",
            metadata=app.meta(KUBELET_PLUGIN_SA),
            automount_service_account_token=False,
        )
        ds = NodeDaemonSet(self, app, service_account=KUBELET_PLUGIN_SA)
        namespace = props.placement.namespace
        grant(
            self,
            app.ident,
            name=KUBELET_PLUGIN_CLUSTER_ROLE,
            namespace=namespace,
            service_account=KUBELET_PLUGIN_SA,
            rules=KUBELET_PLUGIN_RULES,
            cluster=True,
        )
        if props.compute_domains:
            grant(
                self,
                app.ident,
                name=KUBELET_PLUGIN_CD_CLUSTER_ROLE,
                namespace=namespace,
                service_account=KUBELET_PLUGIN_SA,
                rules=KUBELET_PLUGIN_CD_RULES,
                cluster=True,
            )
            grant(
                self,
                app.ident,
                name=KUBELET_PLUGIN_ROLE,
                namespace=namespace,
                service_account=KUBELET_PLUGIN_SA,
                rules=KUBELET_PLUGIN_CD_NAMESPACED,
                cluster=False,
            )
        containers = []
        if props.compute_domains:
            containers.append(
                self._plugin_container(
                    ds,
                    "compute-domains",
                    "compute-domain-kubelet-plugin",
                    CD_HEALTH_PORT,
                    ":8081",
                    10,
                )
            )
        if props.gpus:
            containers.append(
                self._plugin_container(
                    ds, "gpus", "gpu-kubelet-plugin", GPUS_HEALTH_PORT, ":8080", 30
                )
            )
        waits = [ds.wait_for(props.wait_for, "runtime-validation")] if props.wait_for else []
        ds.add(
            "kubelet-plugin",
            KUBELET_PLUGIN,
            containers=containers,
            init_containers=waits,
            # a new plugin must not wait for an old one's node: all at once, as NVIDIA renders it
            update_strategy=k8s.DaemonSetUpdateStrategy(
                type="RollingUpdate",
                rolling_update=k8s.RollingUpdateDaemonSet(max_unavailable="100%"),
            ),
        )

    def _slice_policy(self) -> None:
        user = f"system:serviceaccount:{self.props.placement.namespace}:{KUBELET_PLUGIN_SA}"
        target = '(request.operation == "DELETE" ? oldObject : object).spec'
        self._raw(
            "slice-policy",
            "admissionregistration.k8s.io/v1",
            "ValidatingAdmissionPolicy",
            SLICE_POLICY,
            {
                "spec": {
                    "failurePolicy": "Fail",
                    "matchConditions": [
                        {
                            "name": "isKubeletPlugin",
                            "expression": f'request.userInfo.username == "{user}"',
                        }
                    ],
                    "matchConstraints": {
                        "resourceRules": [
                            {
                                "apiGroups": ["resource.k8s.io"],
                                "apiVersions": ["v1"],
                                "operations": ["CREATE", "UPDATE", "DELETE"],
                                "resources": ["resourceslices"],
                            }
                        ]
                    },
                    "variables": [
                        {
                            "name": "userNodeName",
                            "expression": "request.userInfo.extra[?'authentication.kubernetes.io"
                            "/node-name'][0].orValue('')",
                        },
                        {"name": "objectNodeName", "expression": f'{target}.?nodeName.orValue("")'},
                    ],
                    "validations": [
                        {
                            "expression": 'variables.userNodeName != ""',
                            "message": "the DRA kubelet plugin's token names no node",
                        },
                        {
                            "expression": "variables.userNodeName == variables.objectNodeName",
                            "messageExpression": '"the DRA kubelet plugin on node " + '
                            "variables.userNodeName + \" may write only that node's"
                            ' ResourceSlices"',
                        },
                    ],
                }
            },
        )
        self._raw(
            "slice-policy-binding",
            "admissionregistration.k8s.io/v1",
            "ValidatingAdmissionPolicyBinding",
            SLICE_POLICY,
            {"spec": {"policyName": SLICE_POLICY, "validationActions": ["Deny"]}},
        )

    def _controller(self) -> None:
        props = self.props
        namespace = props.placement.namespace
        ident = self._ident(CONTROLLER)
        meta = kube.object_meta(
            CONTROLLER, namespace=namespace, labels=ident.labels(), annotations=ident.annotations()
        )
        kube.service_account(
            self, "controller-sa", metadata=meta, automount_service_account_token=False
        )
        for role, rules, cluster in (
            (CONTROLLER_CLUSTER_ROLE, CONTROLLER_RULES, True),
            (CONTROLLER_ROLE, CONTROLLER_NAMESPACED, False),
        ):
            grant(
                self,
                ident,
                name=role,
                namespace=namespace,
                service_account=CONTROLLER,
                rules=rules,
                cluster=cluster,
            )
        env = [
            ("HTTP_ENDPOINT", ":8080"),
            ("METRICS_PATH", "/metrics"),
            ("LOG_VERBOSITY", "4"),
            ("LOG_VERBOSITY_CD_DAEMON", "4"),
            ("IMAGE_NAME", props.container.image),
            ("NVIDIA_VISIBLE_DEVICES", "void"),
            ("LEADER_ELECTION_ENABLED", "false"),
        ]
        if props.placement.image_pull_secrets:
            env.append(
                ("CD_DAEMON_IMAGE_PULL_SECRET_NAMES", ",".join(props.placement.image_pull_secrets))
            )
        container = kube.main_container(
            "compute-domain",
            props.container,
            command=["compute-domain-controller", "-v", "$(LOG_VERBOSITY)"],
            env=kube.env_list(
                env,
                props.container.env,
                field_refs={"POD_NAME": "metadata.name", "NAMESPACE": "metadata.namespace"},
            ),
            security_context=kube.unprivileged(),
            volume_mounts=[
                kube.mount(
                    "api-token", "/var/run/secrets/kubernetes.io/serviceaccount", read_only=True
                )
            ],
        )
        placement = kube.pod_placement(props.placement)
        # a cluster-wide controller: on any node, control plane preferred (NVIDIA's chart);
        # not bound to the GPU nodes' selector
        tolerations = [
            k8s.Toleration(key=CONTROL_PLANE, operator="Exists", effect="NoSchedule"),
            k8s.Toleration(key="CriticalAddonsOnly", operator="Exists"),
            *(placement["tolerations"] or []),
        ]
        labels = ident.selector()
        kube.deployment(
            self,
            "controller",
            metadata=meta,
            spec=k8s.DeploymentSpec(
                replicas=1,
                selector=k8s.LabelSelector(match_labels=labels),
                template=k8s.PodTemplateSpec(
                    metadata=k8s.ObjectMeta(labels=ident.labels()),
                    spec=k8s.PodSpec(
                        service_account_name=CONTROLLER,
                        automount_service_account_token=False,
                        security_context=kube.pod_security_context(),
                        containers=[container],
                        volumes=[token_volume()],
                        tolerations=tolerations,
                        priority_class_name=placement["priority_class_name"],
                        image_pull_secrets=placement["image_pull_secrets"],
                        affinity=k8s.Affinity(
                            node_affinity=k8s.NodeAffinity(
                                preferred_during_scheduling_ignored_during_execution=[
                                    k8s.PreferredSchedulingTerm(
                                        weight=100,
                                        preference=k8s.NodeSelectorTerm(
                                            match_expressions=[
                                                k8s.NodeSelectorRequirement(
                                                    key=CONTROL_PLANE,
                                                    operator="Exists",
                                                )
                                            ]
                                        ),
                                    )
                                ]
                            )
                        ),
                    ),
                ),
            ),
        )

    def _daemon_access(self) -> None:
        namespace = self.props.placement.namespace
        ident = self._ident("compute-domain-daemon")
        kube.service_account(
            self,
            "daemon-sa",
            metadata=kube.object_meta(
                DAEMON_SA,
                namespace=namespace,
                labels=ident.labels(),
                annotations=ident.annotations(),
            ),
            # the daemon pods (their template is in the driver's image) call the API with it
            automount_service_account_token=True,
        )
        grant(
            self,
            ident,
            name=DAEMON_CLUSTER_ROLE,
            namespace=namespace,
            service_account=DAEMON_SA,
            rules=DAEMON_RULES,
            cluster=True,
        )


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
