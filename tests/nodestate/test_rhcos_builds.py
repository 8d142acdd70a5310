"""``gpustack validate --state`` names OpenShift GPU nodes on an RHCOS build the profile lacks
(issue 31 item 3): each driver DaemonSet is pinned to one build, so such a node gets no driver
pod until the build is listed in ``driver.driverToolkit.builds``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpustack.cli import main

OSTREE = "feature.node.kubernetes.io/system-os_release.OSTREE_VERSION"
FIRST, NEXT, LATER = "418.94.202501221327-0", "418.94.202502101302-0", "418.94.202503051200-0"
PROFILES = Path(__file__).parents[2] / "profiles"


def node(name: str, build: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "nvidia.com/gpu.present": "true",
                "feature.node.kubernetes.io/system-os_release.ID": "rhcos",
                "feature.node.kubernetes.io/system-os_release.VERSION_ID": "4.18",
                OSTREE: build,
            },
        },
        "status": {
            "nodeInfo": {
                "kubeletVersion": "v1.31.6",
                "containerRuntimeVersion": "cri-o://1.31.5",
                "osImage": f"Red Hat Enterprise Linux CoreOS {build}",
            }
        },
    }


def validate(tmp_path: Path, builds: dict[str, str]) -> tuple[int, str]:
    state = tmp_path / "state.json"
    items = [node(name, build) for name, build in builds.items()]
    state.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    result = CliRunner().invoke(
        main,
        ["validate", "--state", str(state), str(PROFILES / "openshift-crio-hooks.yaml")],
    )
    return result.exit_code, result.output


def rhcos_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if "(rule: rhcos-build-in-profile)" in line]


def test_nodes_on_the_profiles_builds_pass(tmp_path: Path) -> None:
    _, output = validate(tmp_path, {"gpu-a": FIRST, "gpu-b": NEXT})
    assert rhcos_lines(output) == []


def test_a_node_on_a_build_the_profile_lacks_is_named(tmp_path: Path) -> None:
    code, output = validate(tmp_path, {"gpu-a": FIRST, "gpu-b": NEXT, "gpu-c": LATER})
    (line,) = rhcos_lines(output)
    assert code == 1
    assert "$.driver.driverToolkit.rhcosVersion" in line
    assert f"node gpu-c has RHCOS build {LATER}" in line
    assert "gpu-a" not in line and "gpu-b" not in line
    assert "driver.driverToolkit.builds" in line
