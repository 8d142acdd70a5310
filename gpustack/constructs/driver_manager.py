"""NVIDIA's driver manager in the driver pod, and the driver configuration digest.

Why: a new driver pod cannot load its modules while the old ones are in use, which is why a plain
driver DaemonSet crash-loops on an upgrade. NVIDIA's ``k8s-driver-manager`` (``driver-manager
uninstall_driver``, the GPU Operator's init container) solves that on the node: it sets every
``nvidia.com/gpu.deploy.<component>=true`` label of its node to ``paused-for-driver-upgrade`` so
the GPU clients' DaemonSets leave, waits for their pods (found by their ``app`` label, see
:data:`gpustack.constructs.node_daemonset.APP_LABEL`) to stop, evicts the pods that use GPUs
(optionally drains the node), unloads the old modules, and sets the labels back to ``true``.

It pauses only labels that are ``true``. With ``cluster.deployLabels: optional`` nobody has to
set them, so a ``deploy-labels`` step runs first and sets the label of every GPU client gpustack
knows (registry rows with ``gpu_client``) to ``true`` where it is absent or empty (never
overriding ``false`` or a pause); it uses the ``kubectl`` of the GPU Operator image
(``driver.upgrade.kubectlImage``), and the same ServiceAccount. With ``required`` the labels are
the administrator's, untouched.

Every GPU client's label, not only those of the components this profile switches on: the driver
DaemonSet updates ``OnDelete``, so a pod template that changed with the DCGM exporter or GFD
switched on would leave every driver pod out of date and ask for every GPU node to be drained.
Seeding a label whose component does not run is harmless: the manager reads a fixed list of
deploy labels, pauses those that are ``true`` and waits for the pods of fixed ``app`` labels on
its node, which returns at once where none run (``fetchCurrentLabels``,
``evictAllGPUOperatorComponents``, ``waitForPodsToTerminate`` in ``cmd/driver-manager/main.go``,
k8s-driver-manager v0.12.0). The label is already ``true`` when the component is switched on
later, so its first driver upgrade pauses it too.

The driver manager calls the API, so the driver's ServiceAccount gets :func:`rules` (a
ClusterRole: nodes are cluster-scoped, and GPU pods live in any namespace) and a token that only
the two init containers mount; the driver container itself has none. From v0.12.0 the manager
also counts a pod holding a ResourceClaim allocated by NVIDIA's DRA driver as a GPU pod, and
reads each claim a pod names (``internal/kubernetes/client.go``, ``podHasGPUResourceClaim``,
k8s-driver-manager v0.12.0; the operator's ``assets/state-driver/0210_clusterrole.yaml`` at
v26.7.0 grants it): without ``get`` on ``resourceclaims`` an upgrade on a node with such a pod
fails. An older pinned manager (v0.9.x to v0.11.x) never reads claims and is not granted it.

The digest (``DRIVER_CONFIG_DIGEST``, as the GPU Operator sets it on the manager and the driver
container) hashes what decides the installed driver. Driver managers from v0.10.0 compare it
with the digest the running driver recorded and, when equal, restart the pod in place instead
of unloading and reinstalling (``shouldUpdateDriverConfig`` in ``cmd/driver-manager/main.go``,
v0.12.0; an unset digest means "changed"). A pinned v0.9.x ignores it and always reinstalls.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Final, Protocol

from constructs import Construct

from gpustack.constructs import k8s, kube
from gpustack.constructs.node_daemonset import NodeApp, NodeDaemonSet
from gpustack.constructs.placement import ContainerSettings, deploy_label
from gpustack.constructs.rbac import TOKEN_DIR, Access, grant, token_volume
from gpustack.constructs.scripts import SCRIPTS_DIR
from gpustack.kube.labels import DRIVER_DIGEST_ENV
from gpustack.profile import components
from gpustack.profile.model import DriverToolkit, DriverUpgrade, Profile, Rdma
from gpustack.profile.versions import tag_at_least

CONTAINER: Final = "k8s-driver-manager"
LABELS_CONTAINER: Final = "deploy-labels"
#: The ClusterRole (and binding) of the driver's ServiceAccount.
CLUSTER_ROLE: Final = "gpustack-nvidia-driver-manager"
DIGEST_ENV: Final = DRIVER_DIGEST_ENV
SCRIPTS_CHECKSUM: Final = "gpustack.dev/driver-manager-scripts-checksum"
LABELS_SCRIPT: Final = "deploy-labels.sh"
_SCRIPTS_MOUNT: Final = f"{SCRIPTS_DIR}/driver-manager"

#: What the driver manager (v0.12.0 ``cmd/driver-manager``, ``internal/kubernetes``, and the
#: kubectl drain library it calls) and the ``deploy-labels`` step do with the API, every release.
#: Pods are never deleted: the drain library evicts (it deletes only where the API has no
#: eviction, which every supported Kubernetes has).
RULES: Final = (
    Access(
        "",
        ("nodes",),
        ("get", "patch"),
        "read its node's deploy labels and upgrade annotation; flip the labels, cordon and"
        " uncordon (strategic merge patches)",
    ),
    Access(
        "",
        ("pods",),
        ("get", "list"),
        "find the GPU pods on its node (all namespaces), wait for paused components' and"
        " evicted pods to be gone",
    ),
    Access("", ("pods/eviction",), ("create",), "evict GPU pods (and drain, when enabled)"),
    Access(
        "apps",
        ("daemonsets",),
        ("get",),
        "the drain library checks that a DaemonSet pod's DaemonSet exists before skipping it",
    ),
)
#: The first driver manager release that reads pods' ResourceClaims.
CLAIMS_SINCE: Final = "v0.12.0"
CLAIM_RULES: Final = (
    Access(
        "resource.k8s.io",
        ("resourceclaims",),
        ("get",),
        "tell whether a pod's ResourceClaim was allocated by NVIDIA's DRA driver (a GPU pod to"
        " evict; v0.12.0 and later)",
    ),
)


def rules(version: str) -> tuple[Access, ...]:
    """The ClusterRole's rules for a driver manager release (see the module docstring)."""
    return RULES + CLAIM_RULES if tag_at_least(version, CLAIMS_SINCE) else RULES


