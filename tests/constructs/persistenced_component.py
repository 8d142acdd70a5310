"""The ``persistenced`` exercise of issue 18, as a component nothing in gpustack knows: a GPU node
daemon with its own profile section (an ``enabled`` switch and an image), one mount and one
environment variable. ``test_component_steps`` adds the section to a profile subclass and the row
to a copy of the registry, forgetting one step at a time."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from constructs import Construct

from gpustack.constructs import k8s, kube
from gpustack.constructs.labels import Identity
from gpustack.constructs.node_daemonset import NodeApp, NodeDaemonSet
from gpustack.constructs.placement import ContainerSettings, Placement
from gpustack.profile.model import EnvVar, Profile, Resources
from gpustack.profile.model.common import image_ref

COMPONENT = "persistenced"
NAME = "nvidia-persistenced"


@dataclass(frozen=True)
class PersistencedSection:
    """The ``persistenced`` section a real component would add to the profile model."""

    enabled: bool = False
    image: str = "nvcr.io/nvidia/cuda"
    version: str = "12.9.1-base-ubuntu24.04"
    digest: str | None = None
    image_pull_policy: str = "IfNotPresent"
    env: tuple[EnvVar, ...] = ()
    resources: Resources = field(default_factory=Resources)

    def image_ref(self) -> str:
        return image_ref(self.image, self.version, self.digest)


@dataclass(frozen=True)
class PersistencedProfile(Profile):
    """The profile model with the new section."""

    persistenced: PersistencedSection = field(default_factory=PersistencedSection)


def with_persistenced(profile: Profile) -> PersistencedProfile:
    """``profile`` with ``persistenced.enabled: true``."""
    values = {f.name: getattr(profile, f.name) for f in dataclasses.fields(profile)}
    return PersistencedProfile(**values, persistenced=PersistencedSection(enabled=True))


def section(profile: Profile) -> PersistencedSection:
    found = getattr(profile, COMPONENT)
    assert isinstance(found, PersistencedSection)
    return found


@dataclass(frozen=True)
class PersistencedProps:
    container: ContainerSettings
    placement: Placement

    @classmethod
    def from_profile(cls, profile: Profile) -> PersistencedProps:
        return cls(
            ContainerSettings.from_section(section(profile)), Placement.from_profile(profile)
        )


class Persistenced(Construct):
    def __init__(self, scope: Construct, id: str, props: PersistencedProps) -> None:
        super().__init__(scope, id)
        ident = Identity(NAME, COMPONENT, "0.0.1", props.placement.labels)
        app = NodeApp(ident, props.placement)
        ds = NodeDaemonSet(self, app, service_account=app.service_account(self))
        run = kube.host_path("run-nvidia", "/run/nvidia", "DirectoryOrCreate")
        container = kube.main_container(
            NAME,
            props.container,
            command=["nvidia-persistenced", "--foreground"],
            env=kube.env_list([("PERSISTENCE_MODE", "on")], props.container.env),
            security_context=k8s.SecurityContext(privileged=True),
            volume_mounts=[ds.mount(run, "/run/nvidia")],
        )
        ds.add("daemonset", NAME, containers=[container])
