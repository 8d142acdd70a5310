"""The profile JSON Schema, built in Python so enums and defaults come from one place.

``schemas/profile.schema.json`` is this module's output (``python -m gpustack.profile.schema``
rewrites it; a test fails when the file is stale), and so is ``profile-base.schema.json``: the
same schema without required keys, for the modeline of ``extends`` bases, which are not whole
profiles (a base without ``metadata`` would otherwise be marked wrong in every editor).
Product and architecture enums come from :mod:`gpustack.profile.catalog`; defaults equal
:mod:`gpustack.profile.model` (tested).
The schema keeps to the subset every yaml-language-server understands: ``enum``, ``pattern``,
``additionalProperties``, ``$defs`` and one ``anyOf`` (a string-or-list field).
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from gpustack.profile import catalog, model

SCHEMA_ID = "https://gpustack.dev/schemas/profile.schema.json"
BASE_SCHEMA_ID = "https://gpustack.dev/schemas/profile-base.schema.json"
#: Where the committed copies live, relative to the repository root.
SCHEMA_FILE = Path("schemas") / "profile.schema.json"
BASE_SCHEMA_FILE = Path("schemas") / "profile-base.schema.json"
REFERENCE_FILE = Path("schemas") / "profile.md"

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
DRIVER_VERSION = r"^\d{3}\.\d+(\.\d+)?$"
CUDA_VERSION = r"^\d{2}\.\d$"
IMAGE = r"^[a-z0-9]+([._-][a-z0-9]+)*(:\d+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$"
IMAGE_REF = (
    r"^[a-z0-9]+([._-][a-z0-9]+)*(:\d+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*"
    r"(:[\w][\w.-]{0,127})?(@sha256:[a-f0-9]{64})?$"
)
ABS_PATH = r"^/"
LABEL_KEY = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
#: Node config names become part of object names: nvidia-device-plugin-config-<name> <= 63.
NODE_CONFIG_NAME_MAX = 35
MAX_NODE_CONFIGS = 16
QUANTITY = r"^[+]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[numkMGTPE]i?|Ki|Mi|Gi|Ti|Pi|Ei)?$"

Schema = dict[str, Any]


def prop(title: str, description: str, kind: str | None = None, **extra: Any) -> Schema:
    """One property: title and description first, so the JSON reads like documentation."""
    out: Schema = {"title": title, "description": description}
    if kind is not None:
        out["type"] = kind
    out.update(extra)
    return out


def obj(title: str, description: str, properties: dict[str, Schema], **extra: Any) -> Schema:
    """A closed object: unknown keys are errors, which is how typos get caught."""
    return prop(
        title,
        description,
        "object",
        additionalProperties=False,
        properties=properties,
        **extra,
    )


def string_map(title: str, description: str, **extra: Any) -> Schema:
    return prop(title, description, "object", additionalProperties={"type": "string"}, **extra)


def pull_policy() -> Schema:
    return prop(
        "Image pull policy",
        "When the kubelet pulls the image.",
        "string",
        enum=["Always", "IfNotPresent", "Never"],
        default="IfNotPresent",
    )


def env() -> Schema:
    return prop(
        "Extra environment",
        "Environment variables added to the component's main container, in order.",
        "array",
        items={"$ref": "#/$defs/envVar"},
        default=[],
    )


def resources() -> Schema:
    return prop(
        "Resources",
        "CPU and memory requests and limits of the main container; empty sets none.",
        "object",
        additionalProperties=False,
        properties={
            "requests": prop(
                "Requests",
                "Resource name to Kubernetes quantity.",
                "object",
                additionalProperties={"$ref": "#/$defs/quantity"},
                default={},
                examples=[{"cpu": "100m", "memory": "128Mi"}],
            ),
            "limits": prop(
                "Limits",
                "Resource name to Kubernetes quantity.",
                "object",
                additionalProperties={"$ref": "#/$defs/quantity"},
                default={},
                examples=[{"memory": "512Mi"}],
            ),
        },
        default={},
    )


def enabled(what: str, default: bool = True) -> Schema:
    return prop("Enabled", what, "boolean", default=default)


def _defs() -> Schema:
    return {
        "envVar": obj(
            "Environment variable",
            "One environment variable for a container.",
            {
                "name": prop(
                    "Name",
                    "Variable name.",
                    "string",
                    pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
                    examples=["NVIDIA_DRIVER_CAPABILITIES"],
                ),
                "value": prop("Value", "Variable value.", "string", default=""),
            },
            required=["name"],
        ),
        "quantity": prop(
            "Quantity",
            "A Kubernetes resource quantity, written as a string.",
            "string",
            pattern=QUANTITY,
            examples=["500m", "2Gi"],
        ),
        "toleration": obj(
            "Toleration",
            "A Kubernetes toleration, as in a pod spec.",
            {
                "key": prop("Key", "Taint key; empty with Exists matches every taint.", "string"),
                "operator": prop(
                    "Operator",
                    "Exists ignores the value; Equal compares it.",
                    "string",
                    enum=["Exists", "Equal"],
                    default="Exists",
                ),
                "value": prop("Value", "Taint value for the Equal operator.", "string"),
                "effect": prop(
                    "Effect",
                    "Taint effect to tolerate; unset tolerates all effects.",
                    "string",
                    enum=["NoSchedule", "PreferNoSchedule", "NoExecute"],
                ),
                "tolerationSeconds": prop(
                    "Toleration seconds",
                    "How long a NoExecute taint is tolerated before eviction.",
                    "integer",
                    minimum=0,
                ),
            },
        ),
    }


def _metadata() -> Schema:
    return obj(
        "Metadata",
        "Identity of the profile; one profile describes one cluster.",
        {
            "name": prop(
                "Name",
                "Cluster name (DNS-1123 label); output goes to dist/clusters/<name>/.",
                "string",
                pattern=DNS_LABEL,
                maxLength=63,
                examples=["lab-1gpu", "h100-prod-east"],
            ),
            "labels": string_map(
                "Labels",
                "Labels copied onto every generated object.",
                default={},
                examples=[{"team": "ml-platform"}],
            ),
        },
        required=["name"],
        examples=[{"name": "lab-1gpu"}],
    )


def _runtime() -> Schema:
    return obj(
        "Container runtime",
        "The nodes' container runtime; unset paths are derived from name and distribution.",
        {
            "name": prop(
                "Runtime",
                "Container runtime on the GPU nodes.",
                "string",
                enum=["containerd", "crio"],
                default="containerd",
            ),
            "distribution": prop(
                "Distribution",
                "Kubernetes distribution; it decides where the runtime keeps config and socket. "
                "On k3s and RKE2 the toolkit edits the generated config.toml (never "
                "config.toml.tmpl); they regenerate it on restart and keep the nvidia runtimes "
                "they find, but not setAsDefault.",
                "string",
                enum=["generic", "k3s", "rke2", "microk8s", "k0s"],
                default="generic",
            ),
            "version": prop(
                "Runtime version",
                "The runtime's own version; containerd 2.x reads its config file, not a dump.",
                "string",
                pattern=r"^\d+\.\d+(\.\d+)?$",
                examples=["2.0", "1.7.27"],
            ),
            "configPath": prop(
                "Config path",
                "Host path of the runtime's main config (derived when unset).",
                "string",
                pattern=ABS_PATH,
                examples=["/etc/containerd/config.toml"],
            ),
            "dropInConfigPath": prop(
                "Drop-in config path",
                "Host path of the drop-in file the toolkit writes (derived when unset).",
                "string",
                pattern=ABS_PATH,
                examples=["/etc/containerd/conf.d/99-nvidia.toml"],
            ),
            "socketPath": prop(
                "Socket path",
                "Host path of the runtime socket (derived when unset).",
                "string",
                pattern=ABS_PATH,
                examples=["/run/containerd/containerd.sock"],
            ),
            "configSource": prop(
                "Config source",
                "Where the toolkit reads the current config: the runtime's dump command, the "
                "file, or both in order (derived from the runtime version when unset).",
                "array",
                items={"type": "string", "enum": ["command", "file"]},
                minItems=1,
                uniqueItems=True,
                examples=[["file"], ["command", "file"]],
            ),
            "restartMode": prop(
                "Restart mode",
                "How the toolkit makes the runtime reload: a signal, systemd, or not at all "
                "(derived when unset: signal for containerd, systemd for CRI-O, which cannot be "
                "restarted with a signal).",
                "string",
                enum=["signal", "systemd", "none"],
                examples=["systemd"],
            ),
        },
        default={},
    )


def _cluster() -> Schema:
    return obj(
        "Cluster",
        "Where the stack runs: Kubernetes version, namespace and the GPU nodes.",
        {
            "kubernetesVersion": prop(
                "Kubernetes version",
                "Kubernetes minor version of the cluster, quoted (supported: "
                f"{model.SUPPORTED_KUBERNETES[0]} to {model.SUPPORTED_KUBERNETES[-1]}).",
                "string",
                pattern=r"^1\.\d+$",
                default="1.33",
                examples=["1.33"],
            ),
            "namespace": prop(
                "Namespace",
                "Namespace for all GPU stack components.",
                "string",
                pattern=DNS_LABEL,
                maxLength=63,
                default="gpustack-system",
                examples=["gpu-operator"],
            ),
            "nodeSelector": string_map(
                "Node selector",
                "Labels that select the GPU nodes for the driver, toolkit and plugin.",
                default=dict(model.DEFAULT_NODE_SELECTOR),
                examples=[{"nvidia.com/gpu.present": "true"}],
            ),
            "tolerations": prop(
                "Tolerations",
                "Tolerations of the GPU stack pods (replaces the default list when given).",
                "array",
                items={"$ref": "#/$defs/toleration"},
                default=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            ),
            "priorityClassName": prop(
                "Priority class",
                "Priority class of the GPU stack pods.",
                "string",
                default="system-node-critical",
            ),
            "imagePullSecrets": prop(
                "Image pull secrets",
                "Names of existing Secrets used to pull the stack's images.",
                "array",
                items={"type": "string", "pattern": DNS_SUBDOMAIN},
                default=[],
                examples=[["ngc-registry"]],
            ),
            "runtime": _runtime(),
            "kubeletRootDir": prop(
                "Kubelet root directory",
                "The kubelet's --root-dir on the GPU nodes; the device plugin registers in "
                "its device-plugins folder (derived from runtime.distribution when unset: "
                "/var/lib/kubelet, /var/lib/k0s/kubelet on k0s, "
                "/var/snap/microk8s/common/var/lib/kubelet on MicroK8s).",
                "string",
                pattern=ABS_PATH,
                examples=["/var/lib/kubelet", "/var/lib/k0s/kubelet"],
            ),
        },
        default={},
    )


def _driver() -> Schema:
    return obj(
        "Driver",
        "The NVIDIA driver: installed by a driver DaemonSet, or already on the host.",
        {
            "enabled": enabled("Install the driver with a DaemonSet; false: it is on the host."),
            "version": prop(
                "Driver version",
                "Driver version (also when preinstalled): compatibility rules check it.",
                "string",
                pattern=DRIVER_VERSION,
                default="580.105.08",
                examples=["580.105.08", "570.133.20"],
            ),
            "image": prop(
                "Driver image",
                "Driver image repository, without a tag.",
                "string",
                pattern=IMAGE,
                default="nvcr.io/nvidia/driver",
            ),
            "osTag": prop(
                "OS tag",
                "Node OS suffix of the driver image tag (<version>-<osTag>).",
                "string",
                pattern=r"^[a-z0-9][a-z0-9.]*$",
                default="ubuntu24.04",
                examples=["ubuntu22.04", "rhel9.6"],
            ),
            "digest": prop(
                "Image digest",
                "Pin the driver image by digest; wins over the tag.",
                "string",
                pattern=r"^sha256:[a-f0-9]{64}$",
            ),
            "kernelModuleType": prop(
                "Kernel module type",
                "open or proprietary kernel modules; auto lets the driver pick.",
                "string",
                enum=["auto", "open", "proprietary"],
                default="auto",
            ),
            "usePrecompiled": prop(
                "Precompiled",
                "Use a precompiled driver image tagged by kernel version (needs kernelVersion).",
                "boolean",
                default=False,
            ),
            "kernelVersion": prop(
                "Kernel version",
                "Node kernel version for precompiled images.",
                "string",
                examples=["6.8.0-60-generic"],
            ),
            "imagePullPolicy": pull_policy(),
            "startupProbe": obj(
                "Startup probe",
                "Time budget for building and loading the kernel module.",
                {
                    "initialDelaySeconds": prop(
                        "Initial delay",
                        "Seconds before the first probe.",
                        "integer",
                        minimum=0,
                        default=60,
                    ),
                    "periodSeconds": prop(
                        "Period", "Seconds between probes.", "integer", minimum=1, default=10
                    ),
                    "timeoutSeconds": prop(
                        "Timeout",
                        "Seconds before one probe times out.",
                        "integer",
                        minimum=1,
                        default=60,
                    ),
                    "failureThreshold": prop(
                        "Failure threshold",
                        "Failed probes before a restart.",
                        "integer",
                        minimum=1,
                        default=120,
                    ),
                },
                default={},
            ),
            "env": env(),
            "resources": resources(),
            "kernelModuleConfigMap": prop(
                "Kernel module ConfigMap",
                "Existing ConfigMap with kernel module parameters (e.g. nvidia.conf).",
                "string",
                pattern=DNS_SUBDOMAIN,
            ),
            "repoConfigMap": prop(
                "Package repository ConfigMap",
                "Existing ConfigMap of package repository files (e.g. a mirror's .list or .repo)"
                " that replace the driver image's own, where the driver container fetches kernel"
                " headers; for clusters without access to the distribution's repositories.",
                "string",
                pattern=DNS_SUBDOMAIN,
                examples=["apt-mirror"],
            ),
            "certConfigMap": prop(
                "CA certificate ConfigMap",
                "Existing ConfigMap of CA certificates (PEM) the driver container trusts when it"
                " fetches packages, e.g. through a TLS-intercepting proxy or from an internal"
                " mirror.",
                "string",
                pattern=DNS_SUBDOMAIN,
                examples=["corporate-ca"],
            ),
            "rdma": obj(
                "GPUDirect RDMA",
                "Load nvidia-peermem in the driver pod so RDMA NICs (InfiniBand, RoCE) read and"
                " write GPU memory directly; needs the Mellanox OFED driver on the nodes.",
                {
                    "enabled": enabled(
                        "Run the nvidia-peermem sidecar in the driver pod (needs enabled driver).",
                        default=False,
                    ),
                    "useHostMofed": prop(
                        "Host MOFED",
                        "The Mellanox OFED driver is installed on the host, not by a driver"
                        " container that publishes it under /run/mellanox/drivers.",
                        "boolean",
                        default=False,
                        examples=[True],
                    ),
                },
                default={},
                examples=[{"enabled": True}, {"enabled": True, "useHostMofed": True}],
            ),
        },
        default={},
    )


def _toolkit() -> Schema:
    return obj(
        "Container toolkit",
        "NVIDIA container toolkit: configures the runtime and the nvidia runtime handler.",
        {
            "enabled": enabled("Deploy the toolkit DaemonSet; false: configured on the host."),
            "version": prop(
                "Toolkit version",
                "Toolkit image tag.",
                "string",
                pattern=r"^v\d+\.\d+\.\d+(-[A-Za-z0-9.]+)?$",
                default="v1.18.1",
                examples=["v1.18.1"],
            ),
            "image": prop(
                "Toolkit image",
                "Toolkit image repository, without a tag.",
                "string",
                pattern=IMAGE,
                default="nvcr.io/nvidia/k8s/container-toolkit",
            ),
            "imagePullPolicy": pull_policy(),
            "installDir": prop(
                "Install directory",
                "Host path for the toolkit binaries.",
                "string",
                pattern=ABS_PATH,
                default="/usr/local/nvidia",
            ),
            "runtimeClass": prop(
                "RuntimeClass",
                "Name of the RuntimeClass (and runtime handler) for GPU pods.",
                "string",
                pattern=DNS_SUBDOMAIN,
                default="nvidia",
            ),
            "setAsDefault": prop(
                "Default runtime",
                "Make the nvidia handler the runtime's default (every pod gets it).",
                "boolean",
                default=False,
            ),
            "cdi": obj(
                "CDI",
                "Container Device Interface: the toolkit writes CDI specs for the runtime.",
                {"enabled": enabled("Generate CDI specs and use CDI device injection.")},
                default={},
            ),
            "env": env(),
            "resources": resources(),
        },
        default={},
    )


def _time_slicing() -> Schema:
    return _replicated_sharing(
        "Time-slicing",
        "Advertise each GPU several times; pods share it by time-slicing (no isolation).",
        fail_requests=model.TimeSlicing.fail_requests_greater_than_one,
    )


def _mps() -> Schema:
    return _replicated_sharing(
        "MPS",
        "Advertise each GPU several times; pods share it through CUDA MPS, each limited to "
        "1/replicas of its memory and compute. NVIDIA's plugin only (implementation: nvidia), "
        "on whole GPUs (nvidia.com/gpu); gpustack adds the MPS control daemon DaemonSet. "
        "Excludes timeSlicing.",
        fail_requests=model.Mps.fail_requests_greater_than_one,
    )


def _replicated_sharing(title: str, description: str, *, fail_requests: bool) -> Schema:
    """The shape NVIDIA's ``sharing.timeSlicing`` and ``sharing.mps`` share."""
    return obj(
        title,
        description,
        {
            "renameByDefault": prop(
                "Rename by default",
                "Advertise shared resources as <name>.shared (e.g. nvidia.com/gpu.shared).",
                "boolean",
                default=False,
            ),
            "failRequestsGreaterThanOne": prop(
                "Fail requests > 1",
                "Reject pods asking for more than one replica (they would not get more GPU).",
                "boolean",
                default=fail_requests,
            ),
            "resources": prop(
                "Shared resources",
                "Which resources are shared and how many times each GPU is advertised.",
                "array",
                minItems=1,
                items=obj(
                    "Shared resource",
                    "One shared resource.",
                    {
                        "name": prop(
                            "Resource",
                            "Resource to share, as the plugin advertises it.",
                            "string",
                            examples=["nvidia.com/gpu"],
                        ),
                        "replicas": prop(
                            "Replicas",
                            "How many pods may share one GPU (2 to 1024).",
                            "integer",
                            minimum=1,
                            maximum=1024,
                            examples=[4],
                        ),
                        "rename": prop(
                            "Rename",
                            "Advertise the shared resource under this name instead (wins over"
                            " renameByDefault). Honoured by gpustack's plugin only: NVIDIA's"
                            " plugin ignores it, so validation rejects it there.",
                            "string",
                            examples=["nvidia.com/gpu-small"],
                        ),
                    },
                    required=["name", "replicas"],
                ),
            ),
        },
        required=["resources"],
    )


