"""Small builders from profile values to cdk8s ``k8s`` structs.

They keep the component modules about *what* each pod needs, not about jsii struct plumbing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

import cdk8s
from cdk8s_plus_33 import k8s
from constructs import Construct

from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.profile.model import EnvVar, Resources

# the readiness files' host folder, declared in the profile layer
from gpustack.profile.readiness import VALIDATIONS_DIR as VALIDATIONS_DIR

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
        requests={k: k8s.Quantity.from_string(v) for k, v in res.requests} or None,
        limits={k: k8s.Quantity.from_string(v) for k, v in res.limits} or None,
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


def data_checksum(data: Mapping[str, str]) -> str:
    """sha256 of a ConfigMap's data, for a pod-template annotation that rolls pods on change."""
    return hashlib.sha256(json.dumps(dict(data), sort_keys=True).encode()).hexdigest()


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
    """An object of a kind cdk8s-plus has no class for (a custom resource, or an API newer than
    its Kubernetes release: ``resource.k8s.io/v1``): metadata as every gpustack object has it,
    ``body``'s top-level fields (``spec``...) added as written."""
    obj = cdk8s.ApiObject(
        scope,
        id,
        api_version=api_version,
        kind=kind,
        metadata=cdk8s.ApiObjectMetadata(
            name=name,
            namespace=namespace,
            labels=dict(labels),
            annotations=dict(annotations) or None,
        ),
    )
    for field, value in body.items():
        obj.add_json_patch(cdk8s.JsonPatch.add(f"/{field}", value))
    return obj
