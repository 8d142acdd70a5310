"""The acceptance run's Kubernetes objects for one profile, as plain dicts.

In the stack's namespace, labelled ``app.kubernetes.io/component: acceptance`` and, per pod,
``gpustack.dev/accept-check`` (the check it prints):

- ConfigMap ``gpustack-accept-harness``: the two harness scripts (:mod:`.harness`);
- per plugin config, ``gpustack-accept-devices[-<config>]``: one pod per node (the profile's
  node selector and tolerations, the stack's runtime class), requesting every device the node
  advertises;
- where whole GPUs are measured, ``gpustack-accept-allreduce[-<config>]``: one pod per node,
  ``torchrun --standalone`` over its GPUs;
- with two nodes or more, Indexed Job ``gpustack-accept-allreduce-nodes[-<config>]``: one pod
  per node in one process group (rank 0 found through a headless Service of the same name, as
  the multinode-ddp example does), and a NetworkPolicy letting its pods reach each other.

Where a state names the nodes (:class:`.expect.Host`), the per-node checks are one Job per
node, ``<name>-<i>`` (``i``: the node's place in the sorted names, its name in the
``gpustack.dev/accept-node`` annotation), pinned by ``nodeSelector`` on
``kubernetes.io/hostname``: each Job requests every GPU of its node, so all of them queue for
the same nodes when applied at once, and no placement is left to the scheduler, whose required
pod anti-affinity does not count a sibling pod that already finished (so an Indexed Job's
queued pod may land where its sibling ran, checking one node twice and another never). The
multi-node Job stays one Indexed Job (its ranks must be one Job's pods, to find rank 0), its
required node affinity naming exactly those nodes; anti-affinity holds there, because no rank
finishes before every rank has joined. Without names (``--nodes``) every check is one Indexed
Job with that anti-affinity: exact only when applied one Job at a time on idle nodes.

Pods get no API access (``automountServiceAccountToken: false``), run as nobody with a
read-only root filesystem, and print one ``GPUSTACK-ACCEPT`` line each (:mod:`.report`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpustack.accept.expect import Group, Host
from gpustack.kube.labels import COMPONENT_LABEL, HOSTNAME_LABEL, NAME_LABEL, PART_OF, PART_OF_LABEL
from gpustack.profile import derive
from gpustack.profile.model import Profile
from gpustack.profile.model.workloads import Example
from gpustack.torchrun import RENDEZVOUS_PORT, torchrun

HARNESS = "gpustack-accept-harness"
HARNESS_DIR = "/opt/gpustack-accept"
SCRIPTS = ("devices.py", "allreduce.py")
COMPONENT = "acceptance"
JOB_LABEL = "gpustack.dev/accept-job"
#: Pod label: the check the pod prints (its GPUSTACK-ACCEPT ``check``), across its Jobs.
CHECK_LABEL = "gpustack.dev/accept-check"
#: Job annotation: the node a pinned Job checks (node names may exceed a label value).
NODE_ANNOTATION = "gpustack.dev/accept-node"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
#: Memory for NCCL's shared-memory transport (the runtime's 64 MiB /dev/shm is too small).
SHM_SIZE = "8Gi"
DEADLINE_SECONDS = 1800
NOBODY = 65534

Obj = dict[str, Any]


def default_image(profile: Profile) -> str:
    """The examples' PyTorch image (rehomed by ``cluster.imageRegistry``, as they are)."""
    if profile.workloads.examples:
        return profile.workloads.examples[0].image
    from dataclasses import replace

    from gpustack.profile.model import with_image_registry

    shown = replace(profile, workloads=replace(profile.workloads, examples=(Example(name="x"),)))
    return with_image_registry(shown).workloads.examples[0].image


def _labels(job: str | None = None, check: str | None = None) -> dict[str, str]:
    found = {
        NAME_LABEL: "gpustack-accept",
        COMPONENT_LABEL: COMPONENT,
        PART_OF_LABEL: PART_OF,
    }
    if job:
        found[JOB_LABEL] = job
    if check:
        found[CHECK_LABEL] = check
    return found


def _meta(name: str, ns: str, job: str | None = None) -> Obj:
    return {"name": name, "namespace": ns, "labels": _labels(job)}


def _tolerations(profile: Profile) -> list[Obj]:
    out: list[Obj] = []
    for t in profile.cluster.tolerations:
        item: Obj = {"operator": t.operator}
        for key, value in (
            ("key", t.key),
            ("value", t.value),
            ("effect", t.effect),
            ("tolerationSeconds", t.toleration_seconds),
        ):
            if value is not None:
                item[key] = value
        out.append(item)
    for taint in profile.cluster.node_taints:
        item = {"key": taint.key, "effect": taint.effect}
        item.update(
            {"operator": "Equal", "value": taint.value} if taint.value else {"operator": "Exists"}
        )
        if item not in out:
            out.append(item)
    return out


