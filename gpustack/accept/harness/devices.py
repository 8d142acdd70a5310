"""gpustack acceptance: the devices one node promises, as ``nvidia-smi -L`` lists them.

Runs in the acceptance pod (shipped in a ConfigMap; standard library only). The expectation
is the JSON in ``GPUSTACK_EXPECT``: ``gpus`` (distinct GPUs the container must see),
``product`` (their name as nvidia-smi prints it, or null) and ``mig`` (MIG devices per
profile); ``GPUSTACK_CHECK`` names the check. It prints one ``GPUSTACK-ACCEPT {json}`` line and
exits 1 when anything differs.

``nvidia-smi -L`` prints ``GPU <i>: <name> (UUID: GPU-...)`` per GPU and, under a GPU in MIG
mode, ``  MIG <profile> Device <j>: (UUID: MIG-...)`` per MIG device the container may use.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter

MARK = "GPUSTACK-ACCEPT"
_GPU = re.compile(r"^GPU (\d+): (.+?) \(UUID: (GPU-[^)]+)\)\s*$")
_MIG = re.compile(r"^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: (MIG-[^)]+)\)\s*$")


def parse(listing: str) -> tuple[list[tuple[str, str]], dict[str, int]]:
    """``(name, uuid)`` of each GPU, and how many MIG devices of each profile."""
    gpus: list[tuple[str, str]] = []
    migs: Counter[str] = Counter()
    for line in listing.splitlines():
        gpu = _GPU.match(line)
        if gpu:
            gpus.append((gpu.group(2), gpu.group(3)))
            continue
        mig = _MIG.match(line)
        if mig:
            migs[mig.group(1)] += 1
    return gpus, dict(migs)


def problems(
    expect: dict[str, object], gpus: list[tuple[str, str]], migs: dict[str, int]
) -> list[str]:
    found: list[str] = []
    want = expect.get("gpus")
    distinct = len({uuid for _, uuid in gpus})
    if isinstance(want, int) and distinct != want:
        found.append(f"{distinct} GPU(s) visible, {want} promised")
    product = expect.get("product")
    wrong = sorted({name for name, _ in gpus if product and name != product})
    if wrong:
        found.append(f"GPU product {', '.join(wrong)}, {product} promised")
    mig = expect.get("mig") or {}
    assert isinstance(mig, dict)
    for profile in sorted(set(mig) | set(migs)):
        have, need = migs.get(profile, 0), int(mig.get(profile, 0))
        if have != need:
            found.append(f"{have} MIG {profile} device(s), {need} promised")
    return found


def main() -> int:
    expect = json.loads(os.environ.get("GPUSTACK_EXPECT", "{}"))
    result: dict[str, object] = {
        "check": os.environ.get("GPUSTACK_CHECK", "devices"),
        "node": os.environ.get("NODE_NAME", "unknown"),
        "pod": os.environ.get("POD_NAME", "unknown"),
        "container": os.environ.get("CONTAINER_NAME", "devices"),
        "expect": expect,
    }
    if expect.get("simulated"):  # the plugin's simulated GPUs: being admitted is the check
        result.update(ok=True, problems=[])
        print(MARK, json.dumps(result, sort_keys=True), flush=True)
        return 0
    try:
        done = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        found = ["nvidia-smi not found: the runtime class did not give the container the driver"]
    except subprocess.TimeoutExpired:
        found = ["nvidia-smi -L did not answer within 120 s"]
    else:
        if done.returncode != 0:
            last = (done.stderr.strip() or done.stdout.strip() or "no message").splitlines()[-1]
            found = [f"nvidia-smi -L failed (exit {done.returncode}): {last}"]
        else:
            gpus, migs = parse(done.stdout)
            result.update(gpus=[name for name, _ in gpus], mig=migs)
            found = problems(expect, gpus, migs)
    result.update(ok=not found, problems=found)
    print(MARK, json.dumps(result, sort_keys=True), flush=True)
    return 0 if not found else 1


if __name__ == "__main__":
    sys.exit(main())