def _without_default(sub: Schema) -> Schema:
    """A copy of ``sub`` for an override: no default, since leaving it out inherits."""
    return {k: v for k, v in sub.items() if k != "default"}


def _node_config() -> Schema:
    gpus = _gpus()["properties"]
    return obj(
        "Node config",
        "A named device plugin config for the nodes whose node config label has this name; "
        "each setting given replaces the top-level one there, the others are inherited. "
        "gpustack synthesizes one plugin DaemonSet and ConfigMap per node config.",
        {
            "name": prop(
                "Name",
                "Value of the node config label that selects this config (DNS-1123 label); the "
                "DaemonSet is nvidia-device-plugin-<name>, the ConfigMap "
                "nvidia-device-plugin-config-<name>.",
                "string",
                pattern=DNS_LABEL,
                maxLength=NODE_CONFIG_NAME_MAX,
                examples=["whole-gpu", "dense-inference", "a100-mig"],
            ),
            "migStrategy": prop(
                "MIG strategy",
                "Replaces devicePlugin.migStrategy on these nodes (unset: inherited).",
                "string",
                enum=["none", "single", "mixed"],
                examples=["mixed"],
            ),
            "sharing": obj(
                "Sharing",
                "Replaces devicePlugin.sharing on these nodes (unset: inherited; {}: no "
                "time-slicing or MPS).",
                {"timeSlicing": _time_slicing(), "mps": _mps()},
                examples=[
                    {},
                    {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 8}]}},
                ],
            ),
            "gpus": obj(
                "GPUs",
                "Replaces gpus.mig and gpus.perNode on these nodes (unset: inherited).",
                {
                    "mig": _without_default(gpus["mig"]),
                    "perNode": _without_default(gpus["perNode"]),
                },
                default={},
                examples=[{"mig": {"1g.10gb": 7}}, {"perNode": 4}],
            ),
        },
        required=["name"],
    )


