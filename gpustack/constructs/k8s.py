"""The Kubernetes API types gpustack's objects are made of, as plain, typed Python values.

Each class is one API type (``Container``, ``PodSpec``...), a frozen dataclass with the
fields gpustack sets, named as the API names them in Python style. :func:`to_json` turns a
value into the object's JSON: the API's field names (camelCase, and the handful of irregular
ones in :data:`JSON_NAMES`), ``None`` fields left out, every mapping's keys sorted, which is
exactly what cdk8s renders for an object (it sorts keys).

Why not cdk8s-plus' generated ``k8s`` structs, which gpustack used before (issue #23): each of
those is a jsii struct whose constructor type-checks every argument at run time, and each
object then crossed into Node as a tree of structs that Node walked again; together with
loading cdk8s-plus, the largest JavaScript library, that was about half of rendering one
cluster. Values built here cost a dataclass each; an object is still one cdk8s ``ApiObject``
(:mod:`gpustack.constructs.kube`), and mypy checks every field name and type at the call site,
which is what the run-time checks were for.

This module imports nothing from cdk8s or jsii, so its values can be built, compared and
pickled (the render cache's key, :mod:`gpustack.constructs.memo`) without Node.

A data table that reads as one, past the project's ~400 lines on purpose: after the JSON helpers,
one short class per API type, each a list of fields; split, a type would be looked for in the
wrong file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final, TypeAlias, dataclass_transform

#: A resource quantity (``"500m"``, ``"1Gi"``, ``1``), written as given.
Quantity: TypeAlias = str | int
#: A port or a percentage: a number or a name (``8080``, ``"http"``, ``"10%"``).
IntOrString: TypeAlias = int | str
#: A part of the API gpustack passes through as written (no typed class for it here).
JsonMap: TypeAlias = Mapping[str, Any]

#: Python field names whose JSON name is not their plain camelCase (Kubernetes spells these
#: acronyms in capitals); ``from_`` is ``from``, a Python keyword.
JSON_NAMES: Final = {
    "cluster_ip": "clusterIP",
    "downward_api": "downwardAPI",
    "from_": "from",
    "host_ipc": "hostIPC",
    "host_pid": "hostPID",
}


def json_name(field: str) -> str:
    """The API's JSON name of a Python field name (``read_only`` -> ``readOnly``)."""
    if field in JSON_NAMES:
        return JSON_NAMES[field]
    head, *rest = field.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass_transform(kw_only_default=True, frozen_default=True)
class Value:
    """Base of every API value class: its annotated fields are keyword arguments (those with
    a default, ``None``, are optional), and a value is immutable and compares by its fields.

    Like a frozen, keyword-only dataclass, and typed as one (``dataclass_transform``), but
    without generating code for each class at import: with ~60 classes, ``dataclasses`` cost
    about 50 ms of every command that renders, a twentieth of one cluster's budget.
    """

    #: The class's fields in declaration order, those without a default, and each field's
    #: JSON name in JSON-name order (the order cdk8s renders keys in).
    _fields: ClassVar[tuple[str, ...]] = ()
    _required: ClassVar[frozenset[str]] = frozenset()
    _plan: ClassVar[tuple[tuple[str, str], ...]] = ()

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        names = tuple(cls.__dict__.get("__annotations__", {}))
        cls._fields = names
        cls._required = frozenset(n for n in names if n not in cls.__dict__)
        cls._plan = tuple(sorted(((n, json_name(n)) for n in names), key=_second))

    def __init__(self, **values: Any) -> None:
        unknown = values.keys() - set(self._fields)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        missing = self._required - values.keys()
        if missing:
            raise TypeError(f"{type(self).__name__} needs {', '.join(sorted(missing))}")
        for name in self._fields:
            object.__setattr__(self, name, values.get(name))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash((type(self), tuple(repr(getattr(self, n)) for n in self._fields)))

    def __repr__(self) -> str:
        shown = (f"{n}={getattr(self, n)!r}" for n in self._fields if getattr(self, n) is not None)
        return f"{type(self).__name__}({', '.join(shown)})"


def _second(pair: tuple[str, str]) -> str:
    return pair[1]


def to_json(value: Any) -> Any:
    """``value`` as JSON data: a :class:`Value` as its object, mappings with sorted keys and no
    ``None`` entries (as cdk8s renders them), sequences item by item, scalars as they are."""
    if isinstance(value, Value):
        out = {}
        for attr, key in value._plan:
            item = getattr(value, attr)
            if item is not None:
                out[key] = to_json(item)
        return out
    if isinstance(value, Mapping):
        return {k: to_json(value[k]) for k in sorted(value) if value[k] is not None}
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    return value


