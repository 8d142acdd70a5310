"""Generated variants of the example profiles: settings no example uses, synthesized at test time
into a temporary ``dist/`` and run through the same rollout as the committed folders.

Why: the examples are what users copy, but a profile setting that no example exercises (a
cluster without gpustack's device plugin, deploy labels the team sets, the GKE quota with the
driver container) would otherwise reach a real cluster untried.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from tests.e2e.folder import PROFILES

#: Deploy labels of the components (``nvidia.com/gpu.deploy.<component>``), as the team sets them
#: on its GPU nodes with ``cluster.deployLabels: required``.
DEPLOYED: Final = {
    f"nvidia.com/gpu.deploy.{c}": "true"
    for c in ("driver", "container-toolkit", "device-plugin", "gpu-feature-discovery")
}


@dataclass(frozen=True)
class Variant:
    """``base`` (a profile in profiles/ without ``extends``) with ``overrides`` merged in;
    ``node_labels``: what the team puts on its GPU nodes itself."""

    base: str
    overrides: dict[str, Any]
    node_labels: dict[str, str] = field(default_factory=dict)


VARIANTS: Final = {
    # A cluster that allocates GPUs with a DRA driver: no device plugin, no example Jobs.
    "lab-1gpu-no-plugin": Variant(
        "lab-1gpu", {"devicePlugin": {"enabled": False}, "workloads": {"examples": []}}
    ),
    # GKE nodes running gpustack's driver container (Ubuntu node images).
    "lab-1gpu-gke": Variant("lab-1gpu", {"cluster": {"platform": "gke"}}),
    # Issue 31 item 1: a profile for GKE's GPU node pools that does not say platform: gke
    # (it selects GKE's accelerator label and installs the toolkit into GKE's writable folder).
    "lab-1gpu-gke-looking": Variant(
        "lab-1gpu",
        {
            "cluster": {"nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"}},
            "toolkit": {"installDir": "/home/kubernetes/bin/nvidia"},
        },
    ),
    # Issue 31 item 2: a fleet overlay that selects a region alone (a CPU node of that region
    # must still get none of the GPU stack).
    "lab-1gpu-region": Variant(
        "lab-1gpu", {"cluster": {"nodeSelector": {"topology.kubernetes.io/region": "eu-west-1"}}}
    ),
    # The team labels its GPU nodes for each component, as under the GPU Operator.
    "lab-1gpu-required-labels": Variant(
        "lab-1gpu", {"cluster": {"deployLabels": "required"}}, DEPLOYED
    ),
}


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def synthesize(root: Path) -> Path:
    """Write every variant's profile under ``root/profiles`` and synthesize them into
    ``root/dist``; returns the profiles folder."""
    profiles = root / "profiles"
    profiles.mkdir(parents=True)
    for name, variant in VARIANTS.items():
        data = yaml.safe_load((PROFILES / f"{variant.base}.yaml").read_text())
        assert "extends" not in data, f"{variant.base}: pick a base without extends"
        data = merge(data, variant.overrides)
        data["metadata"]["name"] = name
        (profiles / f"{name}.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    gpustack = Path(sys.executable).with_name("gpustack")
    subprocess.run(
        [str(gpustack), "synth", str(profiles), "--out", str(root / "dist"), "--quiet"],
        check=True,
        capture_output=True,
    )
    return profiles