def _device_plugin() -> Schema:
    strategies = ["envvar", "volume-mounts", "cdi-annotations", "cdi-cri"]
    return obj(
        "Device plugin",
        "The kubelet device plugin that advertises GPUs: gpustack's own or NVIDIA's.",
        {
            "enabled": enabled("Deploy the device plugin DaemonSet."),
            "implementation": prop(
                "Implementation",
                "gpustack: the plugin built from this repository; nvidia: k8s-device-plugin.",
                "string",
                enum=["gpustack", "nvidia"],
                default="gpustack",
            ),
            "image": prop(
                "Plugin image",
                "Image repository; defaults per implementation.",
                "string",
                pattern=IMAGE,
                examples=["nvcr.io/nvidia/k8s-device-plugin"],
            ),
            "version": prop(
                "Plugin version",
                "Image tag; defaults per implementation.",
                "string",
                pattern=r"^[\w][\w.-]{0,127}$",
                examples=["v0.18.1", "0.1.0"],
            ),
            "imagePullPolicy": pull_policy(),
            "resourceName": prop(
                "Resource name",
                "Extended resource for whole GPUs.",
                "string",
                default="nvidia.com/gpu",
                examples=["nvidia.com/gpu"],
            ),
            "backend": prop(
                "Backend",
                "nvml: real GPUs; simulated: advertise the GPUs of `gpus` without hardware "
                "(gpustack implementation only; for CI and clusters without GPUs).",
                "string",
                enum=["nvml", "simulated"],
                default="nvml",
            ),
            "migStrategy": prop(
                "MIG strategy",
                "none: whole GPUs; single: MIG devices as the GPU resource (uniform layout); "
                "mixed: one nvidia.com/mig-<profile> resource per MIG profile.",
                "string",
                enum=["none", "single", "mixed"],
                default="none",
            ),
            "deviceListStrategy": prop(
                "Device list strategy",
                "How allocated devices reach the container: one strategy or a list.",
                anyOf=[
                    {"type": "string", "enum": strategies},
                    {
                        "type": "array",
                        "items": {"type": "string", "enum": strategies},
                        "minItems": 1,
                        "uniqueItems": True,
                    },
                ],
                default=["envvar"],
                examples=["envvar", ["cdi-cri"]],
            ),
            "deviceIdStrategy": prop(
                "Device ID strategy",
                "Identify GPUs by UUID or by index.",
                "string",
                enum=["uuid", "index"],
                default="uuid",
            ),
            "passDeviceSpecs": prop(
                "Pass device specs",
                "Return device nodes to the kubelet (needed with the static CPU manager).",
                "boolean",
                default=False,
            ),
            "failOnInitError": prop(
                "Fail on init error",
                "Exit when GPUs cannot be initialised; false logs and waits.",
                "boolean",
                default=True,
            ),
            "sharedDevicesAllocationPolicy": prop(
                "Shared allocation policy",
                "For time-sliced replicas and MIG devices: spread over devices, then physical "
                "GPUs (distributed), or fill one GPU first (packed).",
                "string",
                enum=["distributed", "packed"],
                default="distributed",
            ),
            "healthChecks": obj(
                "Health checks",
                "XID-based health checks; a GPU with a critical XID is marked unhealthy.",
                {
                    "enabled": enabled("Watch XID events and mark failing GPUs unhealthy."),
                    "ignoredXids": prop(
                        "Ignored XIDs",
                        "XIDs that are application errors, not GPU faults (replaces the default).",
                        "array",
                        items={"type": "integer", "minimum": 1, "maximum": 65535},
                        uniqueItems=True,
                        default=list(model.DEFAULT_IGNORED_XIDS),
                    ),
                },
                default={},
            ),
            "sharing": obj(
                "Sharing",
                "GPU sharing between pods.",
                {"timeSlicing": _time_slicing(), "mps": _mps()},
            ),
            "env": env(),
            "resources": resources(),
            "nodeConfigLabel": prop(
                "Node config label",
                "Node label whose value names the node config of a node; nodes without it, or "
                "with a value no node config has, get the top-level config.",
                "string",
                pattern=LABEL_KEY,
                maxLength=317,
                default=model.DEFAULT_NODE_CONFIG_LABEL,
                examples=[model.DEFAULT_NODE_CONFIG_LABEL],
            ),
            "nodeConfigs": prop(
                "Node configs",
                "Named plugin configs for node pools (e.g. denser time-slicing on inference "
                "nodes, whole GPUs on training nodes), picked by the node config label; each "
                "gets its own plugin DaemonSet, so no component needs API access.",
                "array",
                items=_node_config(),
                maxItems=MAX_NODE_CONFIGS,
                default=[],
                examples=[[{"name": "whole-gpu", "sharing": {}}]],
            ),
        },
        default={},
    )


