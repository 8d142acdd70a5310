"""The ``gpu-sim-ci`` cluster folder (gpustack's device plugin, simulated backend) on a real node.

The folder is applied as synthesized, with one change a kustomize overlay makes: its example
Job's image (``busybox``, which no registry here serves) becomes the device plugin image, which
has the ``sh`` the Job runs. The plugin image built from this tree is imported into the node's
containerd under the name the DaemonSet references, as on an air-gapped node. What a real kubelet
and runtime then do with the folder is checked: the plugin pod runs with its securityContext and
mounts, registers, and the node advertises the profile's GPU count; the example Job runs to
completion with the environment the plugin's Allocate answered; a pod asking for more GPUs than
the node has stays Pending; the resource goes when the plugin pod goes and comes back with it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import pytest
import yaml

from tests.e2e.controlplane import ControlPlane
from tests.e2e.folder import CLUSTERS, Folder
from tests.real_node.node import KUBELET_ROOT, NODE_NAME, RealNode

FOLDER: Final = CLUSTERS / "gpu-sim-ci"
NAMESPACE: Final = "gpustack-system"
PLUGIN_SELECTOR: Final = "app.kubernetes.io/component=device-plugin"
RESOURCE: Final = "nvidia.com/gpu"
#: The seed's check of what a node advertises (jsonpath escapes the dots of the resource name).
ALLOCATABLE: Final = "jsonpath={.items[*].status.allocatable.nvidia\\.com/gpu}"
#: The label that takes the device plugin off a node (the DaemonSet's node affinity).
DEPLOY_LABEL: Final = "nvidia.com/gpu.deploy.device-plugin"
#: The kubelet's record of what each container was allocated (device manager checkpoint).
CHECKPOINT: Final = KUBELET_ROOT / "device-plugins" / "kubelet_internal_checkpoint"
TIMEOUT: Final = 180.0
#: What the kubelet logs (-v=2) when a device plugin registers (pkg/kubelet/cm/devicemanager).
REGISTRATION: Final = "Got registration request from device plugin"


def until(
    check: Callable[[], bool],
    what: str,
    seconds: float = TIMEOUT,
    explain: Callable[[], str] | None = None,
) -> None:
    """Wait for ``check``; on a timeout, fail with what ``explain`` says of the node then (a
    bare timeout left a failed run with nothing to go on)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(1)
    told = f"\n{explain()}" if explain is not None else ""
    raise AssertionError(f"timed out after {seconds:.0f}s waiting for {what}{told}")


def node_story(node: RealNode, namespace: str = NAMESPACE) -> str:
    """The pods and events of ``namespace`` and the kubelet's last lines: why a pod is not
    running, for a failure message."""
    cp = node.cp
    parts = [
        cp.run("get", "pods", "-n", namespace, "-o", "wide").stdout,
        cp.run("get", "events", "-n", namespace, "--sort-by=.lastTimestamp").stdout[-4000:],
        "--- kubelet",
        node.kubelet_log(40),
    ]
    return "\n".join(parts)


def pods(cp: ControlPlane, selector: str = "", namespace: str = NAMESPACE) -> list[dict[str, Any]]:
    args = ["get", "pods", "-n", namespace, "-o", "json"] + (["-l", selector] if selector else [])
    items: list[dict[str, Any]] = json.loads(cp.kubectl(*args))["items"]
    return items


def allocatable(cp: ControlPlane) -> str:
    return cp.kubectl("get", "nodes", "-o", ALLOCATABLE).strip()


def running(pod: dict[str, Any]) -> bool:
    statuses = pod.get("status", {}).get("containerStatuses", [])
    return (
        pod.get("status", {}).get("phase") == "Running"
        and bool(statuses)
        and all(s.get("ready") for s in statuses)
        and "deletionTimestamp" not in pod["metadata"]
    )


def container_spec(node: RealNode, pod: dict[str, Any], name: str) -> dict[str, Any]:
    """The OCI runtime spec containerd made for container ``name`` of ``pod``."""
    (status,) = [s for s in pod["status"]["containerStatuses"] if s["name"] == name]
    container_id = status["containerID"].removeprefix("containerd://")
    spec: dict[str, Any] = json.loads(node.ctr("containers", "info", container_id))["Spec"]
    return spec


def plugin_pod(cp: ControlPlane) -> dict[str, Any]:
    (pod,) = [p for p in pods(cp, PLUGIN_SELECTOR) if "deletionTimestamp" not in p["metadata"]]
    return pod


@pytest.fixture(scope="module")
def folder() -> Folder:
    return Folder.load(FOLDER)


