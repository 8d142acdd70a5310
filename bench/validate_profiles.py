"""Validate 1000 generated profiles in one process and print the time per profile.

Why: ``gpustack validate`` runs in pre-commit hooks and CI on every change; it must stay cheap
even for large fleets (target: <= 2 ms per profile). Profiles vary in size and features so that
schema paths, rules and ``extends`` merging are all exercised.

Usage: ``.venv/bin/python bench/validate_profiles.py [COUNT]``
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

from gpustack.checker import check_paths

BASE = """\
apiVersion: gpustack.dev/v1alpha1
kind: Profile
cluster:
  kubernetesVersion: "1.33"
  imagePullSecrets: [ngc-registry]
driver:
  version: "580.105.08"
  kernelModuleType: open
devicePlugin:
  implementation: nvidia
  deviceListStrategy: [cdi-cri]
gpus:
  product: H100-SXM5-80GB
  perNode: 8
"""

PRODUCTS = ["L4", "T4", "A10", "L40S", "H100-SXM5-80GB", "A100-SXM4-80GB", "H200-SXM-141GB"]
IMAGES = [
    "docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
    "docker.io/pytorch/pytorch:2.6.0-cuda12.6-cudnn9-runtime",
    "nvcr.io/nvidia/pytorch:24.05-py3",
    "nvcr.io/nvidia/cuda:12.8.1-base-ubuntu24.04",
]


def profile_text(i: int, rng: random.Random) -> str:
    """One profile; every fourth extends the shared base, others vary sections and sizes."""
    lines = [
        "# yaml-language-server: $schema=../schemas/profile.schema.json",
        "apiVersion: gpustack.dev/v1alpha1",
        "kind: Profile",
    ]
    if i % 4 == 0:
        lines.insert(1, "extends: _bases/fleet.yaml")
    distribution = rng.choice(["generic", "k3s", "rke2", "k0s"])
    lines += [
        "metadata:",
        f"  name: cluster-{i:04d}",
        "  labels:",
        f"    team: team-{i % 17}",
        "cluster:",
        f'  kubernetesVersion: "1.{rng.randint(29, 37)}"',
        "  runtime:",
        f"    distribution: {distribution}",
        # the fleet base asks for CDI devices: k3s and RKE2 render containerd's CDI settings
        # only from containerd 2.0 (rule k3s-cdi-needs-containerd-2)
        *(['    version: "2.0.5"'] if distribution in ("k3s", "rke2") else []),
        "driver:",
        f'  version: "{rng.choice(["580.105.08", "570.133.20", "595.91.07"])}"',
    ]
    product = rng.choice(PRODUCTS)
    if i % 4 != 0:
        lines += ["gpus:", f"  product: {product}", f"  perNode: {rng.choice([1, 2, 4, 8])}"]
    if i % 3 == 0 and i % 4 != 0:
        lines += [
            "devicePlugin:",
            "  sharing:",
            "    timeSlicing:",
            "      renameByDefault: true",
            "      resources:",
            "        - name: nvidia.com/gpu",
            f"          replicas: {rng.randint(2, 8)}",
        ]
        resource = "nvidia.com/gpu.shared"
    else:
        resource = "nvidia.com/gpu"
    lines += ["workloads:", "  examples:"]
    for j in range(rng.randint(1, 3)):
        lines += [
            f"    - name: job-{j}",
            f"      image: {rng.choice(IMAGES)}",
            f"      resourceName: {resource}",
            "      command: [python, -c, 'import torch; print(torch.cuda.is_available())']",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rng = random.Random(1234)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "profiles"
        (root / "_bases").mkdir(parents=True)
        (root / "_bases" / "fleet.yaml").write_text(BASE, encoding="utf-8")
        for i in range(count):
            (root / f"cluster-{i:04d}.yaml").write_text(profile_text(i, rng), encoding="utf-8")
        start = time.perf_counter()
        result = check_paths([root])
        elapsed = time.perf_counter() - start
    if not result.ok:
        for issue in result.issues[:10]:
            print(issue, file=sys.stderr)
        sys.exit(f"bench profiles must be valid; {len(result.issues)} issues")
    print(f"profiles: {result.files_checked}")
    print(f"total: {elapsed * 1000:.1f} ms")
    print(f"per profile: {elapsed * 1000 / result.files_checked:.3f} ms (target <= 2 ms)")


if __name__ == "__main__":
    main()