def _gpus() -> Schema:
    return obj(
        "GPUs",
        "The GPUs expected on the selected nodes; compatibility rules read this.",
        {
            "product": prop(
                "Product",
                "GPU product on the nodes (implies the architecture).",
                "string",
                enum=sorted(catalog.PRODUCTS),
                examples=["H100-SXM5-80GB", "L4"],
            ),
            "architecture": prop(
                "Architecture",
                "GPU architecture, when the exact product is not known.",
                "string",
                enum=list(catalog.ARCHITECTURES),
                examples=["hopper"],
            ),
            "perNode": prop(
                "GPUs per node",
                "How many GPUs each node has: the simulated backend advertises this many, "
                "and no example job may request more.",
                "integer",
                minimum=1,
                maximum=16,
                default=1,
                examples=[8],
            ),
            "mig": prop(
                "MIG layout",
                "MIG instances per GPU: profile name to count (needs a MIG-capable product).",
                "object",
                propertyNames={"pattern": r"^\d+g\.\d+gb$", "examples": ["1g.10gb"]},
                additionalProperties={"type": "integer", "minimum": 1, "maximum": 7},
                default={},
                examples=[{"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}],
            ),
        },
        default={},
    )


def _workloads() -> Schema:
    example = obj(
        "Example workload",
        "A PyTorch job that checks a GPU is usable from a pod.",
        {
            "name": prop(
                "Name",
                "Job name (DNS-1123 label).",
                "string",
                pattern=DNS_LABEL,
                maxLength=63,
                examples=["pytorch-smoke"],
            ),
            "image": prop(
                "Image",
                "Container image; its tag should say the CUDA version (cuda12.4, cu126).",
                "string",
                pattern=IMAGE_REF,
                default="docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
                examples=["docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"],
            ),
            "cudaVersion": prop(
                "CUDA version",
                "CUDA release the image is built with, when the tag does not tell.",
                "string",
                pattern=CUDA_VERSION,
                examples=["12.4", "13.0"],
            ),
            "gpus": prop(
                "GPUs",
                "How many of its resource the job requests; at most what one node offers.",
                "integer",
                minimum=1,
                default=1,
            ),
            "resourceName": prop(
                "Resource name",
                "Resource the job requests; unset: the plugin's resource.",
                "string",
                examples=["nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb"],
            ),
            "command": prop(
                "Command",
                "Command of the job's container; empty runs gpustack's CUDA check.",
                "array",
                items={"type": "string"},
                default=[],
                examples=[["python", "-c", "import torch; assert torch.cuda.is_available()"]],
            ),
        },
        required=["name"],
    )
    return obj(
        "Workloads",
        "Workloads shipped next to the stack.",
        {
            "examples": prop(
                "Examples",
                "Example GPU jobs, one per entry.",
                "array",
                items=example,
                default=[],
            )
        },
        default={},
    )


def build_schema() -> Schema:
    """The whole profile schema as a fresh dict."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "gpustack profile",
        "description": "One Kubernetes cluster's NVIDIA GPU stack: what gpustack validates and "
        "turns into GitOps manifests.",
        "type": "object",
        "additionalProperties": False,
        "required": ["apiVersion", "kind", "metadata"],
        "properties": {
            "apiVersion": prop(
                "API version",
                "Version of the profile format.",
                "string",
                enum=[model.API_VERSION],
            ),
            "kind": prop("Kind", "Always Profile.", "string", enum=[model.KIND]),
            "metadata": _metadata(),
            "extends": prop(
                "Extends",
                "Base profile this one builds on, as a path relative to this file; maps merge, "
                "lists and other values replace, null removes a key.",
                "string",
                minLength=1,
                examples=["_bases/h100-fleet.yaml"],
            ),
            "cluster": _cluster(),
            "driver": _driver(),
            "toolkit": _toolkit(),
            "devicePlugin": _device_plugin(),
            "gpus": _gpus(),
            "workloads": _workloads(),
            "gitops": obj(
                "GitOps",
                "Reserved for GitOps delivery settings; accepts no properties yet.",
                {},
                default={},
            ),
        },
        "$defs": _defs(),
    }


def build_base_schema() -> Schema:
    """The schema for bases named by ``extends``: any part of a profile, nothing required."""
    out = build_schema()
    del out["required"]
    out["$id"] = BASE_SCHEMA_ID
    out["title"] = "gpustack profile base"
    out["description"] = (
        "Settings shared by profiles that `extends:` this file; any part of a profile, nothing "
        "required. The merged profile is checked against profile.schema.json."
    )
    return out


@cache
def schema() -> Schema:
    """The schema, built once per process (treat as read-only)."""
    return build_schema()


@cache
def validator() -> Draft202012Validator:
    """The compiled validator, built once per process."""
    return Draft202012Validator(schema())


def _text(data: Schema) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def render() -> str:
    """The schema file's exact text."""
    return _text(build_schema())


def render_base() -> str:
    """The base schema file's exact text."""
    return _text(build_base_schema())


def render_reference_doc() -> str:
    """The Markdown field reference's exact text (``schemas/profile.md``)."""
    from gpustack.profile.reference import render_reference

    return render_reference(build_schema())


def main() -> None:
    """Rewrite (or with ``--check``, verify) the schemas and the field reference."""
    files = {
        SCHEMA_FILE: render(),
        BASE_SCHEMA_FILE: render_base(),
        REFERENCE_FILE: render_reference_doc(),
    }
    if "--check" in sys.argv[1:]:
        for path, text in files.items():
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                sys.exit(f"{path} is stale; run: python -m gpustack.profile.schema")
        return
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
