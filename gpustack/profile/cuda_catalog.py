"""Which driver each CUDA release needs, and which CUDA an image ships, as data the rules query.

Why apart from :mod:`gpustack.profile.catalog` (the GPUs and their drivers): these facts are
about workloads, read by the workload rules and ``gpustack lint``. They come from NVIDIA's CUDA
release notes ("CUDA Toolkit and Corresponding Driver Versions"), the CUDA
minor-version-compatibility guide and the NGC framework containers' release notes.
"""

from __future__ import annotations

import re

from gpustack.profile.catalog import parse_driver

#: CUDA toolkit release -> minimum Linux x86_64 driver of its GA release.
CUDA_GA_DRIVER: dict[str, str] = {
    "11.0": "450.51.05",
    "11.1": "455.23",
    "11.2": "460.27.03",
    "11.3": "465.19.01",
    "11.4": "470.42.01",
    "11.5": "495.29.05",
    "11.6": "510.39.01",
    "11.7": "515.43.04",
    "11.8": "520.61.05",
    "12.0": "525.60.13",
    "12.1": "530.30.02",
    "12.2": "535.54.03",
    "12.3": "545.23.06",
    "12.4": "550.54.14",
    "12.5": "555.42.02",
    "12.6": "560.28.03",
    "12.8": "570.26",
    "12.9": "575.51.03",
    "13.0": "580.65.06",
    "13.1": "590.44.01",
    "13.2": "595.45.04",
}

#: The driver branches gpustack's defaults have pinned, and what each runs. R595 (595.91.07, the
#: GPU Operator v26.7.0 default) runs CUDA 13.2 natively (its GA driver above is 595.45.04) and
#: every 12.x and 13.x release through minor-version compatibility; like R590 it no longer runs
#: Maxwell, Pascal or Volta, for which R580 is the last branch (``last_driver_branch``).
#: R580 (580.105.08, the v25.10.1 default) runs CUDA 13.0 natively.


def native_cuda(driver: str) -> str | None:
    """The newest CUDA release whose GA driver ``driver`` meets (its full, not just
    minor-version-compatible, support); ``None`` for a driver older than CUDA 11.0's."""
    have = parse_driver(driver)
    fits = [c for c, ga in CUDA_GA_DRIVER.items() if parse_driver(ga) <= have]
    return max(fits, key=lambda c: tuple(int(x) for x in c.split("."))) if fits else None


#: CUDA major family -> lowest driver that runs any of its releases (minor-version compatibility).
CUDA_FAMILY_FLOOR: dict[int, str] = {11: "450.80.02", 12: "525.60.13", 13: "580.65.06"}

#: NGC framework containers (``nvcr.io/nvidia/pytorch:YY.MM-py3``) -> the CUDA they ship.
NGC_CUDA: dict[str, str] = {
    "23.01": "12.0",
    "23.02": "12.0",
    "23.03": "12.1",
    "23.04": "12.1",
    "23.05": "12.1",
    "23.06": "12.1",
    "23.07": "12.1",
    "23.08": "12.2",
    "23.09": "12.2",
    "23.10": "12.2",
    "23.11": "12.3",
    "23.12": "12.3",
    "24.01": "12.3",
    "24.02": "12.3",
    "24.03": "12.4",
    "24.04": "12.4",
    "24.05": "12.4",
    "24.06": "12.5",
    "24.07": "12.5",
    "24.08": "12.6",
    "24.09": "12.6",
    "24.10": "12.6",
    "24.11": "12.6",
    "24.12": "12.6",
    "25.01": "12.8",
    "25.02": "12.8",
    "25.03": "12.8",
    "25.04": "12.9",
    "25.05": "12.9",
    "25.06": "12.9",
    "25.08": "13.0",
    "25.09": "13.0",
    "25.10": "13.0",
}

_NGC_REPOS = ("nvcr.io/nvidia/pytorch", "nvcr.io/nvidia/tensorflow", "nvcr.io/nvidia/tritonserver")
_CUDA_IN_TAG = re.compile(r"(?:^|[-_])cuda-?(\d{2})\.(\d)")
_CU_IN_TAG = re.compile(r"(?:^|[-_+])cu(\d{2})(\d)(?:$|[-_.])")
_CUDA_IMAGE_TAG = re.compile(r"^(\d{2})\.(\d)(?:\.\d+)?(?:$|-)")
_NGC_TAG = re.compile(r"^(\d{2}\.\d{2})-")


def cuda_from_image(image: str) -> str | None:
    """The CUDA release an image ships, read from its tag; ``None`` when the tag doesn't say.

    Understands ``...:2.5.1-cuda12.4-cudnn9-runtime``, ``...:2.6.0-cu126``,
    ``nvidia/cuda:12.4.1-base-ubuntu22.04`` and NGC ``nvcr.io/nvidia/pytorch:24.05-py3``.
    """
    name, _, tag = image.partition("@")[0].rpartition(":")
    if not name or "/" in tag:
        return None
    if name in _NGC_REPOS:
        ngc = _NGC_TAG.match(tag)
        return NGC_CUDA.get(ngc.group(1)) if ngc else None
    if name.rsplit("/", 1)[-1] == "cuda":
        plain = _CUDA_IMAGE_TAG.match(tag)
        if plain:
            return f"{int(plain.group(1))}.{plain.group(2)}"
    for pattern in (_CUDA_IN_TAG, _CU_IN_TAG):
        found = pattern.search(tag)
        if found:
            return f"{int(found.group(1))}.{found.group(2)}"
    return None


def cuda_family_floor(cuda: str) -> str | None:
    """The minimum driver for a CUDA release under minor-version compatibility."""
    return CUDA_FAMILY_FLOOR.get(int(cuda.split(".")[0]))


def unknown_cuda(cuda: str) -> str:
    """What a profile's example and a linted container say of a CUDA release with no
    :func:`cuda_family_floor`: the families gpustack does know, so the reader sees the gap."""
    families = ", ".join(f"{m}.x" for m in CUDA_FAMILY_FLOOR)
    return f"CUDA {cuda} is unknown to gpustack, which knows {families}"
