"""Record the node states ``gpustack validate --state`` reads, from a real control plane (see
controlplane.py), for tests/nodestate/test_recorded.py.

Why: a hand-written state holds what its author believed nodes look like; these hold what the
API server stores for them and where the DaemonSet controller and the scheduler put the stack's
pods when a node drifts (a node whose OS or kernel no longer matches loses its driver pod, a node
the selector no longer picks loses the whole stack, a node marked as bringing its own driver
keeps GPU feature discovery's driver labels and no driver pod).

For each example profile of tests/nodestate/recorded_cases.py ``MATCHING``: the committed
cluster folder goes through the e2e tier's rollout (rollout.py: prerequisites, one apply, GPU
nodes fresh -> labelled -> advertised, the example Jobs bound); then every node gets what its
kubelet, Node Feature Discovery and GPU feature discovery would report on the nodes the profile
describes (:func:`node_facts`: ``status.nodeInfo`` with the profile's kubelet, kernel, OS image
and runtime; the OS and kernel labels; the product as GFD spells it, the driver it loaded; the
distribution's and cloud's node labels); every bound pod is reported Running and Ready as a
kubelet would (record_doctor.py), and ``kubectl get nodes,pods,daemonsets,events -A -o json``
is written to ``tests/nodestate/fixtures/recorded/<profile>.json.gz``. Then each of the profile's
``CASES`` makes its change on the live nodes, the controllers settle, pods deleted from a node
are confirmed gone (what its kubelet does), and the state is written to
``<profile>--<case>.json.gz``; the change is undone before the next.

Reproduce (about a minute per profile; binaries as for the e2e tier)::

    KUBEBUILDER_ASSETS=/work/kubebuilder-assets .venv/bin/python -m tests.e2e.record_nodestate \
        [PROFILE ...]
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from gpustack.profile import catalog
from tests.e2e.controlplane import ASSETS_VAR, ControlPlane, missing_assets
from tests.e2e.folder import CLUSTERS, NFD_PREFIX, Folder
from tests.e2e.record_doctor import _report_ready, _strip, state_text
from tests.e2e.rollout import CPU_NODE, _set_node, rollout, teardown
from tests.e2e.test_clusters import is_gke
from tests.nodestate.recorded_cases import (
    CASES,
    DRIVER_LABELS,
    MATCHING,
    RECORDED,
    Case,
    Change,
    matching_file,
)

#: How long the DaemonSet controller and the scheduler get after a change to the nodes.
SETTLE_SECONDS: Final = 8.0
#: A PCI device NFD finds on any server (Intel's vendor ID): a CPU node has PCI devices, none of
#: NVIDIA's.
OTHER_PCI: Final = f"{NFD_PREFIX}pci-8086.present"
#: Patch level the fake kubelets and runtimes report (any; the checks read the minor release).
KUBELET_PATCH: Final = "4"
CONTAINERD_1: Final = "1.7.27"

#: The mark k3s, RKE2 and k0s put on their kubelet's version.
KUBELET_MARK: Final = {"k3s": "+k3s1", "rke2": "+rke2r1", "k0s": "+k0s"}
#: The node labels MicroK8s and OpenShift put on every node.
DISTRIBUTION_LABELS: Final = {
    "microk8s": {"microk8s.io/cluster": "true"},
    "openshift": {"node.openshift.io/os_id": "rhcos"},
}
#: GKE's node pool labels (the GPU pool with GKE's driver installer).
GKE_GPU_LABELS: Final = {
    "cloud.google.com/gke-nodepool": "gpu-pool",
    "cloud.google.com/gke-accelerator": "nvidia-tesla-t4",
    "cloud.google.com/gke-gpu-driver-version": "default",
}


def gfd_product(product: str) -> str:
    """The ``nvidia.com/gpu.product`` GFD writes for a catalog product (the sanitised
    ``nvidia-smi`` name)."""
    smi = next(s for s, p in catalog.SMI_PRODUCT_NAMES.items() if p == product)
    return catalog.gfd_product_name(smi)


def os_image(os_id: str, version: str) -> str:
    """``status.nodeInfo.osImage`` (os-release ``PRETTY_NAME``) of the OS the profile is for."""
    if os_id == "ubuntu":
        return f"Ubuntu {version}.2 LTS"
    if os_id == "rhcos":
        major, minor = version.split(".")
        return f"Red Hat Enterprise Linux CoreOS {major}{minor}.94.202502100215-0 (Plow)"
    if os_id == "rhel":
        return f"Red Hat Enterprise Linux {version} (Plow)"
    return f"{os_id} {version}"


def node_facts(
    folder: Folder, node: str, pool: str | None
) -> tuple[dict[str, str], dict[str, str]]:
    """(labels, ``status.nodeInfo``) of ``node`` (a GPU node of ``pool``, or the CPU node) as
    the profile describes the cluster, after the stack's first sync."""
    p = folder.profile
    runtime, distribution = p.cluster.runtime, p.cluster.runtime.distribution
    gke = is_gke(folder)
    system = folder.system_labels()
    os_id = system[f"{NFD_PREFIX}system-os_release.ID"]
    os_version = system[f"{NFD_PREFIX}system-os_release.VERSION_ID"]
    kubelet = f"v{p.cluster.kubernetes_version}.{KUBELET_PATCH}"
    kubelet += "-gke.1200" if gke else KUBELET_MARK.get(distribution, "")
    if runtime.name == "crio":
        shown_runtime = f"cri-o://{p.cluster.kubernetes_version}.2"
    else:
        version = f"{runtime.version}.5" if runtime.version else CONTAINERD_1
        shown_runtime = f"containerd://{version}"
    info = {
        "kubeletVersion": kubelet,
        "kubeProxyVersion": kubelet,
        "kernelVersion": system[f"{NFD_PREFIX}kernel-version.full"],
        "osImage": os_image(os_id, os_version),
        "containerRuntimeVersion": shown_runtime,
        "operatingSystem": "linux",
        "architecture": catalog.PRODUCT_HOST_ARCH.get(p.gpus.product or "", "amd64"),
        "machineID": f"{node}-machine",
        "systemUUID": f"{node}-uuid",
        "bootID": f"{node}-boot",
    }
    labels = dict(DISTRIBUTION_LABELS.get(distribution, {}))
    if node == CPU_NODE:
        labels |= folder.platform_labels() | system | {OTHER_PCI: "true"}
        if gke:
            labels["cloud.google.com/gke-nodepool"] = "default-pool"
        return labels, info
    labels |= folder.gpu_node_labels("advertised", pool)
    if gke:
        labels |= GKE_GPU_LABELS
    if p.gpus.product and "nvidia.com/gpu.product" in labels:
        labels["nvidia.com/gpu.product"] = gfd_product(p.gpus.product)
        if p.gpus.mig and p.device_plugin.mig_strategy == "single":
            raise NotImplementedError("the single MIG strategy's product names")
    if "nvidia.com/gpu.product" in labels:  # GFD runs: it reports the driver it finds loaded
        full = p.driver.version or ""
        major, minor, rev = (full.split(".") + ["", ""])[:3]
        values = (major, minor, rev, full, major, minor, rev)
        labels |= dict(zip(DRIVER_LABELS, values, strict=True))
    return labels, info