def _env(values: dict[str, str], multinode: bool = False) -> list[Obj]:
    env: list[Obj] = [
        {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"},
        {"name": "HOME", "value": "/tmp"},
    ]
    if multinode:
        env.append(
            {
                "name": "NODE_RANK",
                "valueFrom": {
                    "fieldRef": {"fieldPath": f"metadata.annotations['{COMPLETION_INDEX}']"}
                },
            }
        )
    env += [{"name": k, "value": v} for k, v in values.items()]
    return env


def _container(
    name: str, image: str, command: list[str], env: list[Obj], limits: dict[str, int]
) -> Obj:
    return {
        "name": name,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": command,
        "env": env,
        "resources": {"limits": {k: str(v) for k, v in limits.items()}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "volumeMounts": [
            {"name": "harness", "mountPath": HARNESS_DIR, "readOnly": True},
            {"name": "tmp", "mountPath": "/tmp"},
            {"name": "dshm", "mountPath": "/dev/shm"},
        ],
    }


def _node_affinity(group: Group, profile: Profile, hosts: tuple[Host, ...]) -> Obj | None:
    """Required node affinity: the top-level config's pods avoid the node configs' nodes; a
    gang over named nodes gets exactly those."""
    dp = profile.device_plugin
    expressions: list[Obj] = []
    if group.config is None and dp.node_configs:
        others = sorted(nc.name for nc in dp.node_configs)
        expressions.append({"key": dp.node_config_label, "operator": "NotIn", "values": others})
    if hosts:
        names = sorted({h.hostname for h in hosts})
        expressions.append({"key": HOSTNAME_LABEL, "operator": "In", "values": names})
    if not expressions:
        return None
    return {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": expressions}]
        }
    }


def _placement(
    profile: Profile, group: Group, name: str, host: Host | None
) -> tuple[dict[str, str], Obj]:
    """The pods' node selector and affinity: pinned to ``host``, or one pod per node of the
    group (anti-affinity; a gang's nodes named when the group names them)."""
    selector = dict(profile.cluster.node_selector)
    if group.config is not None:
        selector[profile.device_plugin.node_config_label] = group.config
    affinity: Obj = {}
    if host is not None:
        selector[HOSTNAME_LABEL] = host.hostname
    else:
        affinity["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {JOB_LABEL: name}},
                    "topologyKey": HOSTNAME_LABEL,
                }
            ]
        }
    nodes = _node_affinity(group, profile, group.hosts if host is None else ())
    if nodes is not None:
        affinity["nodeAffinity"] = nodes
    return selector, affinity


def _pod_spec(
    profile: Profile,
    group: Group,
    name: str,
    containers: list[Obj],
    host: Host | None,
    **extra: Any,
) -> Obj:
    """The pod of a check's Job: unprivileged, placed by :func:`_placement`, the harness mounted."""
    selector, affinity = _placement(profile, group, name, host)
    runtime = derive.runtime_classes(group.view)
    pod: Obj = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "nodeSelector": selector,
        **({"affinity": affinity} if affinity else {}),
        "tolerations": _tolerations(profile),
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": NOBODY,
            "runAsGroup": NOBODY,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": containers,
        "volumes": [
            {"name": "harness", "configMap": {"name": HARNESS}},
            {"name": "tmp", "emptyDir": {}},
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": SHM_SIZE}},
        ],
        **extra,
    }
    if runtime:
        pod["runtimeClassName"] = runtime[0]
    if profile.cluster.image_pull_secrets:
        pod["imagePullSecrets"] = [{"name": s} for s in profile.cluster.image_pull_secrets]
    return pod


def _job(
    profile: Profile,
    group: Group,
    name: str,
    check: str,
    containers: list[Obj],
    *,
    host: Host | None = None,
    **extra: Any,
) -> Obj:
    """One Job of ``check``: pinned to ``host`` (one pod), or one pod on each of the group's
    nodes (anti-affinity; a gang's nodes named when the group names them)."""
    pod = _pod_spec(profile, group, name, containers, host, **extra)
    pods = group.nodes if host is None else 1
    meta = _meta(name, profile.cluster.namespace, name)
    meta["labels"][CHECK_LABEL] = check
    if host is not None:
        meta["annotations"] = {NODE_ANNOTATION: host.name}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "completionMode": "Indexed",
            "completions": pods,
            "parallelism": pods,
            "backoffLimit": 0,
            "activeDeadlineSeconds": DEADLINE_SECONDS,
            "template": {"metadata": {"labels": _labels(name, check)}, "spec": pod},
        },
    }