class Affinity(Value):
    node_affinity: NodeAffinity | None = None
    pod_affinity: JsonMap | None = None
    pod_anti_affinity: PodAntiAffinity | None = None


class Capabilities(Value):
    add: Sequence[str] | None = None
    drop: Sequence[str] | None = None


class ConfigMapProjection(Value):
    items: Sequence[KeyToPath] | None = None
    name: str | None = None


class ConfigMapVolumeSource(Value):
    default_mode: int | None = None
    name: str | None = None


class Container(Value):
    name: str
    args: Sequence[str] | None = None
    command: Sequence[str] | None = None
    env: Sequence[EnvVar] | None = None
    env_from: Sequence[JsonMap] | None = None
    image: str | None = None
    image_pull_policy: str | None = None
    lifecycle: Lifecycle | None = None
    liveness_probe: Probe | None = None
    ports: Sequence[ContainerPort] | None = None
    readiness_probe: Probe | None = None
    resources: ResourceRequirements | None = None
    restart_policy: str | None = None
    security_context: SecurityContext | None = None
    startup_probe: Probe | None = None
    termination_message_policy: str | None = None
    volume_mounts: Sequence[VolumeMount] | None = None
    working_dir: str | None = None


class ContainerPort(Value):
    container_port: int
    name: str | None = None


class DaemonSetSpec(Value):
    selector: LabelSelector
    template: PodTemplateSpec
    update_strategy: DaemonSetUpdateStrategy | None = None


class DaemonSetUpdateStrategy(Value):
    rolling_update: RollingUpdateDaemonSet | None = None
    type: str | None = None


class DeploymentSpec(Value):
    selector: LabelSelector
    template: PodTemplateSpec
    replicas: int | None = None


class DownwardApiProjection(Value):
    items: Sequence[DownwardApiVolumeFile] | None = None


class DownwardApiVolumeFile(Value):
    path: str
    field_ref: ObjectFieldSelector | None = None


class EmptyDirVolumeSource(Value):
    medium: str | None = None
    size_limit: Quantity | None = None


class EnvVar(Value):
    name: str
    value: str | None = None
    value_from: EnvVarSource | None = None


class EnvVarSource(Value):
    field_ref: ObjectFieldSelector | None = None


class ExecAction(Value):
    command: Sequence[str] | None = None


class GrpcAction(Value):
    port: int
    service: str | None = None


class HostPathVolumeSource(Value):
    path: str
    type: str | None = None


class HttpGetAction(Value):
    port: IntOrString
    path: str | None = None


class JobSpec(Value):
    template: PodTemplateSpec
    backoff_limit: int | None = None
    completion_mode: str | None = None
    completions: int | None = None
    parallelism: int | None = None


class KeyToPath(Value):
    key: str
    path: str


class LabelSelector(Value):
    match_labels: Mapping[str, str] | None = None


class Lifecycle(Value):
    pre_stop: LifecycleHandler | None = None


class LifecycleHandler(Value):
    exec: ExecAction | None = None


class LocalObjectReference(Value):
    name: str | None = None


class NetworkPolicyIngressRule(Value):
    from_: Sequence[NetworkPolicyPeer] | None = None
    ports: Sequence[NetworkPolicyPort] | None = None


class NetworkPolicyPeer(Value):
    namespace_selector: LabelSelector | None = None
    pod_selector: LabelSelector | None = None


class NetworkPolicyPort(Value):
    port: IntOrString | None = None
    protocol: str | None = None


class NetworkPolicySpec(Value):
    pod_selector: LabelSelector
    ingress: Sequence[NetworkPolicyIngressRule] | None = None
    policy_types: Sequence[str] | None = None


class NodeAffinity(Value):
    preferred_during_scheduling_ignored_during_execution: (
        Sequence[PreferredSchedulingTerm] | None
    ) = None
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None


class NodeSelector(Value):
    node_selector_terms: Sequence[NodeSelectorTerm]


class NodeSelectorRequirement(Value):
    key: str
    operator: str
    values: Sequence[str] | None = None


class NodeSelectorTerm(Value):
    match_expressions: Sequence[NodeSelectorRequirement] | None = None
    match_fields: Sequence[NodeSelectorRequirement] | None = None


class ObjectFieldSelector(Value):
    field_path: str


class ObjectMeta(Value):
    annotations: Mapping[str, str] | None = None
    labels: Mapping[str, str] | None = None
    name: str | None = None
    namespace: str | None = None


class PodAffinityTerm(Value):
    topology_key: str
    label_selector: LabelSelector | None = None


class PodAntiAffinity(Value):
    required_during_scheduling_ignored_during_execution: Sequence[PodAffinityTerm] | None = None


