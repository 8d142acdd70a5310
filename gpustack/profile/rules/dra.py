"""Rules for NVIDIA's DRA driver (``dra``): the prerequisites NVIDIA states for it.

Facts (kubernetes-sigs/dra-driver-nvidia-gpu, its README and ``deployments/helm`` chart, and the
GPU Operator v26.7.0's DRA documentation; see :mod:`gpustack.dra_upstream`):

- ``resource.k8s.io/v1`` is served from Kubernetes 1.34 (DRA GA); NVIDIA asks for 1.34.2 or
  later (a profile states only the minor version, so the message names the patch release).
- GPU allocation needs driver 565 or later; ComputeDomains need 570.158.01 or later (IMEX
  channels as the driver exposes them).
- The kubelet plugin hands devices to containers by CDI only: the runtime must have CDI on.
- ComputeDomains group nodes by GPU feature discovery's ``nvidia.com/gpu.clique`` label.
- A GPU is handed out by the device plugin or by DRA, never both: two allocators of one GPU
  give it to two pods.
- ``extendedResourceName`` on a DeviceClass has an effect only with the ``DRAExtendedResource``
  feature gate (alpha in 1.35, beta and on by default in 1.36); Kubernetes 1.37 made it GA
  (KEP-5004), so from 1.37 there is no gate to turn on (``shared/reference/nvidia-stack-2026.md``).
- The DRA API gpustack renders, ``resource.k8s.io/v1``, is served by every release from 1.34,
  1.37 included.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from gpustack.profile.catalog import parse_driver
from gpustack.profile.derive import mig_layouts
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile
from gpustack.profile.rules.common import example_path

#: The first Kubernetes minor release that serves ``resource.k8s.io/v1``; NVIDIA's floor patch.
DRA_KUBERNETES: Final = (1, 34)
DRA_KUBERNETES_PATCH: Final = "1.34.2"
#: The first minor release whose DRAExtendedResource gate is on by default (beta; from 1.37 the
#: feature is GA and has no gate, so every later release passes too).
EXTENDED_RESOURCE_KUBERNETES: Final = (1, 36)
#: NVIDIA's driver floors: GPU allocation, ComputeDomains.
GPU_ALLOCATION_DRIVER: Final = "565.0.0"
COMPUTE_DOMAIN_DRIVER: Final = "570.158.01"


def _minor(p: Profile) -> tuple[int, int]:
    major, minor = (int(x) for x in p.cluster.kubernetes_version.split(".")[:2])
    return major, minor


def dra_needs_resource_api(p: Profile) -> Iterator[Finding]:
    if p.dra.enabled and _minor(p) < DRA_KUBERNETES:
        yield Finding(
            ("cluster", "kubernetesVersion"),
            f"NVIDIA's DRA driver needs resource.k8s.io/v1 (Kubernetes {DRA_KUBERNETES_PATCH} or"
            f" later), but the cluster runs {p.cluster.kubernetes_version}",
            'upgrade the cluster and set cluster.kubernetesVersion: "1.34" or later, or set'
            " dra.enabled: false",
        )


def dra_driver_branch(p: Profile) -> Iterator[Finding]:
    dra = p.dra
    if not dra.enabled:
        return
    have = parse_driver(p.driver.version)
    if dra.compute_domains and have < parse_driver(COMPUTE_DOMAIN_DRIVER):
        yield Finding(
            ("driver", "version"),
            f"ComputeDomains need driver {COMPUTE_DOMAIN_DRIVER} or later, but the driver is"
            f" {p.driver.version}",
            f"set driver.version to {COMPUTE_DOMAIN_DRIVER} or later",
        )
    elif dra.gpus and have < parse_driver(GPU_ALLOCATION_DRIVER):
        yield Finding(
            ("driver", "version"),
            f"GPU allocation by NVIDIA's DRA driver needs driver 565 or later, but the driver is"
            f" {p.driver.version}",
            "set driver.version to 565 or later",
        )


def dra_needs_cdi(p: Profile) -> Iterator[Finding]:
    if p.dra.enabled and p.toolkit.enabled and not p.toolkit.cdi.enabled:
        yield Finding(
            ("toolkit", "cdi", "enabled"),
            "NVIDIA's DRA driver hands devices to containers only through CDI, but the toolkit"
            " leaves CDI off",
            "set toolkit.cdi.enabled: true",
        )


def dra_compute_domains_need_cliques(p: Profile) -> Iterator[Finding]:
    if p.dra.enabled and p.dra.compute_domains and not p.gpu_feature_discovery.enabled:
        yield Finding(
            ("gpuFeatureDiscovery", "enabled"),
            "ComputeDomains group nodes by GPU feature discovery's nvidia.com/gpu.clique label,"
            " but GPU feature discovery is off",
            "set gpuFeatureDiscovery.enabled: true (or run it yourself and accept this finding)",
        )


def dra_device_plugin_same_gpus(p: Profile) -> Iterator[Finding]:
    dra = p.dra
    if dra.enabled and dra.gpus and p.device_plugin.enabled and not dra.node_selector:
        yield Finding(
            ("dra", "gpus"),
            "both the device plugin and NVIDIA's DRA driver would hand out the GPUs of every"
            " node: one GPU would go to two pods",
            "set dra.nodeSelector to the label of the node pool DRA allocates (the device plugin"
            " stays off it), or devicePlugin.enabled: false, or dra.gpus: false",
        )


def dra_extended_resource_gate(p: Profile) -> Iterator[Finding]:
    dra = p.dra
    if dra.enabled and dra.extended_resource_name and _minor(p) < EXTENDED_RESOURCE_KUBERNETES:
        yield Finding(
            ("dra", "extendedResourceName"),
            "a DeviceClass's extendedResourceName needs the DRAExtendedResource feature gate,"
            " which is on by default from Kubernetes 1.36 (GA, with no gate, from 1.37); the"
            f" cluster runs {p.cluster.kubernetes_version}",
            "set dra.extendedResourceName: false, or turn the gate on in the API server,"
            " scheduler and kubelets and accept this finding",
        )


def dra_examples_supported(p: Profile) -> Iterator[Finding]:
    """An example's claims need the DRA driver part that serves them."""
    dra = p.dra
    for i, ex in enumerate(p.workloads.examples):
        if ex.dra is None:
            continue
        if not dra.enabled:
            yield Finding(
                example_path(i, "dra"),
                "the example claims devices from NVIDIA's DRA driver, which the profile does"
                " not deploy",
                "set dra.enabled: true, or remove the example's dra",
            )
            continue
        if ex.dra.gpus and not dra.gpus:
            yield Finding(
                example_path(i, "dra", "gpus"),
                "the example claims GPUs, but the DRA driver's GPU allocation is off",
                "set dra.gpus: true, or the example's dra.gpus: false",
            )
        if not ex.dra.gpus and (ex.dra.product_name or ex.dra.mig_profile):
            yield Finding(
                example_path(i, "dra", "productName" if ex.dra.product_name else "migProfile"),
                "a GPU selector has no effect when the example does not claim its GPUs",
                "set the example's dra.gpus: true, or remove the selector",
            )
        profiles = {name for layout in mig_layouts(p).values() for name, _ in layout}
        if ex.dra.gpus and ex.dra.mig_profile and ex.dra.mig_profile not in profiles:
            yield Finding(
                example_path(i, "dra", "migProfile"),
                f"no MIG layout of the profile makes {ex.dra.mig_profile} devices, so the claim"
                " is never allocated",
                "add the profile to gpus.mig (or a node config's layout), or claim one of: "
                + (", ".join(sorted(profiles)) or "none: the profile sets no MIG layout"),
            )
        if ex.dra.compute_domain and not dra.compute_domains:
            yield Finding(
                example_path(i, "dra", "computeDomain"),
                "the example runs in a ComputeDomain, but the DRA driver's ComputeDomains are off",
                "set dra.computeDomains: true",
            )
        elif ex.dra.compute_domain and ex.kind != "multinode-ddp":
            yield Finding(
                example_path(i, "dra", "computeDomain"),
                f"a ComputeDomain spans nodes, but a {ex.kind} example runs one pod",
                "set the example's kind: multinode-ddp, or computeDomain: false",
            )
