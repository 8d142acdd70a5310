"""API access, stated once per component: its RBAC rules as data, rendered into the cluster's
(Cluster)Roles and into the docs' tables (:mod:`gpustack.docsite.access`).

Why data: a rule a component gets is a claim about what its code does, so each carries the reason
(which call needs it). The construct turns the same tuple into the ClusterRole or Role, and
:func:`markdown_table` renders the table the API access page shows; a test keeps the page equal
to the synthesized objects, so neither can drift from the other.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from constructs import Construct

from gpustack.constructs import k8s, kube
from gpustack.constructs.labels import Identity

#: Where the kubelet mounts a pod's API token; client-go's in-cluster config reads it there.
TOKEN_DIR: Final = "/var/run/secrets/kubernetes.io/serviceaccount"
#: The kubelet's lifetime of automounted tokens (it rotates them well before expiry).
TOKEN_SECONDS: Final = 3607


@dataclass(frozen=True)
class Access:
    """One RBAC rule and why the component needs it (``names``: resourceNames, if limited)."""

    api_group: str
    resources: tuple[str, ...]
    verbs: tuple[str, ...]
    why: str
    names: tuple[str, ...] = ()

    def rule(self) -> k8s.PolicyRule:
        return k8s.PolicyRule(
            api_groups=[self.api_group],
            resources=list(self.resources),
            verbs=list(self.verbs),
            resource_names=list(self.names) or None,
        )

    def as_manifest(self) -> dict[str, object]:
        """The rule as it appears in a synthesized manifest."""
        out: dict[str, object] = {
            "apiGroups": [self.api_group],
            "resources": list(self.resources),
            "verbs": list(self.verbs),
        }
        if self.names:
            out["resourceNames"] = list(self.names)
        return out


def grant(
    scope: Construct,
    ident: Identity,
    *,
    name: str,
    namespace: str,
    service_account: str,
    rules: Sequence[Access],
    cluster: bool,
) -> None:
    """A ClusterRole (``cluster``) or Role ``name`` with ``rules``, bound to ``service_account``."""
    labels, annotations = ident.labels(), ident.annotations()
    subject = k8s.Subject(kind="ServiceAccount", name=service_account, namespace=namespace)
    role_namespace = None if cluster else namespace
    meta = kube.object_meta(name, namespace=role_namespace, labels=labels, annotations=annotations)
    policy = [r.rule() for r in rules]
    ref = k8s.RoleRef(
        api_group="rbac.authorization.k8s.io",
        kind="ClusterRole" if cluster else "Role",
        name=name,
    )
    if cluster:
        kube.rbac_rules(scope, f"{name}-cluster-role", "ClusterRole", metadata=meta, rules=policy)
        kube.rbac_binding(
            scope,
            f"{name}-cluster-binding",
            "ClusterRoleBinding",
            metadata=meta,
            role_ref=ref,
            subjects=[subject],
        )
    else:
        kube.rbac_rules(scope, f"{name}-role", "Role", metadata=meta, rules=policy)
        kube.rbac_binding(
            scope, f"{name}-binding", "RoleBinding", metadata=meta, role_ref=ref, subjects=[subject]
        )


def token_volume(name: str = "api-token") -> k8s.Volume:
    """A projected volume with what the kubelet's automount gives (token, cluster CA, namespace),
    for mounting into only the containers that call the API."""
    return k8s.Volume(
        name=name,
        projected=k8s.ProjectedVolumeSource(
            sources=[
                k8s.VolumeProjection(
                    service_account_token=k8s.ServiceAccountTokenProjection(
                        path="token", expiration_seconds=TOKEN_SECONDS
                    )
                ),
                k8s.VolumeProjection(
                    config_map=k8s.ConfigMapProjection(
                        name="kube-root-ca.crt", items=[k8s.KeyToPath(key="ca.crt", path="ca.crt")]
                    )
                ),
                k8s.VolumeProjection(
                    downward_api=k8s.DownwardApiProjection(
                        items=[
                            k8s.DownwardApiVolumeFile(
                                path="namespace",
                                field_ref=k8s.ObjectFieldSelector(field_path="metadata.namespace"),
                            )
                        ]
                    )
                ),
            ]
        ),
    )


def markdown_table(rules: Iterable[Access]) -> str:
    """The API access page's table of ``rules``: API group, resources, verbs, why."""
    lines = ["| API group | resources | verbs | why |", "|---|---|---|---|"]
    for r in rules:
        group = f"`{r.api_group}`" if r.api_group else "core"
        resources = ", ".join(f"`{x}`" for x in r.resources)
        if r.names:
            resources += " (" + ", ".join(f"`{n}`" for n in r.names) + ")"
        verbs = ", ".join(r.verbs)
        lines.append(f"| {group} | {resources} | {verbs} | {r.why} |")
    return "\n".join(lines)
