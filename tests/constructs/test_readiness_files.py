"""The readiness graph says what the synthesized scripts do (issue 20, Deliver 2).

``gpustack validate`` checks the waits between pods on :func:`gpustack.profile.graph.graph_edges`,
which the registry rows state (:mod:`gpustack.profile.readiness`). Were a construct to wait for or
write another file than its row says, the check would pass profiles whose pods never start. So
this test reads the waits and writes back out of the manifests, per component: every container's
command and arguments, its probes, and the scripts it runs from a mounted ConfigMap; a wait is
``until [ -f <file> ]``, a write is ``mv -f "$tmp" <file>`` (how every readiness file is
published) or ``touch <file>``. Only files on a hostPath volume count (a file in an emptyDir is
between containers of one pod, such as the Driver Toolkit's ``dir_prepared``), translated to
their host path. Every example's committed folder (dist/ is kept current by ``synth --check``)
and variants for the branches the examples do not take are compared with the graph.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.checker import check_paths
from gpustack.profile.graph import graph_edges
from gpustack.profile.model import Profile
from tests.constructs.conftest import REPO, Synth, profile

WAIT = re.compile(r'until \[ -f "?([^"\s\]]+)"? \]')
WRITES = (re.compile(r'mv -f "\$tmp" "?([^"\s;]+)"?'), re.compile(r'touch "?([^"\s;]+)"?'))
COMPONENT = "app.kubernetes.io/component"

#: Files per component: component -> (waits, writes).
Files = dict[str, tuple[set[str], set[str]]]

VARIANTS: dict[str, dict[str, Any]] = {
    "plugin-off": profile(devicePlugin={"enabled": False}, dcgmExporter={"enabled": True}),
    "plugin-off-mig": profile(
        devicePlugin={"enabled": False},
        gpus={"product": "A100-SXM4-80GB", "mig": {"1g.10gb": 7}},
    ),
    "host-driver": profile(
        driver={"enabled": False},
        dcgmExporter={"enabled": True},
        gpus={"product": "A100-SXM4-80GB", "mig": {"1g.10gb": 7}},
    ),
    "no-toolkit-mps": profile(
        toolkit={"enabled": False},
        dcgmExporter={"enabled": True},
        devicePlugin={
            "implementation": "nvidia",
            "sharing": {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}},
        },
    ),
    "node-config-mps": profile(
        devicePlugin={
            "implementation": "nvidia",
            "nodeConfigs": [
                {
                    "name": "shared",
                    "sharing": {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}},
                }
            ],
        },
    ),
    "rdma-mofed": profile(driver={"rdma": {"enabled": True}}),
    "simulated": profile(devicePlugin={"backend": "simulated"}),
}


def host_path(path: str, mounts: Mapping[str, str | None]) -> str | None:
    """``path`` inside the container as a host path, when it is on a hostPath mount."""
    for mount in sorted(mounts, key=len, reverse=True):
        if path == mount or path.startswith(mount.rstrip("/") + "/"):
            host = mounts[mount]
            return None if host is None else posixpath.join(host, path[len(mount) :].lstrip("/"))
    return None


def container_text(c: Mapping[str, Any]) -> str:
    parts = [*c.get("command", []), *c.get("args", [])]
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        parts += c.get(probe, {}).get("exec", {}).get("command", [])
    return "\n".join(parts)


def pod_files(
    pod: Mapping[str, Any], config_maps: Mapping[str, Mapping[str, str]]
) -> tuple[set[str], set[str]]:
    """The host files one pod's containers wait for, and write."""
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    waits: set[str] = set()
    writes: set[str] = set()
    for c in [*pod.get("initContainers", []), *pod["containers"]]:
        mounts: dict[str, str | None] = {}
        text = container_text(c)
        scripts = []
        for m in c.get("volumeMounts", []):
            volume = volumes[m["name"]]
            mounts[m["mountPath"]] = volume.get("hostPath", {}).get("path")
            if "configMap" in volume:
                data = config_maps.get(volume["configMap"]["name"], {})
                scripts += [v for k, v in data.items() if f"{m['mountPath']}/{k}" in text]
        for script in [text, *scripts]:
            for found, pattern in ((waits, WAIT), *((writes, w) for w in WRITES)):
                for path in pattern.findall(script):
                    if (host := host_path(path, mounts)) is not None:
                        found.add(host)
    return waits, writes


def manifest_files(manifests: Iterable[Mapping[str, Any]]) -> Files:
    """component -> (files its pods wait for, files they write), read from the manifests."""
    manifests = list(manifests)
    config_maps = {
        m["metadata"]["name"]: m.get("data", {}) for m in manifests if m["kind"] == "ConfigMap"
    }
    files: Files = {}
    for m in manifests:
        template = m.get("spec", {}).get("template", {})
        if "spec" not in template:
            continue
        waits, writes = pod_files(template["spec"], config_maps)
        if waits or writes:
            mine = files.setdefault(m["metadata"]["labels"][COMPONENT], (set(), set()))
            mine[0].update(waits)
            mine[1].update(writes)
    return files


def graph_files(p: Profile) -> Files:
    return {
        pods.name: (set(pods.waits), set(pods.writes))
        for pods in graph_edges(p).pods
        if pods.waits or pods.writes
    }


def folder_manifests(cluster: str) -> list[dict[str, Any]]:
    folder = REPO / "dist" / "clusters" / cluster
    docs = []
    for path in sorted(folder.glob("*/*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]
    return docs


def example_profiles() -> list[Path]:
    return sorted((REPO / "profiles").glob("*.yaml"))


@pytest.mark.parametrize("path", example_profiles(), ids=lambda p: p.stem)
def test_every_example_waits_and_writes_what_its_graph_says(path: Path) -> None:
    result = check_paths([path])
    assert result.ok, [str(i) for i in result.issues]
    (checked,) = result.profiles
    found = manifest_files(folder_manifests(checked.profile.name))
    if checked.profile.driver.enabled or checked.profile.toolkit.enabled:
        assert found, "the parser found no readiness file at all"
    assert found == graph_files(checked.profile)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_variant_waits_and_writes_what_its_graph_says(synth: Synth, name: str) -> None:
    found = manifest_files(o.manifest for o in synth(VARIANTS[name]))
    assert found == graph_files(Profile.from_dict(VARIANTS[name]))


def test_the_parser_sees_a_wait_and_a_write_through_a_script() -> None:
    # the toolkit's probe is a script in its ConfigMap, under a hostPath folder
    pod = {
        "volumes": [
            {"name": "v", "hostPath": {"path": "/run/x"}},
            {"name": "s", "configMap": {"name": "cm"}},
            {"name": "e", "emptyDir": {}},
        ],
        "containers": [
            {
                "command": ["sh", "/scripts/probe.sh"],
                "args": ["until [ -f /tmp/e/skip ]; do sleep 1; done"],
                "volumeMounts": [
                    {"name": "v", "mountPath": "/in"},
                    {"name": "s", "mountPath": "/scripts"},
                    {"name": "e", "mountPath": "/tmp/e"},
                ],
            }
        ],
    }
    script = 'until [ -f "/in/a" ]; do sleep 1; done\ntouch "/in/b"\n'
    assert pod_files(pod, {"cm": {"probe.sh": script}}) == ({"/run/x/a"}, {"/run/x/b"})
