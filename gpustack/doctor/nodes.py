"""Per node: why it shows no GPUs, checked in the order the stack comes up.

1. ``node-not-selected``: the node lacks a label of ``cluster.nodeSelector`` (nothing of the
   stack runs there). Only nodes with evidence of an NVIDIA GPU other than the selector itself
   (an NVIDIA PCI device found by Node Feature Discovery, GPU feature discovery's labels,
   NVIDIA capacity) are reported, never CPU nodes: labelling those would put the driver on
   nodes without a GPU. A node label close to the selector's key or value is named (a typo in
   the profile, fixed there, not by relabelling nodes). When no node is selected and none has
   such evidence, one ``cluster`` finding says so.
2. ``driver-not-ready``: the driver pod is missing or not Ready (its containers' state, last
   termination and the last probe failure), when gpustack installs the driver.
3. ``toolkit-not-ready``: the same for the container toolkit.
4. ``device-plugin-missing`` / ``device-plugin-crashloop``: no plugin pod, or one restarting.
5. ``allocatable-missing``: the node does not offer a resource its plugin config advertises.
6. ``mig-not-applied``: fewer MIG devices than ``gpus.mig`` x ``perNode`` (mixed strategy).

Each node gets its first failing step only: the later ones follow from it (no driver, no
toolkit, no plugin, no resource). Missing pods are explained by the DaemonSet: the API server's
refusal of its pods (:mod:`~gpustack.doctor.created`: quota, RuntimeClass, PodSecurity, SCC,
webhook), a node taint its pods do not tolerate, or how many it schedules. MIG trouble points
at gpustack's MIG manager and the node's ``nvidia.com/mig.config`` label.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from gpustack.doctor.created import refusal
from gpustack.doctor.finding import Diagnosis
from gpustack.doctor.taints import untolerated
from gpustack.kube.labels import COMPONENT_LABEL
from gpustack.kube.nodes import looks_like_gpu_node, node_view, stack_pods
from gpustack.kube.quantity import quantity
from gpustack.kube.state import (
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
from gpustack.profile import components, derive
from gpustack.profile import node_label_catalog as catalog
from gpustack.profile.model import Profile


def stages() -> tuple[tuple[str, str, str], ...]:
    """(component label, check ID, what it is) of the plain readiness stages, in the order the
    stack starts on a node: the registry rows with a ``readiness`` (the plugin's excepted)."""
    return tuple(
        (c.name, r.check, r.what) for c, r in components.readiness_stages() if not r.plugin
    )


def plugin_component() -> str:
    """The component whose readiness is the device plugin's stage (its registry row)."""
    return next(c.name for c, r in components.readiness_stages() if r.plugin)


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


def _why_missing(
    state: ClusterState, profile: Profile, component: str, node: JSON
) -> tuple[str, str | None]:
    """Why the component has no pod on the node, and what to do (``None``: list the
    DaemonSets)."""
    ns = profile.cluster.namespace
    sets = [
        d
        for d in state.daemonsets
        if get(d, "metadata", "namespace") == ns and labels(d).get(COMPONENT_LABEL) == component
    ]
    if not sets:
        return f"no {component} DaemonSet in namespace {ns} (is dist/ synced?)", None
    for ds in sets:
        refused = refusal(state, profile, "DaemonSet", ns, name(ds))
        if refused is not None:
            return f"DaemonSet {name(ds)} could not create pods: {refused.cause}", refused.hint
    for ds in sets:
        tolerations = items(ds, "spec", "template", "spec", "tolerations")
        blocked = untolerated(node, tolerations)
        if blocked:
            return (
                f"DaemonSet {name(ds)} does not tolerate the node's taint {blocked[0]} "
                "(add it to cluster.tolerations)"
            ), None
    ds = sets[0]
    desired = get(ds, "status", "desiredNumberScheduled")
    ready = get(ds, "status", "numberReady")
    return f"DaemonSet {name(ds)} schedules {desired} pods, {ready} ready", None


def _missing_pod(
    state: ClusterState, profile: Profile, component: str, node: JSON, check: str, what: str
) -> Diagnosis:
    why, hint = _why_missing(state, profile, component, node)
    selector = f"{COMPONENT_LABEL}={component}"
    return Diagnosis(
        f"node/{name(node)}",
        check,
        f"no {what} pod on this node: {why}",
        hint or f"kubectl -n {profile.cluster.namespace} get daemonsets -l {selector}",
    )


def _close(word: str, candidates: list[str], cutoff: float) -> str | None:
    found = difflib.get_close_matches(word, candidates, n=1, cutoff=cutoff)
    return found[0] if found else None


def not_selected(node: JSON, key: str, value: str) -> Diagnosis:
    """``node-not-selected`` for a GPU node without ``key=value``: the label the node carries
    that is close to it (a typo in the profile), else the label to put on it."""
    subject = f"node/{name(node)}"
    node_labels = labels(node)
    base = (
        f"label {key}={value} is missing (cluster.nodeSelector), so no part of the GPU stack "
        "runs on this node"
    )
    have = node_labels.get(key)
    if have is not None:
        known = catalog.lookup(key)
        allowed = known.values if known is not None and known.values else (have,)
        guess = catalog.suggest_value(value, allowed) if value not in allowed else None
        if guess == have or _close(value, [have], 0.5):
            return Diagnosis(
                subject,
                "node-not-selected",
                f'{base}; the node has {key}={have}: did you mean "{have}"?',
                f'fix cluster.nodeSelector in the profile: {key}: "{have}"',
            )
    near = _close(key, [k for k in node_labels if k != key], 0.8)
    if near is not None:
        return Diagnosis(
            subject,
            "node-not-selected",
            f"{base}; the node has {near}={node_labels[near]}: did you mean {near}?",
            f'fix cluster.nodeSelector in the profile: {near}: "{node_labels[near]}"',
        )
    known_key = catalog.suggest(key) if catalog.lookup(key) is None else None
    if known_key is not None:
        return Diagnosis(
            subject,
            "node-not-selected",
            f"{base}; no labeller writes {key}: did you mean {known_key}?",
            "fix cluster.nodeSelector in the profile, or "
            f"kubectl label node {name(node)} {key}={value}",
        )
    return Diagnosis(
        subject,
        "node-not-selected",
        base,
        f"kubectl label node {name(node)} {key}={value}",
    )


def diagnose_node(state: ClusterState, profile: Profile, node: JSON) -> Diagnosis | None:
    subject = f"node/{name(node)}"
    ns = profile.cluster.namespace
    node_labels = labels(node)
    missing = [(k, v) for k, v in profile.cluster.node_selector if node_labels.get(k) != v]
    if missing:
        return not_selected(node, *missing[0])
    enabled = {c.name for c in components.enabled(profile)}
    for component, check, what in stages():
        if component not in enabled:
            continue
        pods = stack_pods(state, profile, component, name(node))
        if not pods:
            return _missing_pod(state, profile, component, node, check, what)
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
            return _missing_pod(
                state, profile, plugin, node, "device-plugin-missing", "device plugin"
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
    return _resources(state, profile, node)


def _resources(state: ClusterState, profile: Profile, node: JSON) -> Diagnosis | None:
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
                why, hint = _mig_manager(state, profile, node)
                return Diagnosis(
                    subject,
                    "mig-not-applied",
                    f"allocatable {resource} is {have}, but gpus.mig x perNode is {want}: the "
                    f"MIG layout is not applied; {why}",
                    hint,
                )
    return None


def mig_config_name(profile: Profile, node: JSON) -> str:
    """The MIG manager's config for this node: its node config's own layout, else ``default``."""
    chosen = labels(node).get(profile.device_plugin.node_config_label)
    layouts = derive.mig_layouts(profile)
    return chosen if chosen in layouts and chosen != derive.MIG_ALL_DISABLED else derive.MIG_DEFAULT


def _mig_manager(state: ClusterState, profile: Profile, node: JSON) -> tuple[str, str]:
    """Why gpustack's MIG manager has not applied the layout on the node, and what to do: it
    applies the config the node's ``nvidia.com/mig.config`` label names and reports in
    ``nvidia.com/mig.config.state``."""
    ns = profile.cluster.namespace
    node_name = name(node)
    config_label, state_label = derive.MIG_CONFIG_LABEL, derive.MIG_STATE_LABEL
    want = mig_config_name(profile, node)
    if not derive.mig_manager_enabled(profile):
        return (
            "gpustack's MIG manager is off (migManager.enabled: false)",
            "set migManager.enabled: true and label the node "
            f"{config_label}={want}, or apply the layout with mig-parted yourself",
        )
    manager = components.for_section("mig_manager").name
    pods = stack_pods(state, profile, manager, node_name)
    if not pods:
        why, hint = _why_missing(state, profile, manager, node)
        return f"no MIG manager pod on this node: {why}", hint or (
            f"kubectl -n {ns} get daemonsets -l {COMPONENT_LABEL}={manager}"
        )
    node_labels = labels(node)
    have = node_labels.get(config_label)
    relabel = f"kubectl label node {node_name} {config_label}={want} --overwrite"
    if have != want:
        shown = f"{config_label}={have}" if have is not None else f"no {config_label} label"
        return (
            f"the node has {shown}; the MIG manager applies the config that label names "
            f"({want} holds this layout)",
            relabel,
        )
    progress = node_labels.get(state_label)
    logs = f"kubectl -n {ns} logs {name(pods[0])} --all-containers"
    if progress == "failed":
        return (
            f"the MIG manager failed to apply {config_label}={want} ({state_label}=failed)",
            f"{logs}; fix the cause, then relabel to retry: {relabel}",
        )
    return (
        f"the MIG manager has not finished applying {config_label}={want} "
        f"({state_label}={progress or 'unset'})",
        f"{logs}; the device plugin re-registers the MIG devices once it is done",
    )


def diagnose_nodes(state: ClusterState, profile: Profile) -> Iterator[Diagnosis]:
    selector = dict(profile.cluster.node_selector)
    ignore = frozenset(selector)
    selected = [n for n in state.nodes if selector.items() <= labels(n).items()]
    gpu_nodes = [n for n in state.nodes if looks_like_gpu_node(n, ignore)]
    if state.nodes and not selected and not gpu_nodes:
        wanted = ", ".join(f"{k}={v}" for k, v in selector.items())
        yield Diagnosis(
            "cluster",
            "node-not-selected",
            f"no node has {wanted} (cluster.nodeSelector), and none shows an NVIDIA GPU "
            "(Node Feature Discovery's feature.node.kubernetes.io/pci-10de.present, GPU feature "
            "discovery's nvidia.com/gpu.* labels, nvidia.com capacity)",
            "check cluster.nodeSelector for a typo, and that Node Feature Discovery runs; then "
            "label only the GPU nodes",
        )
        return
    for node in state.nodes:
        unselected = not selector.items() <= labels(node).items()
        if unselected and not looks_like_gpu_node(node, ignore):
            continue  # a CPU node: none of the stack's business
        found = diagnose_node(state, profile, node)
        if found is not None:
            yield found
