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
- for ComputeDomains, their CRDs, controller and IMEX daemons' access
  (:mod:`gpustack.constructs.dra_compute_domains`);
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
  does not turn on: left out. The ComputeDomain rules are granted only when ComputeDomains are on.
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
from gpustack.constructs import dra_compute_domains as cd
from gpustack.constructs import k8s, kube
from gpustack.constructs.dra_compute_domains import (
    add_controller,
    add_daemon_access,
    crd_bodies,
)
from gpustack.constructs.dra_gates import gate_env
from gpustack.constructs.dra_slices import slice_policy, slice_policy_binding
from gpustack.constructs.kube import CDI_ROOT
from gpustack.constructs.labels import Identity
from gpustack.constructs.node_daemonset import NodeApp, NodeDaemonSet
from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.constructs.rbac import Access, grant, token_volume
from gpustack.constructs.scripts import DRIVER_ROOT_CTR_PATH
from gpustack.constructs.waits import WaitFor
from gpustack.kube.labels import DRA_DRIVER_COMPONENT
from gpustack.profile import derive, readiness
from gpustack.profile.model import Profile

COMPONENT: Final = DRA_DRIVER_COMPONENT
#: The DaemonSet and its pods' ``app`` label: NVIDIA's driver manager waits for these pods.
KUBELET_PLUGIN: Final = "nvidia-dra-driver-kubelet-plugin"
#: The plugin's ServiceAccount (the ResourceSlice policy names it).
KUBELET_PLUGIN_SA: Final = "nvidia-dra-driver-kubeletplugin"

KUBELET_PLUGIN_CLUSTER_ROLE: Final = "gpustack-nvidia-dra-driver-kubeletplugin"
KUBELET_PLUGIN_ROLE: Final = "gpustack-nvidia-dra-driver-kubeletplugin-cliques"
#: The plugin's ComputeDomain reads, a ClusterRole of their own so each role's rules are fixed.
KUBELET_PLUGIN_CD_CLUSTER_ROLE: Final = "gpustack-nvidia-dra-driver-kubeletplugin-domains"
SLICE_POLICY: Final = "gpustack-dra-resourceslices"