_LABELS_SCRIPT: Final = """\
#!/bin/sh
# Set this node's deploy labels of the components gpustack deploys to true where absent or
# empty, so NVIDIA's driver manager pauses them during a driver upgrade. A label with a value
# (false, true, paused-for-driver-upgrade) is left alone: it is the administrator's, or the
# driver manager's from an interrupted upgrade, which its next run completes.
set -eu
labels="$(kubectl get node "$NODE_NAME" \\
  -o go-template='{{range $k, $v := .metadata.labels}}{{$k}}={{$v}}{{"\\n"}}{{end}}')"
missing=""
for key in $DEPLOY_LABELS; do
  value="$(printf '%s\\n' "$labels" | awk -v k="$key" 'index($0, k "=") == 1 {
    print substr($0, length(k) + 2) }')"
  if [ -z "$value" ]; then
    missing="$missing $key=true"
  fi
done
if [ -n "$missing" ]; then
  echo "labelling node $NODE_NAME:$missing"
  # shellcheck disable=SC2086  # one argument per label
  kubectl label node "$NODE_NAME" --overwrite $missing
else
  echo "node $NODE_NAME has every deploy label"
fi
"""


def _bool(value: bool) -> str:
    return "true" if value else "false"


@dataclass(frozen=True)
class DriverManagerProps:
    """The driver manager's settings, from ``driver.upgrade`` and ``driver.rdma`` (the profile
    model owns the defaults).

    - ``image``, ``image_pull_policy``: NVIDIA's driver manager (pinned by the model).
    - ``upgrade``: ``driver.upgrade`` (eviction, drain).
    - ``rdma``, ``use_host_mofed``: with GPUDirect RDMA it waits for the MOFED driver.
    - ``seed_labels``: the deploy labels the ``deploy-labels`` step sets where absent
      (``cluster.deployLabels: optional``; empty with ``required``): those of every registered
      GPU client (rows with ``gpu_client``) that has one, switched on or not, so the driver pod
      does not change when another component is switched (see the module docstring).
    - ``kubectl_image``: the image whose ``kubectl`` that step runs.
    """

    image: str
    image_pull_policy: str
    upgrade: DriverUpgrade
    rdma: bool
    use_host_mofed: bool
    seed_labels: tuple[str, ...]
    kubectl_image: str

    @classmethod
    def from_profile(cls, profile: Profile) -> DriverManagerProps | None:
        d = profile.driver
        if not d.upgrade.driver_manager:
            return None
        seed: tuple[str, ...] = ()
        if profile.cluster.deploy_labels == "optional":
            seed = tuple(
                deploy_label(c.name) for c in components.REGISTRY if c.gpu_client and c.deploy_label
            )
        return cls(
            image=d.upgrade.image_ref(),
            image_pull_policy=d.image_pull_policy,
            upgrade=d.upgrade,
            rdma=d.rdma.enabled,
            use_host_mofed=d.rdma.use_host_mofed,
            seed_labels=seed,
            kubectl_image=d.upgrade.kubectl_image,
        )

    def env(self) -> list[tuple[str, str]]:
        """The manager's settings as its environment (the names the GPU Operator sets)."""
        u = self.upgrade
        env = [
            ("NVIDIA_VISIBLE_DEVICES", "void"),  # the manager needs no GPU
            ("ENABLE_GPU_POD_EVICTION", _bool(u.gpu_pod_eviction)),
            ("ENABLE_AUTO_DRAIN", _bool(u.auto_drain)),
            ("DRAIN_USE_FORCE", _bool(u.force)),
            ("DRAIN_POD_SELECTOR_LABEL", u.pod_selector),
            ("DRAIN_TIMEOUT_SECONDS", f"{u.drain_timeout_seconds}s"),
            ("DRAIN_DELETE_EMPTYDIR_DATA", _bool(u.delete_empty_dir_data)),
        ]
        if self.rdma:
            env += [
                ("GPU_DIRECT_RDMA_ENABLED", "true"),
                ("USE_HOST_MOFED", _bool(self.use_host_mofed)),
            ]
        return env


