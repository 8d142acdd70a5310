"""Device taints in the cluster (KEP-5055): a ResourceSlice whose every device its driver tainted,
and each DeviceTaintRule that keeps devices from claims.

NVIDIA's DRA driver with its ``NVMLDeviceHealthCheck`` feature gate marks a GPU unhealthy after a
critical XID and every GPU when one is lost (``ERROR_GPU_IS_LOST``), and publishes that as device
taints; its proposed keys are ``gpu.nvidia.com/xid`` (the XID as value) and
``gpu.nvidia.com/gpu-lost``, of effect ``None``, leaving ``NoSchedule``/``NoExecute`` to an
administrator's DeviceTaintRule (NVIDIA/k8s-dra-driver-gpu issue #905, "DeviceHealthCheck: Design
Proposal for Taint Key/Value Schema"). So every taint counts for a slice, whatever its key and
effect, and the message says what the effects do: ``NoSchedule`` keeps the devices from new
claims, ``NoExecute`` also evicts the pods using them, ``None`` (and, by the API's words, an
unknown effect) only informs (:mod:`gpustack.kube.device_taints`). A DeviceTaintRule (a
maintenance drain, say) is easily forgotten: each one of a blocking effect is named with the
devices it selects; one of effect ``None`` is no finding.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack import dra_upstream as upstream
from gpustack.doctor.finding import Diagnosis
from gpustack.kube.device_taints import (
    BLOCKING,
    TaintRule,
    slice_devices,
    taint_rule,
)
from gpustack.kube.state import JSON, ClusterState, get, name

SLICE_CHECK = "devices-tainted"
RULE_CHECK = "device-taint-rule"
#: How many devices a message lists before it counts the rest.
_SHOWN = 4


def _str(value: object) -> str:
    return value if isinstance(value, str) else "?"


def _where(res_slice: JSON) -> tuple[str, str]:
    """The subject (the node; the cluster for a slice of no one node) and how the message names
    where the devices are."""
    node = get(res_slice, "spec", "nodeName")
    if isinstance(node, str) and node:
        return f"node/{node}", f"node {node}"
    return "cluster", f"pool {_str(get(res_slice, 'spec', 'pool', 'name'))}"


def _listed(parts: list[str]) -> str:
    rest = len(parts) - _SHOWN
    return "; ".join(parts[:_SHOWN]) + (f"; {rest} more" if rest > 0 else "")


def _effect(effects: set[str]) -> str:
    """What the taints' effects (``None`` for a device with no blocking taint) do to claims."""
    blocking = effects & set(BLOCKING)
    if not blocking:
        return (
            "taints of effect None only inform: the scheduler still gives these devices to "
            "claims (a DeviceTaintRule with NoSchedule keeps them out)"
        )
    said = "claims that do not tolerate the taints get none of them"
    if "NoExecute" in blocking:
        said += ", and the pods using a NoExecute-tainted device are evicted"
    if "None" in effects:
        said += "; a device tainted only with effect None is still given to claims"
    return said


def _all_tainted(res_slice: JSON) -> Diagnosis | None:
    shown, effects = [], set()
    for device in slice_devices(res_slice):
        if not device.taints:
            return None
        effects |= {t.effect for t in device.taints if t.blocking} or {"None"}
        shown.append(f"{device.name}: {', '.join(str(t) for t in device.taints)}")
    if not shown:
        return None
    driver = _str(get(res_slice, "spec", "driver"))
    subject, where = _where(res_slice)
    what = f"GPU lost/XID on {where}" if driver == upstream.GPU_DRIVER else f"on {where}"
    return Diagnosis(
        subject,
        SLICE_CHECK,
        f"{what}: its driver {driver} tainted every device of ResourceSlice {name(res_slice)} "
        f"({_listed(shown)}); {_effect(effects)}",
        f"kubectl get resourceslice {name(res_slice)} -o yaml shows each taint and its "
        "timeAdded; read the node's kernel log for NVIDIA XID messages and the DRA kubelet "
        "plugin's log",
    )


def _matched(rule: TaintRule, state: ClusterState) -> list[str]:
    """``pool/device`` of each published device ``rule`` selects."""
    return [
        f"{d.pool}/{d.name}"
        for res_slice in state.resourceslices
        for d in slice_devices(res_slice)
        if rule.matches(d.driver, d.pool, d.name)
    ]


def _rule(data: JSON, state: ClusterState) -> Diagnosis | None:
    rule = taint_rule(data)
    if rule is None or not rule.taint.blocking:
        return None
    matched = _matched(rule, state)
    devices = f"{len(matched)} published device(s): {_listed(matched)}" if matched else "none"
    return Diagnosis(
        f"devicetaintrule/{rule.name}",
        RULE_CHECK,
        f"DeviceTaintRule {rule.name} taints {rule.scope} with {rule.taint} ({devices}); claims "
        "that do not tolerate it get none of them",
        f"kubectl delete devicetaintrule {rule.name} when the devices are back in service, or "
        f"add a toleration for {rule.taint.key} to the requests that may use them",
    )


def diagnose_device_taints(state: ClusterState) -> Iterator[Diagnosis]:
    """Every ResourceSlice whose devices are all tainted, then every blocking DeviceTaintRule."""
    for res_slice in state.resourceslices:
        found = _all_tainted(res_slice)
        if found is not None:
            yield found
    for data in state.devicetaintrules:
        ruled = _rule(data, state)
        if ruled is not None:
            yield ruled
