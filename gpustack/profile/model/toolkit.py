"""``toolkit``: the NVIDIA container toolkit, which registers the nvidia runtime handler."""

from __future__ import annotations

from dataclasses import dataclass

from gpustack.fields import key
from gpustack.profile.model import upstream
from gpustack.profile.model.common import (
    ABS_PATH,
    DNS_SUBDOMAIN,
    IMAGE,
    EnvVar,
    PullPolicy,
    Resources,
    digest,
    enabled,
    env,
    image_ref,
    pull_policy,
    resources,
)


@dataclass(frozen=True)
class Cdi:
    """Container Device Interface: the toolkit writes CDI specs and the runtime injects devices."""

    enabled: bool = enabled("Generate CDI specs and use CDI device injection.")


@dataclass(frozen=True)
class Toolkit:
    """NVIDIA container toolkit: configures the runtime and registers the NVIDIA runtime handler."""

    enabled: bool = enabled("Deploy the toolkit DaemonSet; false: configured on the host.")
    version: str = key(
        "Toolkit version",
        "Toolkit image tag.",
        default=upstream.TOOLKIT.tag,
        pattern=r"^v\d+\.\d+\.\d+(-[A-Za-z0-9.]+)?$",
        examples=["v1.20.0"],
    )
    image: str = key(
        "Toolkit image",
        "Toolkit image repository, without a tag.",
        default=upstream.TOOLKIT.image,
        pattern=IMAGE,
    )
    digest: str | None = digest("toolkit")
    image_pull_policy: PullPolicy = pull_policy()
    install_dir: str = key(
        "Install directory",
        "Host path for the toolkit binaries.",
        default="/usr/local/nvidia",
        pattern=ABS_PATH,
    )
    runtime_class: str = key(
        "RuntimeClass",
        "Name of the RuntimeClass (and runtime handler) for GPU pods.",
        default="nvidia",
        pattern=DNS_SUBDOMAIN,
    )
    set_as_default: bool = key(
        "Default runtime",
        "Make the nvidia handler the runtime's default (every pod gets it).",
        default=False,
    )
    cdi: Cdi = key(
        "CDI",
        "Container Device Interface: the toolkit writes CDI specs for the runtime.",
        factory=Cdi,
    )
    env: tuple[EnvVar, ...] = env()
    resources: Resources = resources()

    def image_ref(self) -> str:
        return image_ref(self.image, self.version, self.digest)