def _nodes(folder: Folder) -> dict[str, str | None]:
    return {**folder.pools(), CPU_NODE: None}


def _apply_nodes(cp: ControlPlane, folder: Folder, changes: Iterable[Change] = ()) -> None:
    """Every node as :func:`node_facts` describes it, with ``changes`` made; labels are applied
    whole (server-side, one field manager), so a change undone is a label removed."""
    changes = list(changes)
    for node, pool in _nodes(folder).items():
        labels, info = node_facts(folder, node, pool)
        for at, where, key, value in changes:
            if at != node:
                continue
            if where == "label":
                labels.pop(key, None) if value is None else labels.__setitem__(key, value)
            elif where == "info":
                assert value is not None
                info[key] = value
        resources = folder.gpu_resources(pool) if node != CPU_NODE else {}
        _set_node(cp, node, labels, resources)
        cp.kubectl(
            "patch", "node", node, "--subresource=status", "--type=merge",
            "-p", json.dumps({"status": {"nodeInfo": info}}),
        )  # fmt: skip


def _taints(cp: ControlPlane, changes: Iterable[Change], undo: bool = False) -> None:
    for node, where, key, _ in changes:
        if where == "taint":
            cp.kubectl("taint", "node", node, key + ("-" if undo else ""))


def _reap(cp: ControlPlane) -> None:
    """What a kubelet does for a pod the API server marked for deletion: confirm it gone."""
    pods = json.loads(cp.kubectl("get", "pods", "-A", "-o", "json"))["items"]
    for pod in pods:
        meta = pod["metadata"]
        if meta.get("deletionTimestamp"):
            cp.kubectl(
                "delete", "pod", meta["name"], "-n", meta["namespace"], "--force",
                "--grace-period=0", "--ignore-not-found", check=False,
            )  # fmt: skip


def _settle(cp: ControlPlane) -> None:
    time.sleep(SETTLE_SECONDS)
    _reap(cp)
    time.sleep(SETTLE_SECONDS / 2)  # the DaemonSet controller replaces what it lost, or not
    _reap(cp)
    _report_ready(cp)
    time.sleep(3.0)  # the DaemonSet controller counts the Ready pods


def write_state(cp: ControlPlane, target: Path) -> Path:
    """The state, one object a line, gzipped without a timestamp (a state is ~150 kB of JSON,
    mostly the pods' specs; ``zcat`` shows it)."""
    doc: dict[str, Any] = _strip(
        json.loads(cp.kubectl("get", "nodes,pods,daemonsets,events", "-A", "-o", "json"))
    )
    text = state_text(doc)
    with target.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
        out.write(text.encode())
    return target


def record(cp: ControlPlane, profile: str, cases: list[Case]) -> list[Path]:
    folder = Folder.load(CLUSTERS / profile)
    written: list[Path] = []
    try:
        seen = rollout(cp, folder)
        assert seen.apply_rc == 0, seen.apply_stderr
        _apply_nodes(cp, folder)
        _settle(cp)
        written.append(write_state(cp, matching_file(profile)))
        for case in cases:
            _apply_nodes(cp, folder, case.changes)
            _taints(cp, case.changes)
            _settle(cp)
            written.append(write_state(cp, case.file))
            _taints(cp, case.changes, undo=True)
            _apply_nodes(cp, folder)
            _settle(cp)
    finally:
        teardown(cp, folder)
    return written


def main(names: list[str]) -> int:
    reason = missing_assets()
    if reason is not None:
        print(reason, file=sys.stderr)
        return 2
    chosen = names or list(MATCHING)
    unknown = sorted(set(chosen) - set(MATCHING))
    if unknown:
        print(f"unknown profile {unknown}; known: {', '.join(MATCHING)}", file=sys.stderr)
        return 2
    RECORDED.mkdir(parents=True, exist_ok=True)
    assets = Path(os.environ[ASSETS_VAR])
    for gke in (False, True):
        todo = [n for n in chosen if is_gke(Folder.load(CLUSTERS / n)) == gke]
        if not todo:
            continue
        cp = ControlPlane.start(assets, gke=gke)
        try:
            for name in todo:
                for path in record(cp, name, [c for c in CASES if c.profile == name]):
                    print(path, flush=True)
        finally:
            cp.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
