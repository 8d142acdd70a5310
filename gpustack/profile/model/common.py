"""Building blocks every profile section uses: patterns, container settings and tolerations.

The patterns are the profile's JSON Schema constraints; they are declared here, next to the
fields that use them, so the schema, the decoding and the documentation all read one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from gpustack import fields
from gpustack.fields import SORTED_MAP, Spec, documented, item, key

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
DRIVER_VERSION = r"^\d{3}\.\d+(\.\d+)?$"
DRIVER_VERSION_HINT = (
    "a full driver version, quoted: branch.minor or branch.minor.patch as NVIDIA tags its"
    " images (a bare branch like 570 names no image)"
)
CUDA_VERSION = r"^\d{2}\.\d$"
#: An image repository without tag or digest.
IMAGE = r"^[a-z0-9]+([._-][a-z0-9]+)*(:\d+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$"
#: A full image reference: repository, optional tag, optional digest.
#: An image tag.
IMAGE_TAG = r"^[\w][\w.-]{0,127}$"
#: A full image reference: repository, optional tag, optional digest.
IMAGE_REF = (
    r"^[a-z0-9]+([._-][a-z0-9]+)*(:\d+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*"
    r"(:[\w][\w.-]{0,127})?(@sha256:[a-f0-9]{64})?$"
)
#: An image digest (``sha256:<64 hex>``): pins an image to exact content.
DIGEST = r"^sha256:[a-f0-9]{64}$"
ABS_PATH = r"^/"
#: A Kubernetes qualified name (label and annotation keys, toleration keys): an optional DNS
#: subdomain prefix of at most 253 characters (the lookahead) and ``/``, then a name of at most
#: 63 characters. Kubernetes' own rule (apimachinery ``IsQualifiedName``).
LABEL_KEY = (
    r"^((?=[^/]{1,253}/)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
LABEL_KEY_HINT = (
    "a label key: an optional DNS subdomain and '/' (nvidia.com/), then at most 63 letters,"
    " digits, '-', '_' or '.' that start and end with a letter or digit"
)
#: A label value (apimachinery ``IsValidLabelValue``): empty, or at most 63 characters.
LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$"
LABEL_VALUE_HINT = (
    "a label value: at most 63 letters, digits, '-', '_' or '.' that start and end with a"
    " letter or digit, or empty"
)
QUANTITY = r"^[+]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[numkMGTPE]i?|Ki|Mi|Gi|Ti|Pi|Ei)?$"

PullPolicy = Literal["Always", "IfNotPresent", "Never"]

#: A Kubernetes label value, checked as the API server checks it.
LabelValue = Annotated[str, item(pattern=LABEL_VALUE, hint=LABEL_VALUE_HINT)]
#: Kubernetes labels (metadata labels, node selectors): label keys to label values, frozen as
#: sorted pairs; both sides are checked as the API server checks them, so a label that passes
#: validation is never refused at sync time.
Labels = Annotated[
    tuple[tuple[str, LabelValue], ...],
    SORTED_MAP,
    item(keys=Spec(pattern=LABEL_KEY, hint=LABEL_KEY_HINT, examples=("nvidia.com/gpu.present",))),
]

Quantity = Annotated[
    str,
    item(
        ref="quantity",
        title="Quantity",
        description="A Kubernetes resource quantity, written as a string.",
        pattern=QUANTITY,
        examples=["500m", "2Gi"],
    ),
]


def enabled(what: str, default: bool = True) -> Any:
    """The ``enabled`` switch of a section."""
    return key("Enabled", what, default=default)


def pull_policy() -> Any:
    return key("Image pull policy", "When the kubelet pulls the image.", default="IfNotPresent")


def env() -> Any:
    return key(
        "Extra environment",
        "Environment variables added to the component's main container, in order.",
        factory=tuple,
    )


def resources() -> Any:
    return key(
        "Resources",
        "CPU and memory requests and limits of the main container; empty sets none.",
        factory=Resources,
    )


@documented("Environment variable", "One environment variable for a container.", ref="envVar")
@dataclass(frozen=True)
class EnvVar:
    """One extra environment variable for a component's main container."""

    name: str = key(
        "Name",
        "Variable name.",
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        examples=["NVIDIA_DRIVER_CAPABILITIES"],
    )
    value: str = key("Value", "Variable value.", default="")


QuantityMap = Annotated[tuple[tuple[str, Quantity], ...], SORTED_MAP]