class DriverState(Protocol):
    """What of the driver's props (:class:`gpustack.constructs.driver.DriverProps`) decides the
    installed driver: the driver module builds on this one, so this one names it by shape."""

    @property
    def container(self) -> ContainerSettings: ...

    @property
    def manager(self) -> DriverManagerProps | None: ...

    @property
    def kernel_module_type(self) -> str: ...

    @property
    def rdma(self) -> Rdma: ...

    @property
    def kernel_module_config_map(self) -> str | None: ...

    @property
    def repo_config(self) -> tuple[str, str] | None: ...

    @property
    def cert_config(self) -> tuple[str, str] | None: ...

    @property
    def driver_toolkit(self) -> DriverToolkit | None: ...


def config_digest(props: DriverState) -> str:
    """sha256 of what decides the installed driver (the GPU Operator's ``DriverInstallState``):
    driver and manager images (the tag carries version, OS and precompiled kernel), module type,
    the driver's and manager's environment, RDMA, and the ConfigMaps the driver reads. Labels,
    probes and placement are left out: changing them restarts the pod without a reinstall."""
    manager = props.manager
    state = {
        "driverImage": props.container.image,
        "driverManagerImage": manager.image if manager else "",
        "kernelModuleType": props.kernel_module_type,
        "driverEnv": sorted((e.name, e.value) for e in props.container.env),
        "managerEnv": sorted(manager.env()) if manager else [],
        "gpuDirectRdmaEnabled": props.rdma.enabled,
        "useHostMofed": props.rdma.use_host_mofed,
        "kernelModuleConfig": props.kernel_module_config_map or "",
        "repoConfig": props.repo_config[0] if props.repo_config else "",
        "certConfig": props.cert_config[0] if props.cert_config else "",
    }
    if props.driver_toolkit is not None:  # OpenShift: the side-car's image builds the modules
        state["driverToolkitImage"] = props.driver_toolkit.image or ""
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()