# The ComputeDomain part's names and rules (:mod:`gpustack.constructs.dra_compute_domains`),
# read here with the rest of the DRA driver's (the access tables, conformance).
CONTROLLER: Final = cd.CONTROLLER
CONTROLLER_CLUSTER_ROLE: Final = cd.CONTROLLER_CLUSTER_ROLE
CONTROLLER_ROLE: Final = cd.CONTROLLER_ROLE
CONTROLLER_RULES: Final = cd.CONTROLLER_RULES
CONTROLLER_NAMESPACED: Final = cd.CONTROLLER_NAMESPACED
DAEMON_SA: Final = cd.DAEMON_SA
DAEMON_CLUSTER_ROLE: Final = cd.DAEMON_CLUSTER_ROLE
DAEMON_RULES: Final = cd.DAEMON_RULES
KUBELET_PLUGIN_CD_RULES: Final = cd.KUBELET_PLUGIN_CD_RULES
KUBELET_PLUGIN_CD_NAMESPACED: Final = cd.KUBELET_PLUGIN_CD_NAMESPACED

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
    - ``feature_gates``: the gates ``dra.featureGates`` sets; ``imex_mode``,
      ``imex_host_socket``: ``dra.imexMode``, ``dra.imexHostSocketPath``
      (:mod:`gpustack.constructs.dra_gates`).
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
    feature_gates: tuple[tuple[str, bool], ...]
    imex_mode: str
    imex_host_socket: str

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
            feature_gates=tuple(sorted(dra.feature_gates.values().items())),
            imex_mode=dra.imex_mode,
            imex_host_socket=dra.imex_host_socket_path,
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
            extra = gate_env(dict(props.feature_gates), props.imex_mode)
            ident, namespace = self._ident(CONTROLLER), props.placement.namespace
            add_controller(self, ident, props.container, props.placement, extra)
            if props.imex_mode != "hostManaged":  # no IMEX daemons to run
                add_daemon_access(self, self._ident("compute-domain-daemon"), namespace)

    def _ident(self, name: str) -> Identity:
        return Identity.placed(name, COMPONENT, self.props.version, self.props.placement)

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
        for id, name, body in crd_bodies():
            self._raw(id, "apiextensions.k8s.io/v1", "CustomResourceDefinition", name, body)

    def _plugin_container(
        self, ds: NodeDaemonSet, name: str, binary: str, port: int, metrics: str, every: int
    ) -> k8s.Container:
        """One plugin container; ``every``: its liveness period (NVIDIA: 30 s for ``gpus``,
        10 s for ``compute-domains``)."""
        props = self.props
        probe = k8s.GrpcAction(port=port, service="liveness")
        return kube.main_container(
            name,
            props.container,
            command=[binary, "-v", "$(LOG_VERBOSITY)"],
            env=kube.env_list(
                self._plugin_env(binary, port, metrics),
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
            volume_mounts=self._plugin_mounts(ds),
        )

    def _plugin_env(self, binary: str, port: int, metrics: str) -> list[tuple[str, str]]:
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
            *self._gate_env(binary),
            ("KUBELET_REGISTRAR_DIRECTORY_PATH", props.registry_dir),
            ("KUBELET_PLUGINS_DIRECTORY_PATH", props.plugins_dir),
            ("HEALTHCHECK_PORT", str(port)),
        ]
        if binary == "compute-domain-kubelet-plugin":
            env.append(("GPU_CLIQUE_LABEL_ENABLED", "true"))
        return env

    def _gate_env(self, binary: str) -> list[tuple[str, str]]:
        props, domains = self.props, binary == "compute-domain-kubelet-plugin"
        imex = props.imex_mode if domains else None
        socket = props.imex_host_socket if domains else None
        return gate_env(dict(props.feature_gates), imex, socket)

    def _plugin_mounts(self, ds: NodeDaemonSet) -> list[k8s.VolumeMount]:
        """The kubelet's plugin registry and plugins folders (``Bidirectional``: the DRA socket
        lives there), the CDI folder, the driver root and the API token."""
        props = self.props
        registry, plugins = props.registry_dir, props.plugins_dir
        driver_root = kube.host_path("driver-root", props.driver_root, "DirectoryOrCreate")
        return [
            ds.mount(kube.host_path("plugins-registry", registry), registry),
            ds.mount(kube.host_path("plugins", plugins), plugins, propagation="Bidirectional"),
            ds.mount(kube.host_path("cdi", CDI_ROOT, "DirectoryOrCreate"), CDI_ROOT),
            ds.mount(
                driver_root, DRIVER_ROOT_CTR_PATH, read_only=True, propagation="HostToContainer"
            ),
            ds.mount(
                token_volume(), "/var/run/secrets/kubernetes.io/serviceaccount", read_only=True
            ),
        ]

    def _plugin_access(self, app: NodeApp) -> None:
        """The plugin's ServiceAccount and grants (with ComputeDomains, their rules too)."""
        kube.service_account(
            self,
            "kubelet-plugin-sa",
            metadata=app.meta(KUBELET_PLUGIN_SA),
            automount_service_account_token=False,
        )
        grants: list[tuple[str, tuple[Access, ...], bool]] = [
            (KUBELET_PLUGIN_CLUSTER_ROLE, KUBELET_PLUGIN_RULES, True)
        ]
        if self.props.compute_domains:
            grants += [
                (KUBELET_PLUGIN_CD_CLUSTER_ROLE, KUBELET_PLUGIN_CD_RULES, True),
                (KUBELET_PLUGIN_ROLE, KUBELET_PLUGIN_CD_NAMESPACED, False),
            ]
        for role, rules, cluster in grants:
            grant(
                self,
                app.ident,
                name=role,
                namespace=self.props.placement.namespace,
                service_account=KUBELET_PLUGIN_SA,
                rules=rules,
                cluster=cluster,
            )

    def _kubelet_plugin(self) -> None:
        props = self.props
        app = NodeApp(self._ident(KUBELET_PLUGIN), props.placement)
        self._plugin_access(app)
        ds = NodeDaemonSet(self, app, service_account=KUBELET_PLUGIN_SA)
        containers = []
        if props.compute_domains:
            containers.append(
                self._plugin_container(
                    ds, "compute-domains", "compute-domain-kubelet-plugin", CD_HEALTH_PORT,
                    ":8081", 10,
                )
            )  # fmt: skip
        if props.gpus:
            containers.append(
                self._plugin_container(
                    ds, "gpus", "gpu-kubelet-plugin", GPUS_HEALTH_PORT, ":8080", 30
                )
            )
        waits = ds.waits(props.wait_for, "runtime-validation")
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
        """See :mod:`gpustack.constructs.dra_slices`."""
        user = f"system:serviceaccount:{self.props.placement.namespace}:{KUBELET_PLUGIN_SA}"
        api = "admissionregistration.k8s.io/v1"
        policy, binding = slice_policy(SLICE_POLICY, user), slice_policy_binding(SLICE_POLICY)
        self._raw("slice-policy", api, "ValidatingAdmissionPolicy", SLICE_POLICY, policy)
        self._raw(
            "slice-policy-binding", api, "ValidatingAdmissionPolicyBinding", SLICE_POLICY, binding
        )
