"""gpustack's simulated DRA driver on the real control plane: its ResourceSlices are what the real
scheduler allocates claims from.

The h100-dra cluster folder's DRA objects are applied (the kubelet plugin's ServiceAccount,
ClusterRole and the ResourceSlice admission policy); a fake node of DRA's pool gets the plugin's
DaemonSet pod bound by the scheduler; a token bound to that pod (so it carries the pod's node, as
the kubelet's projected token does) is what ``gpustack-dra-plugin`` runs with, so the slices are
published through exactly the RBAC rules and the admission policy gpustack synthesizes. A
ResourceClaim for one H100 is then allocated by the scheduler from those slices, and a claim for
a GPU the node does not have is not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from gpustack import dra_upstream
from gpustack.constructs import dra_driver
from tests.e2e import dra
from tests.e2e.controlplane import ControlPlane
from tests.e2e.folder import CLUSTERS, node_manifest, node_status
from tests.e2e.rollout import until

FOLDER = CLUSTERS / "h100-dra"
NODE = "sim-dra-0"
NAMESPACE = "gpustack-system"
CONFIG = {
    "version": "v1",
    "gpustack": {
        "backend": "simulated",
        "simulated": {"gpus": [{"index": i, "product": "NVIDIA H100 80GB HBM3"} for i in range(2)]},
    },
}


def _objects() -> list[dict[str, Any]]:
    """The folder's namespace and its DRA driver objects (all but the controller-less rest)."""
    out: list[dict[str, Any]] = []
    for sub in ("common", "dra-driver"):
        for path in sorted((FOLDER / sub).glob("*.yaml")):
            out += [d for d in yaml.safe_load_all(path.read_text()) if d]
    # the Namespace first: one apply creates the objects in order
    kept = [o for o in out if o["kind"] not in ("RuntimeClass", "NetworkPolicy")]
    return sorted(kept, key=lambda o: o["kind"] != "Namespace")


@pytest.fixture(scope="module")
def published(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[ControlPlane, subprocess.Popen[str]]]:
    cp = control_plane
    work = tmp_path_factory.mktemp("simulated-dra")
    cp.kubectl(
        "apply",
        "--server-side",
        "-f",
        "-",
        stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": _objects()}),
    )
    labels = {"nvidia.com/gpu.present": "true", "nvidia.com/gpu.allocation": "dra"}
    cp.kubectl("apply", "-f", "-", stdin=json.dumps(node_manifest(NODE, labels)))
    cp.kubectl(
        "patch", "node", NODE, "--subresource=status", "--type=merge",
        "-p", json.dumps(node_status({})),
    )  # fmt: skip
    cp.kubectl("taint", "node", NODE, "node.kubernetes.io/not-ready:NoSchedule-", check=False)

    def plugin_pod() -> str:
        pods = json.loads(cp.kubectl("get", "pods", "-n", NAMESPACE, "-o", "json"))["items"]
        for p in pods:
            if p["spec"].get("nodeName") == NODE and p["metadata"]["labels"].get("app") == (
                dra_driver.KUBELET_PLUGIN
            ):
                return str(p["metadata"]["name"])
        return ""

    until(lambda: bool(plugin_pod()), seconds=60)
    pod = plugin_pod()
    assert pod, "the scheduler bound no DRA kubelet plugin pod to the DRA node"
    token = cp.kubectl(
        "create", "token", dra_driver.KUBELET_PLUGIN_SA, "-n", NAMESPACE,
        "--bound-object-kind=Pod", f"--bound-object-name={pod}",
    )  # fmt: skip
    (work / "token").write_text(token)
    (work / "config.yaml").write_text(yaml.safe_dump(CONFIG))
    env = {
        **os.environ,
        "CONFIG_FILE": str(work / "config.yaml"),
        "NODE_NAME": NODE,
        "KUBERNETES_API_SERVER": cp.server,
        "KUBERNETES_TOKEN_FILE": str(work / "token"),
        "KUBERNETES_CA_FILE": str(cp.root / "pki" / "ca.crt"),
        "KUBELET_REGISTRAR_DIRECTORY_PATH": str(work / "registry"),
        "KUBELET_PLUGINS_DIRECTORY_PATH": str(work / "plugins"),
        "CDI_ROOT": str(work / "cdi"),
        "RESYNC_SECONDS": "2",
    }
    log = (work / "plugin.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpustack.plugin.dra.main"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield cp, proc
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()
        # as the tier's teardown: pods bound to a node without a kubelet never finish a graceful
        # deletion, so their owners go first (orphaning them), then the pods at once
        cp.kubectl(
            "delete", "daemonsets", "--all", "-n", NAMESPACE, "--cascade=orphan", check=False
        )
        for kind in ("pods", "resourceclaims"):
            cp.kubectl(
                "delete", kind, "--all", "-n", NAMESPACE, "--force", "--grace-period=0", check=False
            )
        listed = json.dumps({"apiVersion": "v1", "kind": "List", "items": _objects()})
        cp.kubectl(
            "delete", "-f", "-", "--ignore-not-found", "--wait=false", stdin=listed, check=False
        )
        cp.kubectl("delete", "resourceslices", "--all", check=False)
        cp.kubectl("delete", "nodes", "--all", "--wait=false", check=False)
        print((work / "plugin.log").read_text()[-3000:])


def _slices(cp: ControlPlane) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(cp.kubectl("get", "resourceslices", "-o", "json"))[
        "items"
    ]
    return [s for s in found if s["spec"].get("nodeName") == NODE]


def test_the_plugin_publishes_its_nodes_gpus_through_gpustacks_rbac_and_policy(
    published: tuple[ControlPlane, subprocess.Popen[str]],
) -> None:
    cp, proc = published
    until(lambda: bool(_slices(cp)) or proc.poll() is not None, seconds=60)
    assert proc.poll() is None, "gpustack-dra-plugin exited"
    (slice_,) = _slices(cp)
    assert slice_["spec"]["driver"] == dra_upstream.GPU_DRIVER
    assert slice_["spec"]["pool"]["name"] == NODE
    assert [d["name"] for d in slice_["spec"]["devices"]] == ["gpu-0", "gpu-1"]


def test_the_real_scheduler_allocates_from_the_simulated_slices(
    published: tuple[ControlPlane, subprocess.Popen[str]],
) -> None:
    cp, _ = published
    until(lambda: bool(_slices(cp)), seconds=60)
    attrs = f"device.attributes['{dra_upstream.GPU_DRIVER}']"
    dra.claim_pod(cp, NAMESPACE, "one-h100", f"{attrs}.productName == 'NVIDIA H100 80GB HBM3'")
    dra.claim_pod(cp, NAMESPACE, "one-b200", f"{attrs}.productName == 'NVIDIA B200'")

    def node_of(pod: str) -> str:
        return cp.kubectl("get", "pod", pod, "-n", NAMESPACE, "-o", "jsonpath={.spec.nodeName}")

    until(lambda: node_of("one-h100") == NODE, seconds=60)
    assert node_of("one-h100") == NODE
    claim = json.loads(
        cp.kubectl("get", "resourceclaim", "one-h100", "-n", NAMESPACE, "-o", "json")
    )
    (result,) = claim["status"]["allocation"]["devices"]["results"]
    assert (result["driver"], result["pool"]) == (dra_upstream.GPU_DRIVER, NODE)
    assert result["device"] in ("gpu-0", "gpu-1")
    time.sleep(3)
    assert node_of("one-b200") == ""
