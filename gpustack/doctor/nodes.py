"""Per node: why it shows no GPUs, checked in the order the stack comes up.

1. ``node-not-selected``: the node lacks a label of ``cluster.nodeSelector`` (nothing of the
   stack runs there). Only nodes that look like GPU nodes (an NVIDIA label, an NVIDIA PCI
   device found by Node Feature Discovery, NVIDIA capacity) are reported, or every node when
   none is selected.
2. ``driver-not-ready``: the driver pod is missing or not Ready (its containers' state, last
   termination and the last probe failure), when gpustack installs the driver.
3. ``toolkit-not-ready``: the same for the container toolkit.
4. ``device-plugin-missing`` / ``device-plugin-crashloop``: no plugin pod, or one restarting.
5. ``allocatable-missing``: the node does not offer a resource its plugin config advertises.
6. ``mig-not-applied``: fewer MIG devices than ``gpus.mig`` x ``perNode`` (mixed strategy).

Each node gets its first failing step only: the later ones follow from it (no driver, no
toolkit, no plugin, no resource). Missing pods are explained by the DaemonSet: a node taint its
pods do not tolerate, or how many it schedules.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack import components
from gpustack.doctor.finding import Diagnosis
from gpustack.doctor.state import (
    JSON,
    ClusterState,
    events_for,
    get,
    items,
    labels,
    mapping,
    name,
    pod_ready,
)
from gpustack.doctor.taints import untolerated
from gpustack.lint.quantity import quantity
from gpustack.profile import derive
from gpustack.profile.model import Profile, node_config_profile

COMPONENT = "app.kubernetes.io/component"
PART_OF = "app.kubernetes.io/part-of"


def stages() -> tuple[tuple[str, str, str], ...]:
    """(component label, check ID, what it is) of the plain readiness stages, in the order the
    stack starts on a node: the registry rows with a ``readiness`` (the plugin's excepted)."""
    return tuple(
        (c.name, r.check, r.what) for c, r in components.readiness_stages() if not r.plugin
    )


def plugin_component() -> str:
    """The component whose readiness is the device plugin's stage (its registry row)."""
    return next(c.name for c, r in components.readiness_stages() if r.plugin)


def looks_like_gpu_node(node: JSON) -> bool:
    keys = [*labels(node), *map(str, mapping(node, "status", "capacity"))]
    return any("nvidia.com/" in k or "pci-10de" in k for k in keys)


def stack_pods(state: ClusterState, profile: Profile, component: str, node: str) -> list[JSON]:
    ns = profile.cluster.namespace
    return [
        p
        for p in state.pods
        if get(p, "metadata", "namespace") == ns
        and labels(p).get(COMPONENT) == component
        and labels(p).get(PART_OF) == "gpustack"
        and "mps" not in labels(p).get("app.kubernetes.io/name", "")
        and get(p, "spec", "nodeName") == node
    ]


def _container_states(pod: JSON) -> list[str]:
    out = []
    statuses = [
        *items(pod, "status", "initContainerStatuses"),
        *items(pod, "status", "containerStatuses"),
    ]
    for cs in statuses:
        if not isinstance(cs, dict) or cs.get("ready"):
            continue
        now = mapping(cs, "state")
        if "waiting" in now:
            what = str(get(now, "waiting", "reason") or "waiting")
        elif "terminated" in now:
            t = mapping(now, "terminated")
            what = f"terminated: exit {t.get('exitCode')} ({t.get('reason') or 'Error'})"
        else:
            what = "running, not ready"
        last = get(cs, "lastState", "terminated")
        if isinstance(last, dict):
            what += f", last exit {last.get('exitCode')} ({last.get('reason') or 'Error'})"
        restarts = cs.get("restartCount") or 0
        if restarts:
            what += f", {restarts} restarts"
        out.append(f"{cs.get('name')}: {what}")
    return out


def describe(state: ClusterState, pod: JSON) -> str:
    """A pod's trouble in one line: each unready container, and the last probe failure."""
    parts = _container_states(pod) or [f"phase {get(pod, 'status', 'phase') or 'unknown'}"]
    probes = [e for e in events_for(state, "Pod", name(pod)) if e.get("reason") in ("Unhealthy",)]
    if probes:
        parts.append(f"last probe: {str(probes[-1].get('message', '')).strip()}")
    return "; ".join(parts)


def crash_looping(pod: JSON) -> bool:
    for cs in [
        *items(pod, "status", "initContainerStatuses"),
        *items(pod, "status", "containerStatuses"),
    ]:
        if get(cs, "state", "waiting", "reason") == "CrashLoopBackOff":
            return True
    return False


def _why_missing(state: ClusterState, profile: Profile, component: str, node: JSON) -> str:
    ns = profile.cluster.namespace
    sets = [
        d
        for d in state.daemonsets
        if get(d, "metadata", "namespace") == ns and labels(d).get(COMPONENT) == component
    ]
    if not sets:
        return f"no {component} DaemonSet in namespace {ns} (is dist/ synced?)"
    for ds in sets:
        tolerations = items(ds, "spec", "template", "spec", "tolerations")
        blocked = untolerated(node, tolerations)
        if blocked:
            return (
                f"DaemonSet {name(ds)} does not tolerate the node's taint {blocked[0]} "
                "(add it to cluster.tolerations)"
            )
    ds = sets[0]
    desired = get(ds, "status", "desiredNumberScheduled")
    ready = get(ds, "status", "numberReady")
    return f"DaemonSet {name(ds)} schedules {desired} pods, {ready} ready"


def node_view(profile: Profile, node: JSON) -> Profile:
    """The profile as this node's plugin config sees it (its node config, if labelled)."""
    chosen = labels(node).get(profile.device_plugin.node_config_label)
    for nc in profile.device_plugin.node_configs:
        if nc.name == chosen:
            return node_config_profile(profile, nc)
    return profile


def diagnose_node(state: ClusterState, profile: Profile, node: JSON) -> Diagnosis | None:
    subject = f"node/{name(node)}"
    ns = profile.cluster.namespace
    node_labels = labels(node)
    missing = [(k, v) for k, v in profile.cluster.node_selector if node_labels.get(k) != v]
    if missing:
        k, v = missing[0]
        return Diagnosis(
            subject,
            "node-not-selected",
            f"label {k}={v} is missing (cluster.nodeSelector), so no part of the GPU stack "
            "runs on this node",
            f"kubectl label node {name(node)} {k}={v}",
        )
    enabled = {c.name for c in components.enabled(profile)}
    for component, check, what in stages():
        if component not in enabled:
            continue
        pods = stack_pods(state, profile, component, name(node))
        if not pods:
            return Diagnosis(
                subject,
                check,
                f"no {what} pod on this node: {_why_missing(state, profile, component, node)}",
                f"kubectl -n {ns} get daemonsets -l {COMPONENT}={component}",
            )
        if not pod_ready(pods[0]):
            return Diagnosis(
                subject,
                check,
                f"{what} pod {name(pods[0])} is not ready: {describe(state, pods[0])}",
                f"kubectl -n {ns} logs {name(pods[0])} --all-containers",
            )
    plugin = plugin_component()
    if plugin in enabled:
        pods = stack_pods(state, profile, plugin, name(node))
        if not pods:
            return Diagnosis(
                subject,
                "device-plugin-missing",
                f"no device plugin pod on this node: {_why_missing(state, profile, plugin, node)}",
                f"kubectl -n {ns} get daemonsets -l {COMPONENT}={plugin}",
            )
        crashing = crash_looping(pods[0])
        if crashing or not pod_ready(pods[0]):
            # --previous only where a container has died before: else kubectl has no such log
            return Diagnosis(
                subject,
                "device-plugin-crashloop" if crashing else "device-plugin-not-ready",
                f"device plugin pod {name(pods[0])} is not ready: {describe(state, pods[0])}",
                f"kubectl -n {ns} logs {name(pods[0])} --all-containers"
                + (" --previous" if crashing else ""),
            )
    return _resources(profile, node)


def _resources(profile: Profile, node: JSON) -> Diagnosis | None:
    subject = f"node/{name(node)}"
    view = node_view(profile, node)
    allocatable = mapping(node, "status", "allocatable")
    mig = view.device_plugin.mig_strategy == "mixed" and bool(view.gpus.mig)
    for resource in derive.advertised_resources(view):
        if mig and resource.startswith(derive.MIG_RESOURCE_PREFIX):
            continue
        if mig and resource == view.device_plugin.resource_name:
            continue  # every GPU split into MIG devices: no whole GPU left to offer
        amount = quantity(allocatable.get(resource))
        if amount is None or amount <= 0:
            shown = "missing" if amount is None else "0"
            return Diagnosis(
                subject,
                "allocatable-missing",
                f"allocatable {resource} is {shown}, though the plugin pods are ready",
                "the plugin found no GPU or did not register with the kubelet: read its log "
                "and check `nvidia-smi` on the node",
            )
    if mig:
        for profile_name, per_gpu in view.gpus.mig:
            resource = f"{derive.MIG_RESOURCE_PREFIX}{profile_name}"
            want = per_gpu * view.gpus.per_node
            have = quantity(allocatable.get(resource)) or 0
            if have < want:
                return Diagnosis(
                    subject,
                    "mig-not-applied",
                    f"allocatable {resource} is {have}, but gpus.mig x perNode is {want}: the "
                    "MIG layout is not applied",
                    "create the layout on the node (nvidia-smi mig -cgi ... -C, or NVIDIA's "
                    "mig-parted), then delete the device plugin pod to re-register",
                )
    return None


def diagnose_nodes(state: ClusterState, profile: Profile) -> Iterator[Diagnosis]:
    selector = dict(profile.cluster.node_selector)
    selected = [n for n in state.nodes if selector.items() <= labels(n).items()]
    for node in state.nodes:
        unselected = not selector.items() <= labels(node).items()
        if unselected and selected and not looks_like_gpu_node(node):
            continue  # a CPU node: none of the stack's business
        found = diagnose_node(state, profile, node)
        if found is not None:
            yield found
