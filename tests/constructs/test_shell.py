"""Every shell script the stack ships parses with ``sh`` and is shellcheck-clean.

Scripts run on nodes we never see (ConfigMap scripts, ``sh -c`` init commands, preStop hooks),
so a quoting or syntax slip only shows up as a pod stuck in Init or a probe that never passes.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.tooling import require_tool

from .conftest import Synth, profile

# Profiles that between them render every script variant.
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "host-driver": {"driver": {"enabled": False}},
    "crio-hook": {"cluster": {"runtime": {"name": "crio"}}, "toolkit": {"cdi": {"enabled": False}}},
    "k3s": {"cluster": {"runtime": {"distribution": "k3s"}}},
    "gke-host-driver": {
        "driver": {"enabled": False, "hostDriverRoot": "/home/kubernetes/bin/nvidia"}
    },
    "rdma": {"driver": {"rdma": {"enabled": True}}},
    "no-toolkit": {"toolkit": {"enabled": False}},
    "nvidia-plugin-cdi": {
        "devicePlugin": {"implementation": "nvidia", "deviceListStrategy": ["cdi-cri"]}
    },
}


def _containers(spec: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    yield from spec.get("initContainers", [])
    yield from spec.get("containers", [])


def scripts(manifests: list[Mapping[str, Any]]) -> dict[str, str]:
    """Name -> text of every script: ConfigMap ``*.sh`` and ``sh -c`` commands and hooks."""
    found: dict[str, str] = {}
    for m in manifests:
        name = m["metadata"]["name"]
        if m["kind"] == "ConfigMap":
            for key, text in m.get("data", {}).items():
                if key.endswith(".sh"):
                    found[f"{name}-{key}"] = text
        if m["kind"] not in ("DaemonSet", "Job"):
            continue
        for c in _containers(m["spec"]["template"]["spec"]):
            pre_stop = c.get("lifecycle", {}).get("preStop", {}).get("exec", {})
            for where, command in (
                ("command", c.get("command")),
                ("preStop", pre_stop.get("command")),
            ):
                if command and command[0] == "sh" and command[1] == "-c":
                    found[f"{name}-{c['name']}-{where}.sh"] = f"#!/bin/sh\n{command[2]}\n"
    return found


@pytest.fixture(scope="module")
def all_scripts(synth: Synth) -> dict[str, str]:
    out: dict[str, str] = {}
    for variant, sections in VARIANTS.items():
        manifests = [o.manifest for o in synth(profile(**sections))]
        out.update({f"{variant}/{k}": v for k, v in scripts(manifests).items()})
    return out


def test_the_variants_cover_every_kind_of_script(all_scripts: dict[str, str]) -> None:
    names = {k.split("/", 1)[1] for k in all_scripts}
    assert {
        "nvidia-driver-scripts-startup-probe.sh",
        "nvidia-container-toolkit-scripts-entrypoint.sh",
        "nvidia-container-toolkit-scripts-ready-probe.sh",
        "nvidia-container-toolkit-scripts-wait-for-driver.sh",
        "nvidia-driver-daemonset-nvidia-driver-ctr-preStop.sh",
        "nvidia-device-plugin-daemonset-toolkit-validation-command.sh",
        "nvidia-device-plugin-daemonset-runtime-validation-command.sh",
        "nvidia-container-toolkit-scripts-dev-char-symlinks.sh",
        "nvidia-driver-daemonset-mofed-validation-command.sh",
    } <= names


def test_scripts_parse_and_are_shellcheck_clean(
    all_scripts: dict[str, str], tmp_path: Path
) -> None:
    shellcheck = require_tool("shellcheck")
    paths = []
    for i, (name, text) in enumerate(sorted(all_scripts.items())):
        path = tmp_path / f"{i:02d}-{name.replace('/', '-')}"
        path.write_text(text)
        parsed = subprocess.run(["sh", "-n", str(path)], capture_output=True, text=True)
        assert parsed.returncode == 0, f"{name}: {parsed.stderr}"
        paths.append(str(path))
    # Warnings and errors; "info" (SC1091: sourced file not given) is about the checker only.
    checked = subprocess.run(
        [shellcheck, "--shell=sh", "--severity=warning", *paths], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout
