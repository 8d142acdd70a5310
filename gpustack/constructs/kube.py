"""Small builders from profile values to API values (:mod:`gpustack.constructs.k8s`), and the
one way an object is made: a cdk8s ``ApiObject`` per Kubernetes object.

They keep the component modules about *what* each pod needs, not about JSON plumbing.

An object costs three jsii calls whatever its size (create the ``ApiObject`` with its metadata,
make one JSON patch per top-level field, add the patches), where cdk8s-plus' typed classes were
a tree of structs type-checked in Python and walked again in Node: rendering
``profiles/h100-prod-east.yaml`` in process went from about 0.45 s to about 0.25 s (issue #23).
Each patch carries its field as JSON text, which cdk8s applies untouched like any patch value
(:mod:`gpustack.constructs.body_text`; a warm render from 0.10 s to 0.075 s, issue #37). cdk8s
still names, orders and renders every object (``Chart.to_json``).

cdk8s is imported where an object is made, so the value builders (env, mounts, probes...) load
without starting Node: a module that only assembles containers stays a plain helper.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, TypeVar

from gpustack.constructs import k8s
from gpustack.constructs.body_text import encode
from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.profile.model import EnvVar, Resources, StartupProbe

# the readiness files' host folder, declared in the profile layer
from gpustack.profile.readiness import VALIDATIONS_DIR as VALIDATIONS_DIR

if TYPE_CHECKING:  # imported where an object is made: the value builders above start no Node
    import cdk8s
    from constructs import Construct

#: Where container runtimes read CDI specs (the toolkit's and the device plugin's are written here).
CDI_ROOT = "/var/run/cdi"


def env_list(
    base: Iterable[tuple[str, str]],
    extra: Iterable[EnvVar] = (),
    field_refs: Mapping[str, str] | None = None,
) -> list[k8s.EnvVar]:
    """Container env: ``field_refs`` (downward API) first, then ``base``, then user ``extra``.

    A user variable may not replace one of ours: validation refuses it (rule
    ``env-not-managed``, from :mod:`gpustack.profile.managed_env`), and reaching here with one
    is a bug, raised rather than rendered.
    """
    refs = dict(field_refs or {})
    values: dict[str, str | None] = {name: None for name in refs}
    for name, value in base:
        values[name] = value
    for var in extra:
        if var.name in values:
            raise ValueError(f"env {var.name} is set by gpustack; see gpustack.profile.managed_env")
        values[var.name] = var.value
    out: list[k8s.EnvVar] = []
    for name, resolved in values.items():
        if resolved is None:
            ref = k8s.ObjectFieldSelector(field_path=refs[name])
            out.append(k8s.EnvVar(name=name, value_from=k8s.EnvVarSource(field_ref=ref)))
        else:
            out.append(k8s.EnvVar(name=name, value=resolved))
    return out


def resources(res: Resources) -> k8s.ResourceRequirements | None:
    """Requests/limits as quantities; ``None`` when the profile sets neither."""
    if not res.requests and not res.limits:
        return None
    return k8s.ResourceRequirements(
        requests={k: v for k, v in res.requests} or None,
        limits={k: v for k, v in res.limits} or None,
    )


def tolerations(placement: Placement) -> list[k8s.Toleration] | None:
    out = [
        k8s.Toleration(
            key=t.key,
            operator=t.operator,
            value=t.value,
            effect=t.effect,
            toleration_seconds=t.toleration_seconds,
        )
        for t in placement.tolerations
    ]
    return out or None


def pull_secrets(placement: Placement) -> list[k8s.LocalObjectReference] | None:
    return [k8s.LocalObjectReference(name=s) for s in placement.image_pull_secrets] or None


def host_path(name: str, path: str, kind: str | None = None) -> k8s.Volume:
    """A hostPath volume; ``kind`` is the hostPath type (``Directory``, ``DirectoryOrCreate``)."""
    return k8s.Volume(name=name, host_path=k8s.HostPathVolumeSource(path=path, type=kind))


def config_map_volume(name: str, config_map: str, mode: int | None = None) -> k8s.Volume:
    """A ConfigMap volume; ``mode`` is the file mode (scripts get 0555)."""
    source = k8s.ConfigMapVolumeSource(name=config_map, default_mode=mode)
    return k8s.Volume(name=name, config_map=source)


def mount(
    name: str, path: str, *, read_only: bool | None = None, propagation: str | None = None
) -> k8s.VolumeMount:
    return k8s.VolumeMount(
        name=name, mount_path=path, read_only=read_only, mount_propagation=propagation
    )


def exec_action(*command: str) -> k8s.ExecAction:
    return k8s.ExecAction(command=list(command))


def startup_probe(action: k8s.ExecAction, budget: StartupProbe) -> k8s.Probe:
    """A startup probe with the profile's budget (long enough to build the kernel module)."""
    return k8s.Probe(
        exec=action,
        initial_delay_seconds=budget.initial_delay_seconds,
        period_seconds=budget.period_seconds,
        timeout_seconds=budget.timeout_seconds,
        failure_threshold=budget.failure_threshold,
        success_threshold=1,
    )


def main_container(
    name: str,
    settings: ContainerSettings,
    *,
    env: list[k8s.EnvVar],
    **kwargs: Any,
) -> k8s.Container:
    """A component's main container: image, pull policy and resources from ``settings``."""
    return k8s.Container(
        name=name,
        image=settings.image,
        image_pull_policy=settings.image_pull_policy,
        env=env or None,
        resources=resources(settings.resources),
        **kwargs,
    )


def pod_security_context() -> k8s.PodSecurityContext:
    """Every gpustack pod: the runtime's default seccomp profile. Privileged containers (driver,
    toolkit) run unconfined whatever the pod says; the rest get the syscall filter for free."""
    return k8s.PodSecurityContext(seccomp_profile=k8s.SeccompProfile(type="RuntimeDefault"))


def unprivileged(*, read_only_root: bool = True) -> k8s.SecurityContext:
    """A container that needs no privileges: no capabilities, no escalation and, unless it
    writes to its own filesystem, a read-only root."""
    return k8s.SecurityContext(
        allow_privilege_escalation=False,
        capabilities=k8s.Capabilities(drop=["ALL"]),
        read_only_root_filesystem=True if read_only_root else None,
    )


def pod_placement(placement: Placement, *, priority: bool = True) -> dict[str, Any]:
    """PodSpec keyword arguments for node selection, tolerations, priority and pull secrets."""
    return {
        "node_selector": dict(placement.node_selector) or None,
        "tolerations": tolerations(placement),
        "priority_class_name": placement.priority_class_name if priority else None,
        "image_pull_secrets": pull_secrets(placement),
    }


def object_meta(
    name: str,
    *,
    namespace: str | None,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
) -> k8s.ObjectMeta:
    return k8s.ObjectMeta(
        name=name,
        namespace=namespace,
        labels=dict(labels),
        annotations=dict(annotations) or None,
    )


def crd_spec(
    group: str,
    version: str,
    kind: str,
    plural: str,
    scope: str,
    schema: Mapping[str, Any],
    *,
    status: bool = False,
    short: Sequence[str] = (),
) -> dict[str, Any]:
    """The spec of a CustomResourceDefinition with one served and stored ``version`` (the CRDs
    gpustack installs have one): ``status`` adds the status subresource, ``short`` its short
    names."""
    names: dict[str, Any] = {
        "kind": kind,
        "listKind": f"{kind}List",
        "plural": plural,
        "singular": kind.lower(),
    }
    if short:
        names["shortNames"] = list(short)
    served: dict[str, Any] = {
        "name": version,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": schema},
    }
    if status:
        served["subresources"] = {"status": {}}
    return {"group": group, "names": names, "scope": scope, "versions": [served]}


def data_checksum(data: Mapping[str, str]) -> str:
    """sha256 of a ConfigMap's data, for a pod-template annotation that rolls pods on change."""
    return hashlib.sha256(json.dumps(dict(data), sort_keys=True).encode()).hexdigest()


def _make(
    scope: Construct,
    id: str,
    api_version: str,
    kind: str,
    metadata: cdk8s.ApiObjectMetadata,
    body: Mapping[str, Any],
) -> cdk8s.ApiObject:
    """One ``ApiObject``; ``body``'s top-level fields (``spec``, ``data``...) added as given, in
    one call, each as its JSON text (cdk8s puts ``apiVersion``, ``kind`` and ``metadata`` first,
    then the fields in their order; :func:`gpustack.constructs.body_text.decoded` turns them
    back into values)."""
    import cdk8s

    obj = cdk8s.ApiObject(scope, id, api_version=api_version, kind=kind, metadata=metadata)
    patches = [cdk8s.JsonPatch.add(f"/{field}", encode(value)) for field, value in body.items()]
    if patches:
        obj.add_json_patch(*patches)
    return obj


def api_object(
    scope: Construct,
    id: str,
    *,
    api_version: str,
    kind: str,
    name: str,
    namespace: str | None,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    body: Mapping[str, Any],
) -> cdk8s.ApiObject:
    """An object of a kind this module has no builder for (a custom resource, or an API newer
    than the ones below: ``resource.k8s.io/v1``): metadata as every gpustack object has it,
    ``body``'s top-level fields (``spec``...) added exactly as written (keys in their order)."""
    import cdk8s

    metadata = cdk8s.ApiObjectMetadata(
        name=name,
        namespace=namespace,
        labels=dict(labels),
        annotations=dict(annotations) or None,
    )
    return _make(scope, id, api_version, kind, metadata, body)


def kube_object(
    scope: Construct,
    id: str,
    api_version: str,
    kind: str,
    metadata: k8s.ObjectMeta,
    **fields: object,
) -> cdk8s.ApiObject:
    """An object of Kubernetes' own API from typed values: each field in its JSON form
    (:func:`gpustack.constructs.k8s.to_json`: API names, sorted keys), ``None`` fields left out."""
    import cdk8s

    meta = cdk8s.ApiObjectMetadata(
        name=metadata.name,
        namespace=metadata.namespace,
        labels=None if metadata.labels is None else dict(metadata.labels),
        annotations=None if metadata.annotations is None else dict(metadata.annotations),
    )
    body = {k8s.json_name(f): k8s.to_json(v) for f, v in fields.items() if v is not None}
    return _make(scope, id, api_version, kind, meta, body)


# One builder per kind gpustack makes, with the kind's API version and its typed fields.

_Spec = TypeVar("_Spec")


def namespace(scope: Construct, id: str, *, metadata: k8s.ObjectMeta) -> cdk8s.ApiObject:
    return kube_object(scope, id, "v1", "Namespace", metadata)


def config_map(
    scope: Construct, id: str, *, metadata: k8s.ObjectMeta, data: Mapping[str, str]
) -> cdk8s.ApiObject:
    return kube_object(scope, id, "v1", "ConfigMap", metadata, data=data)


def service_account(
    scope: Construct,
    id: str,
    *,
    metadata: k8s.ObjectMeta,
    automount_service_account_token: bool | None = None,
) -> cdk8s.ApiObject:
    return kube_object(
        scope,
        id,
        "v1",
        "ServiceAccount",
        metadata,
        automount_service_account_token=automount_service_account_token,
    )


class _SpecKind(Generic[_Spec]):
    """The builder of a kind whose one field is its ``spec`` (of type ``_Spec``):
    ``service(scope, id, metadata=..., spec=k8s.ServiceSpec(...))``."""

    def __init__(self, api_version: str, kind: str) -> None:
        self.api_version, self.kind = api_version, kind

    def __call__(
        self, scope: Construct, id: str, *, metadata: k8s.ObjectMeta, spec: _Spec
    ) -> cdk8s.ApiObject:
        return kube_object(scope, id, self.api_version, self.kind, metadata, spec=spec)


service: Final = _SpecKind[k8s.ServiceSpec]("v1", "Service")
resource_quota: Final = _SpecKind[k8s.ResourceQuotaSpec]("v1", "ResourceQuota")
daemon_set: Final = _SpecKind[k8s.DaemonSetSpec]("apps/v1", "DaemonSet")
deployment: Final = _SpecKind[k8s.DeploymentSpec]("apps/v1", "Deployment")
job: Final = _SpecKind[k8s.JobSpec]("batch/v1", "Job")
network_policy: Final = _SpecKind[k8s.NetworkPolicySpec]("networking.k8s.io/v1", "NetworkPolicy")


def runtime_class(
    scope: Construct, id: str, *, metadata: k8s.ObjectMeta, handler: str
) -> cdk8s.ApiObject:
    return kube_object(scope, id, "node.k8s.io/v1", "RuntimeClass", metadata, handler=handler)


_RBAC = "rbac.authorization.k8s.io/v1"


def rbac_rules(
    scope: Construct,
    id: str,
    kind: Literal["Role", "ClusterRole"],
    *,
    metadata: k8s.ObjectMeta,
    rules: Sequence[k8s.PolicyRule],
) -> cdk8s.ApiObject:
    return kube_object(scope, id, _RBAC, kind, metadata, rules=rules)


def rbac_binding(
    scope: Construct,
    id: str,
    kind: Literal["RoleBinding", "ClusterRoleBinding"],
    *,
    metadata: k8s.ObjectMeta,
    role_ref: k8s.RoleRef,
    subjects: Sequence[k8s.Subject],
) -> cdk8s.ApiObject:
    return kube_object(scope, id, _RBAC, kind, metadata, role_ref=role_ref, subjects=subjects)
