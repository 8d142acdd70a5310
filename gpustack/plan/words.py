"""The sentences the text and Markdown renderings share: what each effect means on a node, and
how a rollout rolls. One place, so the two renderings cannot tell a reviewer different things.
"""

from __future__ import annotations

from gpustack.plan.model import (
    EVICTS,
    GPU_DIP,
    PLACEMENT,
    RUNTIME_RESTART,
    WAITS_FOR_DELETE,
    Rollout,
)
from gpustack.plan.workloads import CREATED


def how(r: Rollout) -> str:
    """``OnDelete``, or ``RollingUpdate (maxUnavailable 1, maxSurge 0)``."""
    if r.strategy == CREATED:
        return "new: its pods start on every node it selects at once"
    if r.strategy != "RollingUpdate":
        return r.strategy
    return f"RollingUpdate (maxUnavailable {r.max_unavailable}, maxSurge {r.max_surge})"


def effect(r: Rollout, name: str) -> str:
    """One effect of a rollout, as a sentence about the nodes."""
    if name == WAITS_FOR_DELETE:
        return "nothing changes on a node until its pod is deleted (see the manual steps)"
    if name == EVICTS:
        return (
            "GPU workloads are evicted: as each node's pod is replaced, the driver manager "
            "pauses the node's GPU clients, evicts its GPU pods (drains it if that is not "
            "enough) and reinstalls the driver"
        )
    if name == RUNTIME_RESTART:
        return (
            "the container runtime restarts on each node as its pod starts (the installer "
            "restarts containerd or CRI-O; a replaced pod's cleanup restarts it too)"
        )
    if name == PLACEMENT:
        return (
            "its placement changes: pods leave the nodes it no longer selects at once, whatever "
            "its update strategy (OnDelete too), and start on the nodes it newly selects"
        )
    if name == GPU_DIP:
        return (
            f"allocatable GPUs dip: up to {r.max_unavailable} of its nodes at a time offer no "
            "GPUs to new pods while their plugin restarts (running pods keep theirs)"
        )
    return name


def title(r: Rollout) -> str:
    """``DaemonSet ns/name (driver 1 → 2)``."""
    before, after = r.version
    version = f" {before} → {after}" if before and before != after else ""
    version = f" {after}" if after and not before else version
    what = f" ({r.component}{version})" if r.component else ""
    return f"{r.ref}{what}"


def mig(configs: tuple[str, ...], label: str) -> str:
    names = ", ".join(f"{label}={c}" for c in configs)
    return (
        f"MIG layouts change ({', '.join(configs)}): nodes labelled {names} are repartitioned "
        "as their MIG manager restarts; move GPU jobs off their old MIG devices first"
    )
