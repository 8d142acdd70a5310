"""``cuda-fits-driver``: a GPU container's CUDA release runs on the profile's driver.

An image built for a newer CUDA than the driver supports starts fine and fails at the first
CUDA call (``CUDA_ERROR_NO_DEVICE``, "the NVIDIA driver on your system is too old"). The release
is read from the image tag as ``validate`` reads it (``cuda12.4``, ``cu126``, ``nvidia/cuda:12.4``,
NGC ``24.05-py3``) or from the pod's ``gpustack.dev/cuda-version`` annotation; the driver must
reach the CUDA family's floor (minor-version compatibility), as for the profile's own examples.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.kube.pods import CUDA_ANNOTATION, PodSite
from gpustack.lint.context import LintContext
from gpustack.lint.rules.common import gpu_entries, in_profile
from gpustack.profile import cuda_catalog
from gpustack.profile.catalog import parse_driver
from gpustack.profile.finding import Finding


def check(site: PodSite, ctx: LintContext) -> Iterator[Finding]:
    if ctx.driver is None:
        return
    note = site.annotation(CUDA_ANNOTATION)
    for c in site.containers():
        if not any(True for _ in gpu_entries(c, ctx)):
            continue
        if note is not None:
            cuda, path, said = note[0], note[1], f"annotation {CUDA_ANNOTATION}: {note[0]}"
        else:
            found = cuda_catalog.cuda_from_image(c.image)
            if found is None:
                continue
            cuda, path, said = found, (*c.path, "image"), f"image {c.image} (CUDA {found})"
        floor = cuda_catalog.cuda_family_floor(cuda) if cuda[:1].isdigit() else None
        if floor is None:
            yield Finding(
                path,
                f"container {c.name}: {cuda_catalog.unknown_cuda(cuda)}",
                "use an image built for a known CUDA release",
            )
        elif parse_driver(ctx.driver) < parse_driver(floor):
            yield Finding(
                path,
                f"container {c.name}: {said} needs driver {floor} or newer, but the driver"
                f"{in_profile(ctx)} is {ctx.driver}: CUDA calls fail with CUDA_ERROR_NO_DEVICE",
                f"use an image built for an older CUDA, or raise driver.version to {floor}+",
            )
