"""The lint rule registry: one row per rule, the only place its ID, check and meaning are given.

Like :mod:`gpustack.profile.rules.registry` for profiles: the ID a finding prints, the function
that finds it, what the docs' table says it catches and how to fix it, and whether it needs
the profile are facts about one rule, kept side by side. ``load`` is the ID of a file that is no
YAML. A test keeps the docs' table of rules in step with this one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from gpustack.kube.manifests import Manifest
from gpustack.kube.pods import PodSite
from gpustack.lint.context import LintContext
from gpustack.lint.rules import (
    claim_device_untainted,
    claim_reference_known,
    container_claim_known,
    cuda_fits_driver,
    dev_shm,
    device_attribute_known,
    device_class_known,
    gpu_claim_and_limit,
    gpu_count_whole,
    gpu_fits_node,
    gpu_node_selector,
    gpu_node_toleration,
    gpu_requests_match_limits,
    gpu_resource_known,
    runtime_class_known,
    shared_one_per_container,
)
from gpustack.profile.finding import Finding

Check = Callable[[PodSite, LintContext], Iterator[Finding]]
#: A rule about whole objects (ResourceClaims, templates, DeviceClasses) rather than pod specs.
ObjectCheck = Callable[[Manifest, LintContext], Iterator[Finding]]

#: ID of findings about the file itself (not YAML, unreadable).
LOAD = "load"


@dataclass(frozen=True, kw_only=True)
class LintRule:
    """One rule: ``check`` runs on every pod spec, ``check_object`` on every object (one of
    the two). ``needs_profile``: it compares with what the profile says and is skipped without
    ``--profile``."""

    id: str
    summary: str
    check: Check | None = None
    check_object: ObjectCheck | None = None
    needs_profile: bool = False

    @property
    def module(self) -> str:
        """The module that holds the rule's check (one rule per module)."""
        found = self.check or self.check_object
        assert found is not None, self.id
        return found.__module__

    def __call__(self, site: PodSite, ctx: LintContext) -> Iterator[Finding]:
        if self.check is None or (self.needs_profile and not ctx.has_profile):
            return
        for finding in self.check(site, ctx):
            yield replace(finding, rule=self.id)

    def on_object(self, obj: Manifest, ctx: LintContext) -> Iterator[Finding]:
        if self.check_object is None or (self.needs_profile and not ctx.has_profile):
            return
        for finding in self.check_object(obj, ctx):
            yield replace(finding, rule=self.id)


RULES: tuple[LintRule, ...] = (
    LintRule(
        id="gpu-requests-match-limits",
        summary="A GPU in requests is in limits too, with the same count.",
        check=gpu_requests_match_limits.check,
    ),
    LintRule(
        id="gpu-resource-known",
        summary="The GPU resource is one the cluster advertises (typos, other MIG profiles).",
        check=gpu_resource_known.check,
    ),
    LintRule(
        id="gpu-count-whole",
        summary="A GPU count is a whole number of at least 1.",
        check=gpu_count_whole.check,
    ),
    LintRule(
        id="gpu-fits-node",
        summary="A pod asks for no more of a resource than the largest node offers.",
        check=gpu_fits_node.check,
        needs_profile=True,
    ),
    LintRule(
        id="shared-one-per-container",
        summary="At most 1 of a shared resource per container where sharing refuses more.",
        check=shared_one_per_container.check,
        needs_profile=True,
    ),
    LintRule(
        id="gpu-node-toleration",
        summary="A GPU pod tolerates the taints of the profile's GPU nodes.",
        check=gpu_node_toleration.check,
        needs_profile=True,
    ),
    LintRule(
        id="gpu-node-selector",
        summary="A GPU pod's nodeSelector and required node affinity fit a GPU node pool.",
        check=gpu_node_selector.check,
        needs_profile=True,
    ),
    LintRule(
        id="dev-shm",
        summary="A PyTorch/NCCL container has a memory-backed /dev/shm.",
        check=dev_shm.check,
    ),
    LintRule(
        id="cuda-fits-driver",
        summary="A GPU container's CUDA release runs on the profile's driver.",
        check=cuda_fits_driver.check,
        needs_profile=True,
    ),
    LintRule(
        id="runtime-class-known",
        summary="A GPU pod's runtimeClassName is one the stack declares.",
        check=runtime_class_known.check,
        needs_profile=True,
    ),
    LintRule(
        id="device-class-known",
        summary="A ResourceClaim (template) asks for a DeviceClass that exists.",
        check_object=device_class_known.check,
    ),
    LintRule(
        id="claim-reference-known",
        summary="A pod's resourceClaims name a claim or template defined in its namespace.",
        check=claim_reference_known.check,
    ),
    LintRule(
        id="claim-device-untainted",
        summary="A pod's claim can get a device no untolerated device taint keeps from it.",
        check=claim_device_untainted.check,
    ),
    LintRule(
        id="device-attribute-known",
        summary="A CEL selector reads attributes NVIDIA's driver publishes, with their kinds.",
        check_object=device_attribute_known.check,
    ),
    LintRule(
        id="container-claim-known",
        summary="A container's resources.claims name an entry of the pod's resourceClaims.",
        check=container_claim_known.check,
    ),
    LintRule(
        id="gpu-claim-and-limit",
        summary="A pod asks for GPUs by DRA claim or by nvidia.com/gpu, not both.",
        check=gpu_claim_and_limit.check,
        needs_profile=True,
    ),
)

BY_ID: dict[str, LintRule] = {r.id: r for r in RULES}
