"""A stand-in for a future component, used by ``test_registry``: a construct module as small as
one can be (props built from the profile, one object), and nothing else in gpustack knows it."""

from __future__ import annotations

from dataclasses import dataclass

from constructs import Construct

from gpustack.constructs import kube
from gpustack.constructs.labels import Identity
from gpustack.profile.model import Profile

COMPONENT = "gpu-dummy"
NAME = "gpu-dummy"


@dataclass(frozen=True)
class DummyProps:
    namespace: str
    cluster: str

    @classmethod
    def from_profile(cls, profile: Profile) -> DummyProps:
        return cls(namespace=profile.cluster.namespace, cluster=profile.metadata.name)


class Dummy(Construct):
    def __init__(self, scope: Construct, id: str, props: DummyProps) -> None:
        super().__init__(scope, id)
        ident = Identity(NAME, COMPONENT, "0.0.1")
        kube.config_map(
            self,
            "config",
            metadata=kube.object_meta(
                NAME,
                namespace=props.namespace,
                labels=ident.labels(),
                annotations=ident.annotations(),
            ),
            data={"cluster": props.cluster},
        )
