"""``device-attribute-known``: a CEL selector reads only device attributes and capacities that
NVIDIA's driver publishes for the devices of the class, and compares them with values of their
kind.

A selector on ``device.attributes['gpu.nvidia.com'].productname`` (or on ``profile`` in a claim
of whole GPUs, which have none) is a CEL runtime error on every device, and
``productName == 1`` or ``driverVersion == '580.95.5'`` (a version, not a string) never holds:
the claim is never allocated. The device type is the class's (NVIDIA's chart, or a DeviceClass
of the linted manifests whose selectors name the driver); the attributes, kinds and capacities
are NVIDIA's (:mod:`gpustack.dra_upstream`). Selectors are read by :mod:`gpustack.kube.cel`; one
it cannot read is left alone. DeviceClasses of the linted manifests are checked the same way.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.claims import (
    DEVICE_CLASS,
    REQUESTS_AT,
    choices,
    class_kind,
    kind_of,
    published,
    selectors,
)
from gpustack.kube.manifests import Manifest
from gpustack.lint.context import LintContext
from gpustack.lint.misreads import misreads
from gpustack.profile.finding import Finding


def check(obj: Manifest, ctx: LintContext) -> Iterator[Finding]:
    if obj.kind == DEVICE_CLASS:
        spec = obj.data.get("spec")
        sels = selectors(spec, ("spec",))
        kind = kind_of(e for e, _ in sels)
        pub = published(kind) if kind is not None else None
        if kind is None or pub is None:
            return
        for expr, path in sels:
            for miss in misreads(expr, kind, pub):
                yield Finding(path, f"DeviceClass/{obj.name}: {miss.message}", miss.hint)
        return
    if obj.kind not in REQUESTS_AT:
        return
    for choice in choices(obj.data, obj.kind):
        if choice.device_class is None:
            continue
        kind = class_kind(choice.device_class, ctx.defined)
        pub = published(kind) if kind is not None else None
        if kind is None or pub is None:
            continue
        for expr, path in choice.selectors:
            for miss in misreads(expr, kind, pub):
                yield Finding(
                    path,
                    f"{obj.kind}/{obj.name} request {choice.request} ({choice.device_class}): "
                    f"{miss.message}",
                    miss.hint,
                )
