"""``device-class-known``: a ResourceClaim or ResourceClaimTemplate asks for a DeviceClass that
exists: one the linted manifests define, or one the profile's DRA driver creates.

The API server accepts any ``deviceClassName``; the scheduler then says "device class
gpu.nvidia.co does not exist" and the pod stays Pending. With a profile that deploys NVIDIA's
DRA driver the classes are exactly those it creates
(:func:`gpustack.profile.derive.dra_device_classes`: ``computeDomains`` off means no
ComputeDomain classes); otherwise every class NVIDIA's driver can create counts. Only names meant
as NVIDIA's (naming NVIDIA, or a few edits from one of its classes) are judged: another vendor's
class (``gpu.amd.com``) is not lint's to know.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack import dra_upstream as upstream
from gpustack.kube.claims import NVIDIA_CLASSES, REQUESTS_AT, choices
from gpustack.kube.manifests import Manifest
from gpustack.kube.suggest import did_you_mean
from gpustack.lint.context import LintContext
from gpustack.lint.misreads import looks_nvidia
from gpustack.lint.rules.common import in_profile
from gpustack.profile.finding import Finding


def _turn_on(name: str) -> str:
    if name in upstream.COMPUTE_DOMAIN_DEVICE_CLASSES:
        return "turn on dra.computeDomains in the profile"
    if name in (upstream.GPU_DEVICE_CLASS, upstream.MIG_DEVICE_CLASS):
        return "turn on dra.gpus in the profile"
    return "gpustack does not create it (NVIDIA's PassthroughSupport gate); define it yourself"


def check(obj: Manifest, ctx: LintContext) -> Iterator[Finding]:
    if obj.kind not in REQUESTS_AT:
        return
    known = sorted({*ctx.device_classes, *ctx.defined.device_classes})
    driver = f"the DRA driver{in_profile(ctx)}" if ctx.dra_driver else "NVIDIA's DRA driver"
    for choice in choices(obj.data, obj.kind):
        name = choice.device_class
        if name is None or name in known or not looks_nvidia(name, NVIDIA_CLASSES):
            continue
        where = f"{obj.kind}/{obj.name} request {choice.request}"
        if name in NVIDIA_CLASSES:  # one the profile's driver leaves out
            yield Finding(
                choice.class_path,
                f"{where} asks for DeviceClass {name}, which {driver} does not create (it "
                f"creates {', '.join(ctx.device_classes) or 'none'}), so the claim is never "
                "allocated",
                _turn_on(name),
            )
            continue
        yield Finding(
            choice.class_path,
            f"{where} asks for DeviceClass {name}, which neither the linted manifests define nor "
            f"{driver} creates, so the scheduler finds no such class and the pod stays Pending",
            f"{did_you_mean(name, known)} Known classes: {', '.join(known)}",
        )
