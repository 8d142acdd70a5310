"""Objects every other component depends on: the Namespace and the RuntimeClasses.

The Namespace is labelled for the ``privileged`` Pod Security level: the driver and toolkit pods
are privileged host daemons, and the ``baseline``/``restricted`` levels would reject them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from cdk8s_plus_33 import k8s
from constructs import Construct

from gpustack.constructs.kube import object_meta
from gpustack.constructs.labels import Identity
from gpustack.constructs.runtime import runtime_classes
from gpustack.profile.model import Profile

#: Namespaces Kubernetes owns: gpustack deploys into them but never declares (and so never prunes)
#: them.
SYSTEM_NAMESPACES: Final = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})

_POD_SECURITY: Final = {
    f"pod-security.kubernetes.io/{mode}": "privileged" for mode in ("enforce", "audit", "warn")
}


@dataclass(frozen=True)
class CommonProps:
    """Properties for :class:`Common`.

    - ``namespace``: the stack's namespace. Default ``gpustack-system``. A Kubernetes-owned
      namespace (``kube-system``...) is used but not declared.
    - ``labels``: the profile's ``metadata.labels``, on every object. Default none.
    - ``runtime_classes``: RuntimeClass names, each with the handler of the same name. Default
      ``("nvidia", "nvidia-cdi", "nvidia-legacy")`` (toolkit with CDI); see
      :func:`gpustack.constructs.runtime.runtime_classes`.
    - ``version``: the ``app.kubernetes.io/version`` label: the toolkit version, since the runtime
      handlers these objects name are the toolkit's. Default ``v1.18.1``.
    """

    namespace: str = "gpustack-system"
    labels: tuple[tuple[str, str], ...] = ()
    runtime_classes: tuple[str, ...] = ("nvidia", "nvidia-cdi", "nvidia-legacy")
    version: str = "v1.18.1"

    @classmethod
    def from_profile(cls, profile: Profile) -> CommonProps:
        return cls(
            namespace=profile.cluster.namespace,
            labels=profile.metadata.labels,
            runtime_classes=runtime_classes(profile),
            version=profile.toolkit.version,
        )


class Common(Construct):
    """The Namespace (privileged Pod Security) and the GPU RuntimeClasses.

    No RBAC: nothing here runs.
    """

    def __init__(self, scope: Construct, id: str, props: CommonProps) -> None:
        super().__init__(scope, id)
        self.props = props
        ident = Identity("gpustack", "common", props.version, props.labels)
        if props.namespace not in SYSTEM_NAMESPACES:
            labels = {**ident.labels(), **_POD_SECURITY}
            k8s.KubeNamespace(
                self,
                "namespace",
                metadata=object_meta(
                    props.namespace,
                    namespace=None,
                    labels=labels,
                    annotations=ident.annotations(),
                ),
            )
        for name in props.runtime_classes:
            k8s.KubeRuntimeClass(
                self,
                f"runtime-class-{name}",
                handler=name,
                metadata=object_meta(
                    name, namespace=None, labels=ident.labels(), annotations=ident.annotations()
                ),
            )