def add_driver_manager(
    scope: Construct, ds: NodeDaemonSet, app: NodeApp, props: DriverState
) -> list[k8s.Container]:
    """The ClusterRole and binding, the scripts ConfigMap and the init containers (deploy-labels,
    when it has labels to set, then k8s-driver-manager) of the driver pod under construction;
    the driver container carries the same :func:`config_digest`."""
    manager = props.manager
    if manager is None:
        raise ValueError("the driver manager is disabled")
    grant(
        scope,
        app.ident,
        name=CLUSTER_ROLE,
        namespace=app.placement.namespace,
        service_account=ds.service_account,
        rules=rules(manager.upgrade.version),
        cluster=True,
    )
    token = ds.mount(token_volume(), TOKEN_DIR, read_only=True)
    inits = [_labels_container(ds, app, manager, token)] if manager.seed_labels else []
    return [*inits, _manager_container(ds, manager, token, config_digest(props))]


def _labels_container(
    ds: NodeDaemonSet, app: NodeApp, manager: DriverManagerProps, token: k8s.VolumeMount
) -> k8s.Container:
    """``deploy-labels``: sets the node's unset deploy labels to ``true`` (see
    :data:`_LABELS_SCRIPT`), so the driver manager pauses those components too."""
    scripts = ds.config_map(
        "driver-manager-scripts",
        f"{app.ident.name}-manager-scripts",
        {LABELS_SCRIPT: _LABELS_SCRIPT},
        checksum=SCRIPTS_CHECKSUM,
        volume="driver-manager-scripts",
        mode=0o555,
    )
    return k8s.Container(
        name=LABELS_CONTAINER,
        image=manager.kubectl_image,
        image_pull_policy=manager.image_pull_policy,
        command=["sh", f"{_SCRIPTS_MOUNT}/{LABELS_SCRIPT}"],
        env=kube.env_list(
            [("DEPLOY_LABELS", " ".join(manager.seed_labels))],
            field_refs={"NODE_NAME": "spec.nodeName"},
        ),
        security_context=kube.unprivileged(),
        volume_mounts=[token, ds.mount(scripts, _SCRIPTS_MOUNT, read_only=True)],
    )


def _manager_container(
    ds: NodeDaemonSet, manager: DriverManagerProps, token: k8s.VolumeMount, digest: str
) -> k8s.Container:
    """``k8s-driver-manager``: pauses the GPU clients and unloads the running driver before the
    new one installs (see the module docstring); privileged: it unloads kernel modules and
    unmounts the old driver root."""
    run_nvidia = kube.host_path("run-nvidia", "/run/nvidia", "DirectoryOrCreate")
    host_root = kube.host_path("host-root", "/")
    mounts = [
        ds.mount(run_nvidia, "/run/nvidia", propagation="Bidirectional"),
        ds.mount(host_root, "/host", read_only=True, propagation="HostToContainer"),
        ds.mount(kube.host_path("host-sys", "/sys", "Directory"), "/sys"),
        token,
    ]
    if manager.rdma:
        volume = kube.host_path(
            "run-mellanox-drivers", "/run/mellanox/drivers", "DirectoryOrCreate"
        )
        mounts.append(ds.mount(volume, "/run/mellanox/drivers", propagation="HostToContainer"))
    return k8s.Container(
        name=CONTAINER,
        image=manager.image,
        image_pull_policy=manager.image_pull_policy,
        command=["driver-manager"],
        args=["uninstall_driver"],
        env=kube.env_list(
            [*manager.env(), (DIGEST_ENV, digest)],
            field_refs={
                "NODE_NAME": "spec.nodeName",
                "OPERATOR_NAMESPACE": "metadata.namespace",
            },
        ),
        security_context=k8s.SecurityContext(privileged=True),
        volume_mounts=mounts,
    )