@pytest.fixture(scope="module")
def deployed(
    real_node: RealNode,
    plugin_image: tuple[Path, str],
    folder: Folder,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[RealNode]:
    cp = real_node.cp
    archive, tag = plugin_image
    (daemonset,) = [
        d
        for d in folder.of_kind("DaemonSet")
        if d["metadata"]["labels"]["app.kubernetes.io/component"] == "device-plugin"
    ]
    (plugin_ref,) = {c["image"] for c in daemonset["spec"]["template"]["spec"]["containers"]}
    real_node.import_image(archive, plugin_ref)

    overlay = tmp_path_factory.mktemp("overlay")
    name, _, version = tag.rpartition(":")
    job_images = {
        c["image"].rpartition(":")[0]
        for job in folder.of_kind("Job")
        for c in job["spec"]["template"]["spec"]["containers"]
    }
    (overlay / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "resources": [os.path.relpath(FOLDER, overlay)],  # kustomize: relative
                "images": [{"name": i, "newName": name, "newTag": version} for i in job_images],
            }
        )
    )
    for crd in folder.external_crds():
        cp.kubectl("apply", "--server-side", "-f", str(crd))
    # Just after the start the API server may not serve its OpenAPI yet (kubectl validates).
    until(
        lambda: cp.run("apply", "--server-side", "-k", str(overlay)).returncode == 0,
        "the folder to apply",
        seconds=90,
    )
    try:
        until(
            lambda: any(running(p) for p in pods(cp, PLUGIN_SELECTOR)),
            "the plugin pod",
            explain=lambda: node_story(real_node),
        )
        yield real_node
    finally:
        cp.kubectl("delete", "-k", str(overlay), "--ignore-not-found", "--wait=true",
                   "--timeout=120s", check=False)  # fmt: skip


def test_plugin_pod_runs_as_synthesized(deployed: RealNode, folder: Folder) -> None:
    """The runtime gave the plugin container what the DaemonSet asks: a read-only root, no
    capabilities, no privilege escalation, seccomp, and its two mounts."""
    pod = plugin_pod(deployed.cp)
    assert pod["spec"]["nodeName"] == NODE_NAME
    spec = container_spec(deployed, pod, "nvidia-device-plugin")
    assert spec["root"].get("readonly") is True
    assert spec["process"].get("noNewPrivileges") is True
    assert spec["process"].get("capabilities", {}).get("bounding", []) == []
    assert spec["linux"].get("seccomp", {}).get("defaultAction") == "SCMP_ACT_ERRNO"
    mounts = {m["destination"]: m for m in spec["mounts"]}
    assert mounts["/var/lib/kubelet/device-plugins"]["source"] == "/var/lib/kubelet/device-plugins"
    assert "ro" in mounts["/etc/gpustack"]["options"]
    assert "NVIDIA_VISIBLE_DEVICES=void" in spec["process"]["env"]


def test_node_advertises_the_profiles_gpus(deployed: RealNode, folder: Folder) -> None:
    want = folder.gpu_resources()[RESOURCE]
    until(lambda: allocatable(deployed.cp) == want, f"allocatable {RESOURCE} = {want}")


def _checkpoint_devices(pod_uid: str) -> set[str]:
    data = json.loads(CHECKPOINT.read_text())["Data"]
    return {
        device
        for entry in data["PodDeviceEntries"]
        if entry["PodUID"] == pod_uid and entry["ResourceName"] == RESOURCE
        for devices in entry["DeviceIDs"].values()
        for device in devices
    }


def test_example_job_completes_with_its_allocation(deployed: RealNode, folder: Folder) -> None:
    """The Job runs to completion, and its container got the environment the plugin's Allocate
    answered for the devices the kubelet allocated (its checkpoint): NVIDIA_VISIBLE_DEVICES names
    them (envvar strategy, device specs not passed), each a GPU of the profile."""
    cp = deployed.cp
    ((_, job),) = folder.jobs()
    until(
        lambda: "Complete"
        in cp.kubectl("get", "job", job, "-n", NAMESPACE, "-o",
                      "jsonpath={.status.conditions[?(@.status=='True')].type}"),
        f"Job {job} to complete",
    )  # fmt: skip
    (pod,) = pods(cp, f"job-name={job}")
    assert pod["status"]["phase"] == "Succeeded"
    spec = container_spec(deployed, pod, pod["spec"]["containers"][0]["name"])
    env = dict(e.split("=", 1) for e in spec["process"]["env"])
    allocated = _checkpoint_devices(pod["metadata"]["uid"])
    assert len(allocated) == 1
    assert set(env["NVIDIA_VISIBLE_DEVICES"].split(",")) == allocated
    (config,) = [c for c in folder.of_kind("ConfigMap") if c["metadata"]["name"].endswith("config")]
    gpus = yaml.safe_load(config["data"]["config.yaml"])["gpustack"]["simulated"]["gpus"]
    assert allocated <= {g["uuid"] for g in gpus}
    assert env["GPUSTACK_SIMULATED"] == "true"
    assert not [d for d in spec["linux"].get("devices", []) if "nvidia" in d["path"]]


