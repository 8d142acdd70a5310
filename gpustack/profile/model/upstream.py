"""The default image of each NVIDIA component, declared with the upstream release that ships it.

Why one declaration: gpustack's defaults are the images NVIDIA tested together, and the
conformance page (``docs/reference/conformance.md``, its "Default versions" table) says which GPU
Operator release pins each. When the tag and the release were written in different places, a
tag could be bumped while the page went on naming a release that never shipped it. So each
default is one :class:`Pin` (image, tag and the release), the profile model's defaults and the
page are read from it, and :data:`SHIPPED` records what each release ships: :func:`unshipped`
names every pin its release does not ship (``tests/profile/test_upstream.py`` holds it to none).
Bumping a default is therefore two edits that must agree: the pin, and the release that ships
the new tag.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

#: The GPU Operator release gpustack's defaults come from (and its conformance tables cite).
GPU_OPERATOR: Final = "v26.7.0"
#: The Kubernetes minor releases that GPU Operator release supports, oldest first (its
#: platform-support page; ``shared/reference/nvidia-stack-2026.md``: "The GPU Operator v26.7.0
#: supports 1.33-1.36"). The profile's default ``cluster.kubernetesVersion`` is the newest of them,
#: so a new profile starts on a release NVIDIA tested the defaults on.
GPU_OPERATOR_KUBERNETES: Final = ("1.33", "1.34", "1.35", "1.36")

#: What each GPU Operator release ships, image repository -> tag, as its
#: ``deployments/gpu-operator/values.yaml`` pins them (Node Feature Discovery: the chart its
#: chart depends on; the operator image: its own release). Only the images gpustack pins.
SHIPPED: Final[dict[str, dict[str, str]]] = {
    "v26.7.0": {
        "nvcr.io/nvidia/driver": "595.91.07",
        "nvcr.io/nvidia/k8s/container-toolkit": "v1.20.0",
        "nvcr.io/nvidia/k8s-device-plugin": "v0.20.0",
        "nvcr.io/nvidia/cloud-native/k8s-driver-manager": "v0.12.0",
        "nvcr.io/nvidia/cloud-native/k8s-mig-manager": "v0.15.0",
        "registry.k8s.io/nfd/node-feature-discovery": "v0.19.0",
        "nvcr.io/nvidia/k8s/dcgm-exporter": "4.6.0-4.8.3-distroless",
        "nvcr.io/nvidia/dra-driver-nvidia-gpu": "v0.5.0",
        "nvcr.io/nvidia/gpu-operator": "v26.7.0",
    },
    # the last operator image with kubectl (its docker/Dockerfile installs it)
    "v25.10.1": {"nvcr.io/nvidia/gpu-operator": "v25.10.1"},
}


@dataclass(frozen=True)
class Pin:
    """One default image: how the conformance page names it (``row``), its repository and tag,
    and the GPU Operator release that ships that tag. ``shown`` is how the page writes the tag
    (the driver's image tag is ``<version>-<osTag>``)."""

    row: str
    image: str
    tag: str
    upstream: str
    shown: str = "{tag}"

    @property
    def ref(self) -> tuple[str, str]:
        """(repository, tag), as the profile model's defaults take them."""
        return self.image, self.tag

    def reference(self) -> str:
        """The full image reference, as the conformance page writes it."""
        return f"{self.image}:{self.shown.format(tag=self.tag)}"


DRIVER: Final = Pin(
    "driver", "nvcr.io/nvidia/driver", "595.91.07", GPU_OPERATOR, shown="{tag}-<osTag>"
)
TOOLKIT: Final = Pin(
    "container toolkit", "nvcr.io/nvidia/k8s/container-toolkit", "v1.20.0", GPU_OPERATOR
)
DEVICE_PLUGIN: Final = Pin(
    "device plugin (`devicePlugin.implementation: nvidia`)",
    "nvcr.io/nvidia/k8s-device-plugin",
    "v0.20.0",
    GPU_OPERATOR,
)
#: GPU feature discovery ships in the device plugin's image.
GPU_FEATURE_DISCOVERY: Final = replace(DEVICE_PLUGIN, row="GPU feature discovery")
DRIVER_MANAGER: Final = Pin(
    "driver manager", "nvcr.io/nvidia/cloud-native/k8s-driver-manager", "v0.12.0", GPU_OPERATOR
)
MIG_MANAGER: Final = Pin(
    "MIG manager", "nvcr.io/nvidia/cloud-native/k8s-mig-manager", "v0.15.0", GPU_OPERATOR
)
NODE_FEATURE_DISCOVERY: Final = Pin(
    "Node Feature Discovery", "registry.k8s.io/nfd/node-feature-discovery", "v0.19.0", GPU_OPERATOR
)
DCGM_EXPORTER: Final = Pin(
    "DCGM exporter", "nvcr.io/nvidia/k8s/dcgm-exporter", "4.6.0-4.8.3-distroless", GPU_OPERATOR
)
DRA_DRIVER: Final = Pin(
    "DRA driver (`dra.enabled: true`)",
    "nvcr.io/nvidia/dra-driver-nvidia-gpu",
    "v0.5.0",
    GPU_OPERATOR,
)
#: Used only for the ``kubectl`` it ships: from v26.x the operator image has none
#: (``docker/Dockerfile`` at v26.7.0 copies only the operator's own binaries).
KUBECTL: Final = Pin(
    "kubectl (`cluster.deployLabels: optional`)",
    "nvcr.io/nvidia/gpu-operator",
    "v25.10.1",
    "v25.10.1",
)

#: Every default, in the conformance page's order.
PINS: Final = (
    DRIVER,
    TOOLKIT,
    DEVICE_PLUGIN,
    GPU_FEATURE_DISCOVERY,
    DRIVER_MANAGER,
    MIG_MANAGER,
    NODE_FEATURE_DISCOVERY,
    DCGM_EXPORTER,
    DRA_DRIVER,
    KUBECTL,
)


def unshipped(
    pins: tuple[Pin, ...] = PINS, shipped: dict[str, dict[str, str]] = SHIPPED
) -> list[str]:
    """One message per pin whose upstream release does not ship its tag, naming the row."""
    found = []
    for pin in pins:
        release = shipped.get(pin.upstream)
        if release is None:
            found.append(
                f"{pin.row}: GPU Operator {pin.upstream} is not in SHIPPED"
                " (record what that release ships)"
            )
        elif release.get(pin.image) != pin.tag:
            found.append(
                f"{pin.row}: GPU Operator {pin.upstream} ships {pin.image}"
                f":{release.get(pin.image, '(nothing)')}, not {pin.tag}"
                " (name the release that ships the new tag, and record it in SHIPPED)"
            )
    return found