class PodResourceClaim(Value):
    name: str
    resource_claim_template_name: str | None = None


class PodSecurityContext(Value):
    seccomp_profile: SeccompProfile | None = None


class PodSpec(Value):
    containers: Sequence[Container]
    affinity: Affinity | None = None
    automount_service_account_token: bool | None = None
    dns_policy: str | None = None
    enable_service_links: bool | None = None
    host_ipc: bool | None = None
    hostname: str | None = None
    host_network: bool | None = None
    host_pid: bool | None = None
    image_pull_secrets: Sequence[LocalObjectReference] | None = None
    init_containers: Sequence[Container] | None = None
    node_selector: Mapping[str, str] | None = None
    priority: int | None = None
    priority_class_name: str | None = None
    resource_claims: Sequence[PodResourceClaim] | None = None
    resources: ResourceRequirements | None = None
    restart_policy: str | None = None
    runtime_class_name: str | None = None
    security_context: PodSecurityContext | None = None
    service_account: str | None = None
    service_account_name: str | None = None
    share_process_namespace: bool | None = None
    subdomain: str | None = None
    termination_grace_period_seconds: int | None = None
    tolerations: Sequence[Toleration] | None = None
    volumes: Sequence[Volume] | None = None


class PodTemplateSpec(Value):
    metadata: ObjectMeta | None = None
    spec: PodSpec | None = None


class PolicyRule(Value):
    verbs: Sequence[str]
    api_groups: Sequence[str] | None = None
    resource_names: Sequence[str] | None = None
    resources: Sequence[str] | None = None


class PreferredSchedulingTerm(Value):
    preference: NodeSelectorTerm
    weight: int


class Probe(Value):
    exec: ExecAction | None = None
    failure_threshold: int | None = None
    grpc: GrpcAction | None = None
    http_get: HttpGetAction | None = None
    initial_delay_seconds: int | None = None
    period_seconds: int | None = None
    success_threshold: int | None = None
    termination_grace_period_seconds: int | None = None
    timeout_seconds: int | None = None


class ProjectedVolumeSource(Value):
    sources: Sequence[VolumeProjection] | None = None


class ResourceClaim(Value):
    name: str


class ResourceQuotaSpec(Value):
    hard: Mapping[str, Quantity] | None = None
    scope_selector: ScopeSelector | None = None


class ResourceRequirements(Value):
    claims: Sequence[ResourceClaim] | None = None
    limits: Mapping[str, Quantity] | None = None
    requests: Mapping[str, Quantity] | None = None


class RoleRef(Value):
    api_group: str
    kind: str
    name: str


class RollingUpdateDaemonSet(Value):
    max_unavailable: IntOrString | None = None


class ScopeSelector(Value):
    match_expressions: Sequence[ScopedResourceSelectorRequirement] | None = None


class ScopedResourceSelectorRequirement(Value):
    operator: str
    scope_name: str
    values: Sequence[str] | None = None


class SeLinuxOptions(Value):
    level: str | None = None


class SeccompProfile(Value):
    type: str


class SecurityContext(Value):
    allow_privilege_escalation: bool | None = None
    capabilities: Capabilities | None = None
    privileged: bool | None = None
    read_only_root_filesystem: bool | None = None
    run_as_group: int | None = None
    run_as_non_root: bool | None = None
    run_as_user: int | None = None
    seccomp_profile: SeccompProfile | None = None
    se_linux_options: SeLinuxOptions | None = None


class ServiceAccountTokenProjection(Value):
    path: str
    expiration_seconds: int | None = None


class ServicePort(Value):
    port: int
    name: str | None = None
    protocol: str | None = None
    target_port: IntOrString | None = None


class ServiceSpec(Value):
    cluster_ip: str | None = None
    ports: Sequence[ServicePort] | None = None
    publish_not_ready_addresses: bool | None = None
    selector: Mapping[str, str] | None = None


class Subject(Value):
    kind: str
    name: str
    api_group: str | None = None
    namespace: str | None = None


class Toleration(Value):
    effect: str | None = None
    key: str | None = None
    operator: str | None = None
    toleration_seconds: int | None = None
    value: str | None = None


class Volume(Value):
    name: str
    config_map: ConfigMapVolumeSource | None = None
    empty_dir: EmptyDirVolumeSource | None = None
    host_path: HostPathVolumeSource | None = None
    projected: ProjectedVolumeSource | None = None


class VolumeMount(Value):
    mount_path: str
    name: str
    mount_propagation: str | None = None
    read_only: bool | None = None


class VolumeProjection(Value):
    config_map: ConfigMapProjection | None = None
    downward_api: DownwardApiProjection | None = None
    service_account_token: ServiceAccountTokenProjection | None = None