def test_more_gpus_than_the_node_has_stays_pending(deployed: RealNode, folder: Folder) -> None:
    cp = deployed.cp
    too_many = int(folder.gpu_resources()[RESOURCE]) + 1
    image = container_image(plugin_pod(cp))
    cp.kubectl("create", "namespace", "real-node-pending")
    try:
        cp.kubectl(
            "run", "too-many", "-n", "real-node-pending", f"--image={image}", "--restart=Never",
            f'--overrides={{"spec":{{"containers":[{{"name":"too-many","image":"{image}",'
            f'"command":["true"],"resources":{{"limits":{{"{RESOURCE}":{too_many}}}}}}}]}}}}',
        )  # fmt: skip

        def unschedulable() -> str:
            return cp.kubectl(
                "get", "pod", "too-many", "-n", "real-node-pending", "-o",
                "jsonpath={.status.conditions[?(@.type=='PodScheduled')].message}",
            )  # fmt: skip

        until(lambda: f"Insufficient {RESOURCE}" in unschedulable(), "the pod to be unschedulable")
        time.sleep(5)
        pod = json.loads(
            cp.kubectl("get", "pod", "too-many", "-n", "real-node-pending", "-o", "json")
        )
        assert pod["status"]["phase"] == "Pending"
        assert not pod["spec"].get("nodeName")
    finally:
        cp.kubectl("delete", "namespace", "real-node-pending", "--wait=false", check=False)


def container_image(pod: dict[str, Any]) -> str:
    image: str = pod["spec"]["containers"][0]["image"]
    return image


def test_resource_goes_with_the_plugin_pod_and_comes_back(
    deployed: RealNode, folder: Folder
) -> None:
    """Taking the plugin off the node (its deploy label, the DaemonSet's affinity) ends its pod:
    the kubelet drops the GPUs from allocatable; giving it back brings them back."""
    cp = deployed.cp
    want = folder.gpu_resources()[RESOURCE]
    until(lambda: allocatable(cp) == want, f"allocatable {want}")
    cp.kubectl("label", "node", NODE_NAME, f"{DEPLOY_LABEL}=false")
    try:
        until(lambda: not pods(cp, PLUGIN_SELECTOR), "the plugin pod to go")
        until(lambda: allocatable(cp) == "0", "allocatable 0 without the plugin")
    finally:
        cp.kubectl("label", "node", NODE_NAME, f"{DEPLOY_LABEL}-")
    until(lambda: any(running(p) for p in pods(cp, PLUGIN_SELECTOR)), "the plugin pod back")
    until(lambda: allocatable(cp) == want, f"allocatable {want} again")


def test_killed_plugin_pod_restarts_and_reregisters(deployed: RealNode, folder: Folder) -> None:
    """Deleting the plugin pod: the DaemonSet starts another, which registers again."""
    cp = deployed.cp
    want = folder.gpu_resources()[RESOURCE]
    until(
        lambda: any(running(p) for p in pods(cp, PLUGIN_SELECTOR)),
        "the plugin pod",
        explain=lambda: node_story(deployed),
    )
    old = plugin_pod(cp)["metadata"]["uid"]
    cp.kubectl("delete", "pod", "-n", NAMESPACE, "-l", PLUGIN_SELECTOR, "--wait=true")
    until(
        lambda: any(running(p) and p["metadata"]["uid"] != old for p in pods(cp, PLUGIN_SELECTOR)),
        "a new plugin pod",
    )
    until(lambda: allocatable(cp) == want, f"allocatable {want} after the restart")
    log = (deployed.root / "kubelet.log").read_text(errors="replace")
    registrations = [line for line in log.splitlines() if REGISTRATION in line and RESOURCE in line]
    assert len(registrations) >= 2, registrations


def test_only_unserved_images_keep_pods_waiting(deployed: RealNode) -> None:
    """Every pod of the folder runs or ran, except those whose image no registry here serves
    (NFD's): they wait on the pull, and nothing else keeps a pod from starting."""
    cp = deployed.cp
    imported = deployed.ctr("images", "ls", "--quiet").split()

    def waiting() -> dict[str, str]:
        found = {}
        for pod in pods(cp):
            for status in pod.get("status", {}).get("containerStatuses", []):
                reason = status.get("state", {}).get("waiting", {}).get("reason")
                if reason:
                    found[f"{pod['metadata']['name']} ({status['image']})"] = reason
        return found

    until(lambda: all(r in ("ErrImagePull", "ImagePullBackOff") for r in waiting().values())
          and bool(waiting()), "pods waiting on image pulls")  # fmt: skip
    stuck = waiting()
    print("waiting on images no registry here serves:", json.dumps(stuck, indent=1))
    for pod in stuck:
        image = pod.rpartition(" (")[2].rstrip(")")
        assert "node-feature-discovery" in image, stuck
        assert image not in imported