def _per_node(
    profile: Profile, group: Group, base: str, check: str, containers: list[Obj]
) -> list[Obj]:
    """A per-node check: one Job pinned to each named node, else one Indexed Job."""
    if not group.hosts:
        return [_job(profile, group, base, check, containers)]
    return [
        _job(profile, group, f"{base}-{i}", check, containers, host=host)
        for i, host in enumerate(group.hosts)
    ]


def devices_jobs(profile: Profile, group: Group, image: str) -> list[Obj]:
    name = f"gpustack-accept-devices{group.suffix}"
    check = f"devices{group.suffix}"
    expect = json.dumps(group.expect, sort_keys=True)
    containers = []
    for i in range(group.containers):
        cname = "devices" if group.containers == 1 else f"replica-{i}"
        values = {"GPUSTACK_EXPECT": expect, "GPUSTACK_CHECK": check}
        env = _env({**values, "CONTAINER_NAME": cname})
        command = ["python", f"{HARNESS_DIR}/devices.py"]
        containers.append(_container(cname, image, command, env, dict(group.requests)))
    return _per_node(profile, group, name, check, containers)


def allreduce_command(group: Group, *, nodes: int) -> list[str]:
    """torchrun over the node's GPUs; across ``nodes`` pods with the rendezvous variables."""
    assert group.bandwidth is not None
    gpus = group.view.gpus.per_node
    script = [f"{HARNESS_DIR}/allreduce.py", f"--min-busbw={group.bandwidth.threshold}"]
    check = "allreduce-node" if nodes == 1 else "allreduce-nodes"
    return torchrun([*script, f"--check={check}{group.suffix}"], gpus=gpus, nodes=nodes)


def allreduce_objects(profile: Profile, group: Group, image: str) -> list[Obj]:
    if group.bandwidth is None:
        return []
    ns = profile.cluster.namespace
    limits = {group.requests[0][0]: group.view.gpus.per_node}
    out: list[Obj] = []
    if group.view.gpus.per_node >= 2:
        name = f"gpustack-accept-allreduce{group.suffix}"
        command = allreduce_command(group, nodes=1)
        container = _container("allreduce", image, command, _env({}), limits)
        out += _per_node(profile, group, name, f"allreduce-node{group.suffix}", [container])
    if group.nodes >= 2:
        name = f"gpustack-accept-allreduce-nodes{group.suffix}"
        values = {"MASTER_ADDR": f"{name}-0.{name}.{ns}.svc", "MASTER_PORT": str(RENDEZVOUS_PORT)}
        container = _container(
            "allreduce",
            image,
            allreduce_command(group, nodes=group.nodes),
            _env(values, True),
            limits,
        )
        container["ports"] = [{"containerPort": RENDEZVOUS_PORT, "name": "rendezvous"}]
        check = f"allreduce-nodes{group.suffix}"
        out.append(_job(profile, group, name, check, [container], subdomain=name))
        selector = {JOB_LABEL: name}
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": _meta(name, ns),
                "spec": {
                    "clusterIP": "None",
                    "publishNotReadyAddresses": True,
                    "selector": selector,
                    "ports": [
                        {
                            "name": "rendezvous",
                            "port": RENDEZVOUS_PORT,
                            "targetPort": RENDEZVOUS_PORT,
                        }
                    ],
                },
            }
        )
        out.append(
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": _meta(f"{name}-peers", ns),
                "spec": {
                    "podSelector": {"matchLabels": selector},
                    "policyTypes": ["Ingress"],
                    "ingress": [{"from": [{"podSelector": {"matchLabels": selector}}]}],
                },
            }
        )
    return out


def harness_config_map(profile: Profile) -> Obj:
    here = Path(__file__).parent / "harness"
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta(HARNESS, profile.cluster.namespace),
        "data": {name: (here / name).read_text(encoding="utf-8") for name in SCRIPTS},
    }


def objects(profile: Profile, groups: list[Group], image: str | None = None) -> list[Obj]:
    """Every object of the acceptance run, in the order to apply them."""
    image = image or default_image(profile)
    out = [harness_config_map(profile)]
    for group in groups:
        out += devices_jobs(profile, group, image)
        out += allreduce_objects(profile, group, image)
    return out