@dataclass(frozen=True)
class Resources:
    """Container requests and limits as Kubernetes quantities; empty means none set."""

    requests: QuantityMap = key(
        "Requests",
        "Resource name to Kubernetes quantity.",
        factory=tuple,
        examples=[{"cpu": "100m", "memory": "128Mi"}],
    )
    limits: QuantityMap = key(
        "Limits",
        "Resource name to Kubernetes quantity.",
        factory=tuple,
        examples=[{"memory": "512Mi"}],
    )


@documented("Toleration", "A Kubernetes toleration, as in a pod spec.", ref="toleration")
@dataclass(frozen=True)
class Toleration:
    """A Kubernetes toleration, as written in a pod spec (``fields.key``: the field ``key``
    would shadow the function in the class body)."""

    key: str | None = fields.key(
        "Key",
        "Taint key; empty with Exists matches every taint.",
        default=None,
        pattern=r"^$|" + LABEL_KEY,
        hint=LABEL_KEY_HINT,
        examples=["nvidia.com/gpu"],
    )
    operator: Literal["Exists", "Equal"] = fields.key(
        "Operator", "Exists ignores the value; Equal compares it.", default="Exists"
    )
    value: str | None = fields.key(
        "Value",
        "Taint value for the Equal operator (a label value; Exists takes none).",
        default=None,
        pattern=LABEL_VALUE,
        hint=LABEL_VALUE_HINT,
    )
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = fields.key(
        "Effect", "Taint effect to tolerate; unset tolerates all effects.", default=None
    )
    toleration_seconds: int | None = fields.key(
        "Toleration seconds",
        "How long a NoExecute taint is tolerated before eviction (needs effect NoExecute).",
        default=None,
        minimum=0,
    )


@documented("Taint", "A Kubernetes node taint, as in a Node's spec.taints.", ref="taint")
@dataclass(frozen=True)
class Taint:
    """A taint the GPU nodes carry (``fields.key``: the field ``key`` would shadow the function
    in the class body)."""

    key: str = fields.key(
        "Key",
        "Taint key.",
        pattern=LABEL_KEY,
        hint=LABEL_KEY_HINT,
        examples=["nvidia.com/gpu"],
    )
    value: str | None = fields.key(
        "Value",
        "Taint value (a label value); unset for a taint without one.",
        default=None,
        pattern=LABEL_VALUE,
        hint=LABEL_VALUE_HINT,
        examples=["present"],
    )
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] = fields.key(
        "Effect", "What the taint does to pods that do not tolerate it.", default="NoSchedule"
    )

    def tolerated_by(self, key: object, operator: object, value: object, effect: object) -> bool:
        """Whether a toleration with these fields matches this taint, by Kubernetes' rules
        (``v1.Toleration.ToleratesTaint``): an empty key with ``Exists`` matches every taint,
        an empty effect every effect, ``Exists`` every value; ``Equal`` (the default operator)
        compares values. Plain objects, so lint can pass the fields of an unchecked manifest."""
        if key in (None, "") and operator == "Exists":
            pass
        elif key != self.key:
            return False
        if effect not in (None, "") and effect != self.effect:
            return False
        if operator in (None, "", "Equal"):
            return (value or "") == (self.value or "")
        return operator == "Exists"


def image_ref(image: str, tag: str, pinned: str | None) -> str:
    """``<image>:<tag>``, with ``@<digest>`` when the profile pins one."""
    return f"{image}:{tag}@{pinned}" if pinned else f"{image}:{tag}"


def digest(what: str) -> Any:
    """The ``digest`` field of an image: pinned content, kept next to the tag."""
    return key(
        "Image digest",
        f"Pin the {what} image by digest (the reference becomes <image>:<tag>@<digest>);"
        " cluster.requireImageDigests makes it required.",
        default=None,
        pattern=DIGEST,
        hint="an image digest: sha256: and 64 lowercase hex digits",
        examples=["sha256:" + "0" * 64],
    )


def image_field(default: str) -> Any:
    """A section's ``image`` key: the repository, without a tag (``default``: NVIDIA's)."""
    return key("Image", "Image repository, without a tag.", default=default, pattern=IMAGE)


def version_field(default: str) -> Any:
    """A section's ``version`` key: the image tag (``default``: the pinned release)."""
    return key("Version", "Image tag.", default=default, pattern=IMAGE_TAG, examples=[default])
