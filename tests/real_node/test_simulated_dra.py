"""gpustack's simulated DRA driver with a real kubelet: the kubelet registers it through its
plugin registry, and prepares a claim through it before the pod's container starts.

The h100-dra folder's DRA objects are applied (the kubelet plugin's ServiceAccount, RBAC, the
DeviceClasses and the ResourceSlice admission policy) but not its DaemonSet, whose image is
NVIDIA's driver (no registry here serves it): ``gpustack-dra-plugin`` runs on the node as a host
process instead, with the kubelet's own folders (``/var/lib/kubelet/plugins_registry`` and
``plugins``) and a token of the plugin's ServiceAccount bound to the Node, so its slices go
through the RBAC rules and the policy gpustack synthesizes. Why not in a pod: the pod network
here has no route to the loopback API server (no kube-proxy).

CDI: the kubelet hands the claim's CDI device IDs to the runtime; containerd applies them only
from 1.7 on (``enable_cdi``). Debian 12's containerd is 1.6: with it the test checks the
preparation (the claim's CDI spec written, removed again when the pod goes) and that the
container has nothing of the spec; with a containerd 1.7+ named by ``REAL_NODE_CONTAINERD``
(tests/real_node/node.py enables CDI on it) it checks that the container got the spec's edits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
import yaml

from gpustack import dra_upstream
from gpustack.constructs import dra_driver
from gpustack.plugin.dra import claims
from tests.e2e.folder import CLUSTERS
from tests.real_node.node import NODE_NAME, RealNode
from tests.real_node.test_device_plugin import container_spec, node_story, until

FOLDER: Final = CLUSTERS / "h100-dra"
NAMESPACE: Final = "gpustack-system"
TEST_NAMESPACE: Final = "real-node-dra"
PRODUCT: Final = "NVIDIA H100 80GB HBM3"
CONFIG: Final = {
    "version": "v1",
    "gpustack": {
        "backend": "simulated",
        "simulated": {"gpus": [{"index": i, "product": PRODUCT} for i in range(2)]},
    },
}


def _objects() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for sub in ("common", "dra-driver"):
        for path in sorted((FOLDER / sub).glob("*.yaml")):
            out += [d for d in yaml.safe_load_all(path.read_text()) if d]
    kept = [o for o in out if o["kind"] not in ("RuntimeClass", "NetworkPolicy", "DaemonSet")]
    return sorted(kept, key=lambda o: o["kind"] != "Namespace")


@pytest.fixture(scope="module")
def driver(
    real_node: RealNode, plugin_image: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[RealNode, Path, Path]]:
    """The DRA objects applied and ``gpustack-dra-plugin`` running on the node; yields the node,
    the plugin's CDI root and its log."""
    cp = real_node.cp
    work = tmp_path_factory.mktemp("dra")
    listed = json.dumps({"apiVersion": "v1", "kind": "List", "items": _objects()})
    cp.kubectl("apply", "--server-side", "-f", "-", stdin=listed)
    token = cp.kubectl(
        "create", "token", dra_driver.KUBELET_PLUGIN_SA, "-n", NAMESPACE,
        "--bound-object-kind=Node", f"--bound-object-name={NODE_NAME}",
    )  # fmt: skip
    (work / "token").write_text(token)
    (work / "config.yaml").write_text(yaml.safe_dump(CONFIG))
    cdi_root = real_node.cdi_dir
    env = {
        **os.environ,
        "CONFIG_FILE": str(work / "config.yaml"),
        "NODE_NAME": NODE_NAME,
        "KUBERNETES_API_SERVER": cp.server,
        "KUBERNETES_TOKEN_FILE": str(work / "token"),
        "KUBERNETES_CA_FILE": str(cp.root / "pki" / "ca.crt"),
        "CDI_ROOT": str(cdi_root),
        "RESYNC_SECONDS": "2",
    }
    log_path = work / "plugin.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpustack.plugin.dra.main"],
            env=env, stdout=log, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
    cp.kubectl("create", "namespace", TEST_NAMESPACE)
    try:
        yield real_node, cdi_root, log_path
    finally:
        cp.kubectl("delete", "namespace", TEST_NAMESPACE, "--wait=true", "--timeout=90s",
                   check=False)  # fmt: skip
        proc.terminate()
        proc.wait(timeout=20)
        cp.kubectl("delete", "-f", "-", "--ignore-not-found", stdin=listed, check=False)
        cp.kubectl("delete", "resourceslices", "--all", check=False)
        print(log_path.read_text()[-3000:])


