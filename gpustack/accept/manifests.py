"""The acceptance run's Kubernetes objects for one profile, as plain dicts.

In the stack's namespace, labelled ``app.kubernetes.io/component: acceptance``:

- ConfigMap ``gpustack-accept-harness``: the two harness scripts (:mod:`.harness`);
- per plugin config, Indexed Job ``gpustack-accept-devices[-<config>]``: one pod per node
  (required pod anti-affinity on ``kubernetes.io/hostname``, the profile's node selector and
  tolerations, the stack's runtime class), requesting every device the node advertises;
- where whole GPUs are measured, ``gpustack-accept-allreduce[-<config>]``: one pod per node,
  ``torchrun --standalone`` over its GPUs;
- with two nodes or more, ``gpustack-accept-allreduce-nodes[-<config>]``: one pod per node in
  one process group (rank 0 found through a headless Service of the same name, as the
  multinode-ddp example does), and a NetworkPolicy letting its pods reach each other.

Pods get no API access (``automountServiceAccountToken: false``), run as nobody with a
read-only root filesystem, and print one ``GPUSTACK-ACCEPT`` line each (:mod:`.report`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpustack.accept.expect import Group
from gpustack.profile import derive
from gpustack.profile.model import Profile
from gpustack.profile.model.workloads import Example

HARNESS = "gpustack-accept-harness"
HARNESS_DIR = "/opt/gpustack-accept"
SCRIPTS = ("devices.py", "allreduce.py")
COMPONENT = "acceptance"
JOB_LABEL = "gpustack.dev/accept-job"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
RENDEZVOUS_PORT = 29500
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


def _labels(job: str | None = None) -> dict[str, str]:
    found = {
        "app.kubernetes.io/name": "gpustack-accept",
        "app.kubernetes.io/component": COMPONENT,
        "app.kubernetes.io/part-of": "gpustack",
    }
    if job:
        found[JOB_LABEL] = job
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


def _job(profile: Profile, group: Group, name: str, containers: list[Obj], **extra: Any) -> Obj:
    ns = profile.cluster.namespace
    selector = dict(profile.cluster.node_selector)
    dp = profile.device_plugin
    affinity: Obj = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {"matchLabels": {JOB_LABEL: name}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }
    if group.config is not None:
        selector[dp.node_config_label] = group.config
    elif dp.node_configs:
        others = sorted(nc.name for nc in dp.node_configs)
        affinity["nodeAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": dp.node_config_label, "operator": "NotIn", "values": others}
                        ]
                    }
                ]
            }
        }
    runtime = derive.runtime_classes(group.view)
    pod: Obj = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "nodeSelector": selector,
        "affinity": affinity,
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
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _meta(name, ns, name),
        "spec": {
            "completionMode": "Indexed",
            "completions": group.nodes,
            "parallelism": group.nodes,
            "backoffLimit": 0,
            "activeDeadlineSeconds": DEADLINE_SECONDS,
            "template": {"metadata": {"labels": _labels(name)}, "spec": pod},
        },
    }


def devices_job(profile: Profile, group: Group, image: str) -> Obj:
    name = f"gpustack-accept-devices{group.suffix}"
    expect = json.dumps(group.expect, sort_keys=True)
    containers = []
    for i in range(group.containers):
        cname = "devices" if group.containers == 1 else f"replica-{i}"
        values = {"GPUSTACK_EXPECT": expect, "GPUSTACK_CHECK": f"devices{group.suffix}"}
        env = _env({**values, "CONTAINER_NAME": cname})
        command = ["python", f"{HARNESS_DIR}/devices.py"]
        containers.append(_container(cname, image, command, env, dict(group.requests)))
    return _job(profile, group, name, containers)


def allreduce_command(group: Group, *, nodes: int) -> list[str]:
    """torchrun over the node's GPUs; across ``nodes`` pods with the rendezvous variables."""
    assert group.bandwidth is not None
    gpus = group.view.gpus.per_node
    script = [f"{HARNESS_DIR}/allreduce.py", f"--min-busbw={group.bandwidth.threshold}"]
    if nodes == 1:
        return [
            "torchrun",
            "--standalone",
            f"--nproc-per-node={gpus}",
            *script,
            f"--check=allreduce-node{group.suffix}",
        ]
    return [
        "torchrun",
        f"--nnodes={nodes}",
        f"--nproc-per-node={gpus}",
        "--node-rank=$(NODE_RANK)",
        "--master-addr=$(MASTER_ADDR)",
        "--master-port=$(MASTER_PORT)",
        *script,
        f"--check=allreduce-nodes{group.suffix}",
    ]


def allreduce_objects(profile: Profile, group: Group, image: str) -> list[Obj]:
    if group.bandwidth is None:
        return []
    ns = profile.cluster.namespace
    limits = {group.requests[0][0]: group.view.gpus.per_node}
    out: list[Obj] = []
    if group.view.gpus.per_node >= 2:
        name = f"gpustack-accept-allreduce{group.suffix}"
        command = allreduce_command(group, nodes=1)
        out.append(
            _job(profile, group, name, [_container("allreduce", image, command, _env({}), limits)])
        )
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
        out.append(_job(profile, group, name, [container], subdomain=name))
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
        out.append(devices_job(profile, group, image))
        out += allreduce_objects(profile, group, image)
    return out
