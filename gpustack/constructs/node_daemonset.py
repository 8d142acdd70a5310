"""The building block of every GPU node DaemonSet (driver, toolkit, device plugin, MPS daemon...).

What all of them share lives here, once: objects named and labelled by one :class:`Identity` in
the stack's namespace; a ServiceAccount without an API token (no GPU daemon calls the API);
ConfigMaps whose data checksum is stamped on the pod template, so editing a script or a config
rolls the pods (or, with ``OnDelete``, shows they are stale); a pod skeleton with the profile's
placement (node selector, tolerations, priority class, pull secrets) and the RuntimeDefault
seccomp profile; the component's deploy label (``nvidia.com/gpu.deploy.<component>``, see
:func:`gpustack.constructs.placement.deploy_selection`) in its node selection; an ``app`` pod
label, the key NVIDIA's driver manager finds the GPU clients by; init containers that wait for
another operand's readiness file.

Volumes are declared by the mounts that use them (as in cdk8s-plus): :meth:`NodeDaemonSet.mount`
returns the container's ``volumeMount`` and adds the volume to the pod once, in first-mount
order, so a pod can never mount a volume it does not declare, nor declare one twice. An operand
module then states only what is specific to it: its containers, mounts and pod options.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import cdk8s
from constructs import Construct

from gpustack.constructs import k8s, kube
from gpustack.constructs.kube import VALIDATIONS_DIR
from gpustack.constructs.labels import Identity
from gpustack.constructs.placement import Placement, deploy_selection
from gpustack.constructs.waits import WaitFor
from gpustack.profile import components

#: Annotation naming the container ``kubectl logs``/``exec`` pick by default.
DEFAULT_CONTAINER_ANNOTATION: Final = "kubectl.kubernetes.io/default-container"
#: Pod-template annotation with the checksum of the scripts ConfigMap.
SCRIPTS_CHECKSUM: Final = "gpustack.dev/scripts-checksum"
#: Pod-template annotation with the checksum of a config ConfigMap (the device plugin's).
CONFIG_CHECKSUM: Final = "gpustack.dev/config-checksum"

#: Pod label NVIDIA's driver manager selects a component's pods by when it waits for them to stop
#: (``app=nvidia-container-toolkit-daemonset``...); never in a selector of ours.
APP_LABEL: Final = "app"

#: The readiness files the operands leave for each other (see :mod:`gpustack.constructs.scripts`).
VALIDATIONS: Final = kube.host_path("run-nvidia-validations", VALIDATIONS_DIR, "DirectoryOrCreate")


@dataclass(frozen=True)
class NodeApp:
    """One application of a component on the GPU nodes: its label identity and placement.

    ``deploy``: the component whose deploy label places its pods (by default its own, when it
    has one); ``None`` for none (Node Feature Discovery's worker runs on every node).
    ``deploy_off``: values of that label, besides the common ones, that keep its pods off a node
    (see :func:`~gpustack.constructs.placement.deploy_selection`)."""

    ident: Identity
    placement: Placement
    deploy: str | None = field(default="")
    deploy_off: tuple[str, ...] = ()

    @property
    def deploy_component(self) -> str | None:
        if self.deploy == "":
            component = self.ident.component
            return component if component in components.deploy_components() else None
        return self.deploy

    def meta(self, name: str, *, workload: bool = False) -> k8s.ObjectMeta:
        """Metadata of one of its objects: in the stack's namespace, with its labels and wave
        (and the version label for the ``workload`` that runs it)."""
        return kube.object_meta(
            name,
            namespace=self.placement.namespace,
            labels=self.ident.workload_labels() if workload else self.ident.labels(),
            annotations=self.ident.annotations(),
        )

    def service_account(self, scope: Construct, id: str = "service-account") -> str:
        """The ServiceAccount named like the app, without an API token; returns its name.

        No GPU daemon talks to the API server (the plugin talks only to the kubelet's socket),
        so none gets RBAC or a token."""
        kube.service_account(
            scope,
            id,
            metadata=self.meta(self.ident.name),
            automount_service_account_token=False,
        )
        return self.ident.name


class NodeProps(Protocol):
    """What the props of every component that runs on the GPU nodes carry."""

    @property
    def version(self) -> str: ...

    @property
    def placement(self) -> Placement: ...


class NodeDaemonSet:
    """One DaemonSet under construction: collects volumes and pod-template annotations while the
    operand builds its containers, then :meth:`add` creates it in ``scope``.

    ``service_account`` names the pods' ServiceAccount (see :meth:`NodeApp.service_account`);
    several DaemonSets of one component may share one.
    """

    def __init__(self, scope: Construct, app: NodeApp, *, service_account: str) -> None:
        self.scope = scope
        self.app = app
        self.service_account = service_account
        self._volumes: dict[str, k8s.Volume] = {}
        self._annotations: dict[str, str] = {}

    @classmethod
    def own(cls, scope: Construct, app: NodeApp) -> NodeDaemonSet:
        """The usual case: pods that run as the app's own ServiceAccount, made here (no token,
        see :meth:`NodeApp.service_account`)."""
        return cls(scope, app, service_account=app.service_account(scope))

    @classmethod
    def of(
        cls, scope: Construct, name: str, component: str, props: NodeProps, **app: Any
    ) -> NodeDaemonSet:
        """:meth:`own` for the app ``name`` of ``component``, named and labelled from its props
        (their version, and the placement's labels and nodes); ``app`` goes to
        :class:`NodeApp`."""
        placement = props.placement
        ident = Identity.placed(name, component, props.version, placement)
        return cls.own(scope, NodeApp(ident, placement, **app))

    def mount(
        self,
        volume: k8s.Volume,
        path: str,
        *,
        read_only: bool | None = None,
        propagation: str | None = None,
    ) -> k8s.VolumeMount:
        """A container's mount of ``volume`` at ``path``; the pod gets the volume (once).

        Two different volumes under one name are a bug in the operand, refused here."""
        known = self._volumes.setdefault(volume.name, volume)
        if known != volume:
            raise ValueError(f"two different pod volumes are named {volume.name!r}")
        return kube.mount(volume.name, path, read_only=read_only, propagation=propagation)

    def stamp(self, annotation: str, data: Mapping[str, str]) -> None:
        """Put the checksum of a ConfigMap's ``data`` on the pod template under ``annotation``."""
        self._annotations[annotation] = kube.data_checksum(data)

    def config_map(
        self,
        id: str,
        name: str,
        data: Mapping[str, str],
        *,
        checksum: str,
        volume: str,
        mode: int | None = None,
    ) -> k8s.Volume:
        """A ConfigMap of the app, its checksum on the pod template under ``checksum``; returns
        the pod volume named ``volume`` to :meth:`mount` it with (``mode``: file mode)."""
        kube.config_map(self.scope, id, metadata=self.app.meta(name), data=dict(data))
        self.stamp(checksum, data)
        return kube.config_map_volume(volume, name, mode)

    def scripts(self, data: Mapping[str, str]) -> k8s.Volume:
        """The ``<app>-scripts`` ConfigMap (executable files, :data:`SCRIPTS_CHECKSUM`)."""
        name = f"{self.app.ident.name}-scripts"
        return self.config_map(
            "scripts", name, data, checksum=SCRIPTS_CHECKSUM, volume="scripts", mode=0o555
        )

    def wait_for(self, wait: WaitFor, name: str) -> k8s.Container:
        """An unprivileged init container ``name`` that blocks until ``wait.file`` exists."""
        validations = self.mount(
            VALIDATIONS, VALIDATIONS_DIR, read_only=True, propagation="HostToContainer"
        )
        return self.wait_container(wait, name, wait.script(), [validations])

    def wait_container(
        self, wait: WaitFor, name: str, script: str, mounts: list[k8s.VolumeMount]
    ) -> k8s.Container:
        """An unprivileged init container ``name`` in the wait's image that runs ``script``
        with sh: :meth:`wait_for`'s, or a wait that reads more than the validations folder."""
        return k8s.Container(
            name=name,
            image=wait.image,
            image_pull_policy=wait.image_pull_policy,
            command=["sh", "-c", script],
            security_context=kube.unprivileged(),
            volume_mounts=mounts,
        )

    def waits(self, wait: WaitFor | None, name: str) -> list[k8s.Container]:
        """The init containers of an optional wait: :meth:`wait_for`'s, or none."""
        return [self.wait_for(wait, name)] if wait is not None else []

    def add(
        self,
        id: str,
        name: str,
        *,
        containers: Sequence[k8s.Container],
        init_containers: Sequence[k8s.Container] = (),
        default_container: bool = False,
        update_strategy: k8s.DaemonSetUpdateStrategy | None = None,
        app_label: str | None = None,
        **pod: Any,
    ) -> cdk8s.ApiObject:
        """The DaemonSet ``name``: the pod skeleton plus the operand's ``pod`` options
        (``host_pid``, ``runtime_class_name``, ``affinity``...). ``default_container`` names the
        first container as the one ``kubectl`` picks. ``app_label``: the pods' ``app`` label
        (default ``name``). The deploy label requirements join the node selector and every
        term of a required node affinity."""
        annotations = dict(self._annotations)
        if default_container:
            annotations[DEFAULT_CONTAINER_ANNOTATION] = containers[0].name
        ident = self.app.ident
        placement = kube.pod_placement(self.app.placement)
        component = self.app.deploy_component
        if component is not None:
            selector, requirements = deploy_selection(
                component, self.app.placement.deploy_labels, self.app.deploy_off
            )
            placement["node_selector"] = {**(placement["node_selector"] or {}), **selector}
            pod["affinity"] = with_node_requirements(pod.get("affinity"), requirements)
        labels = {**ident.pod_labels(), APP_LABEL: app_label or name}
        return kube.daemon_set(
            self.scope,
            id,
            metadata=self.app.meta(name, workload=True),
            spec=k8s.DaemonSetSpec(
                selector=k8s.LabelSelector(match_labels=ident.selector()),
                update_strategy=update_strategy,
                template=k8s.PodTemplateSpec(
                    metadata=k8s.ObjectMeta(labels=labels, annotations=annotations or None),
                    spec=k8s.PodSpec(
                        service_account_name=self.service_account,
                        automount_service_account_token=False,
                        security_context=kube.pod_security_context(),
                        init_containers=list(init_containers) or None,
                        containers=list(containers),
                        volumes=list(self._volumes.values()) or None,
                        **pod,
                        **placement,
                    ),
                ),
            ),
        )


def with_node_requirements(
    affinity: k8s.Affinity | None, requirements: Sequence[tuple[str, str, Sequence[str]]]
) -> k8s.Affinity | None:
    """``affinity`` with ``requirements`` (label, operator, values) added to every term of its
    required node affinity (a new single term when it has none): node selector terms are ORed,
    so each must carry them."""
    if not requirements:
        return affinity
    extra = [
        k8s.NodeSelectorRequirement(key=key, operator=op, values=list(values))
        for key, op, values in requirements
    ]
    node = affinity.node_affinity if affinity is not None else None
    required = node.required_during_scheduling_ignored_during_execution if node else None
    terms = list(required.node_selector_terms) if required is not None else []
    new_terms = [
        k8s.NodeSelectorTerm(
            match_expressions=[*(t.match_expressions or []), *extra],
            match_fields=t.match_fields,
        )
        for t in terms
    ] or [k8s.NodeSelectorTerm(match_expressions=extra)]
    return k8s.Affinity(
        node_affinity=k8s.NodeAffinity(
            required_during_scheduling_ignored_during_execution=k8s.NodeSelector(
                node_selector_terms=new_terms
            ),
            preferred_during_scheduling_ignored_during_execution=(
                node.preferred_during_scheduling_ignored_during_execution if node else None
            ),
        ),
        pod_affinity=affinity.pod_affinity if affinity is not None else None,
        pod_anti_affinity=affinity.pod_anti_affinity if affinity is not None else None,
    )