def test_the_kubelet_registers_the_driver(driver: tuple[RealNode, Path, Path]) -> None:
    node, _, log = driver
    until(
        lambda: f"registered with the kubelet as {dra_upstream.GPU_DRIVER}" in log.read_text(),
        "the kubelet to register the DRA driver",
        seconds=90,
    )
    slices = json.loads(node.cp.kubectl("get", "resourceslices", "-o", "json"))["items"]
    ours = [s for s in slices if s["spec"].get("nodeName") == NODE_NAME]
    assert [d["name"] for s in ours for d in s["spec"]["devices"]] == ["gpu-0", "gpu-1"]


def _claim_pod(node: RealNode, image: str) -> None:
    attrs = f"device.attributes['{dra_upstream.GPU_DRIVER}']"
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "one-h100", "namespace": TEST_NAMESPACE},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": dra_upstream.GPU_DEVICE_CLASS,
                            "selectors": [
                                {"cel": {"expression": f"{attrs}.productName == '{PRODUCT}'"}}
                            ],
                        },
                    }
                ]
            }
        },
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "one-h100", "namespace": TEST_NAMESPACE},
        "spec": {
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "one-h100"}],
            "containers": [
                {
                    "name": "c",
                    "image": image,
                    "command": ["sleep", "3600"],
                    "resources": {"claims": [{"name": "gpu"}]},
                }
            ],
            "terminationGracePeriodSeconds": 1,
        },
    }
    for obj in (claim, pod):
        node.cp.kubectl("create", "-f", "-", stdin=json.dumps(obj))


def test_the_kubelet_prepares_a_claim_before_the_container_starts(
    driver: tuple[RealNode, Path, Path], plugin_image: tuple[Path, str]
) -> None:
    node, cdi_root, _ = driver
    cp = node.cp
    until(lambda: bool(cp.kubectl("get", "resourceslices", "-o", "name")), "the slices")
    # the claiming pod runs the plugin image (it has a shell): in the node's store whichever
    # test runs first
    node.import_image(*plugin_image)
    _claim_pod(node, plugin_image[1])

    def pod() -> dict[str, Any]:
        found: dict[str, Any] = json.loads(
            cp.kubectl("get", "pod", "one-h100", "-n", TEST_NAMESPACE, "-o", "json")
        )
        return found

    until(
        lambda: pod()["status"].get("phase") == "Running",
        "the claiming pod to run",
        explain=lambda: node_story(node, TEST_NAMESPACE),
    )
    claim = json.loads(
        cp.kubectl("get", "resourceclaim", "one-h100", "-n", TEST_NAMESPACE, "-o", "json")
    )
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    assert (result["driver"], result["pool"]) == (dra_upstream.GPU_DRIVER, NODE_NAME)
    spec_path = cdi_root / claims.spec_file(dra_upstream.GPU_DRIVER, claim["metadata"]["uid"])
    assert spec_path.exists(), sorted(os.listdir(cdi_root))
    cdi_spec = json.loads(spec_path.read_text())
    (device,) = cdi_spec["devices"]
    assert device["name"] == f"{claim['metadata']['uid']}-{result['device']}"

    env = container_spec(node, pod(), "c")["process"]["env"]
    wanted = device["containerEdits"]["env"]
    applied = {e for e in wanted if e in env}
    print(f"containerd {node.containerd_version()}: applies CDI devices: {node.applies_cdi()}")
    # containerd 1.7+ (CDI enabled by node.py) gives the container the spec's edits; 1.6 none
    assert applied == (set(wanted) if node.applies_cdi() else set()), (wanted, env)

    cp.kubectl("delete", "pod", "one-h100", "-n", TEST_NAMESPACE, "--wait=true")
    until(lambda: not spec_path.exists(), "the kubelet to unprepare the claim", seconds=90)
