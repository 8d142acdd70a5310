"""The node harness's containerd config loading held to containerd's own (``real_node``).

``tests/node/hostroot.py`` loads each distribution's containerd config in Python: 1.7 replaces
a plugin's whole table with an import's, 2.x merges them. That is a model of containerd
(``services/server/config/config.go`` at v1.7.27, ``cmd/containerd/server/config/config.go`` at
v2.0.0); here containerd itself, built by hand at those tags and found through
``$CONTAINERD_DIR/<tag>/containerd``, runs ``config dump`` on the same node (the fake root
bound at ``/`` in bubblewrap) after the fake installer ran, and what it loads must agree with
the model: the same handlers running the same binaries, CDI on or off alike, runc's cgroup
setting kept alike. Without the binaries the test skips with its reason, also under ``CI=true``
(no registry ships containerd 1.7 or 2.x for this machine: Debian 12 has 1.6).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.constructs.conftest import Synth

from .hostroot import DISTRIBUTIONS, Loaded
from .installer import CRI_PLUGIN
from .test_runtime_config import run_node

pytestmark = pytest.mark.real_node

CONTAINERD_VAR = "CONTAINERD_DIR"
BY_NAME = {d.name: d for d in DISTRIBUTIONS}
#: Per containerd-based distribution: the containerd release whose loading applies (k0s 1.36
#: ships 2.3, which merges imports as 2.0 does) and the top-level file it loads.
CASES: dict[str, tuple[str, str]] = {
    "containerd-1.7": ("v1.7.27", "/etc/containerd/config.toml"),
    "containerd-2.x": ("v2.0.0", "/etc/containerd/config.toml"),
    "gke-cos": ("v2.0.0", "/etc/containerd/config.toml"),
    "microk8s": ("v1.7.27", "/var/snap/microk8s/current/args/containerd.toml"),
    "k0s": ("v1.7.27", "/etc/k0s/containerd.toml"),
    "k0s-1.36": ("v2.0.0", "/etc/k0s/containerd.toml"),
    "k3s": ("v2.0.0", "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"),
    "rke2": ("v2.0.0", "/var/lib/rancher/rke2/agent/etc/containerd/config.toml"),
}


def _containerd(tag: str) -> Path:
    folder = os.environ.get(CONTAINERD_VAR)
    if not folder:
        pytest.skip(f"{CONTAINERD_VAR} is not set (a folder with <tag>/containerd)")
    binary = Path(folder) / tag / "containerd"
    if not os.access(binary, os.X_OK):
        pytest.skip(f"{binary} is missing or not executable")
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap (Debian's bubblewrap) is not installed")
    return binary


def _dump(binary: Path, tag: str, root: Path, config: str) -> dict[str, Any]:
    # containerd 2.0's ``config dump`` prints a version-2 file unmigrated (its CRI tables under
    # the old plugin, ignored); the server migrates each plugin's table before it starts it
    # (``cmd/containerd/server/server.go``, ``ConfigMigration``), and so does ``config migrate``
    # (``cmd/containerd/command/config.go``): that is what a 2.x node runs with.
    command = "migrate" if tag.startswith("v2.") else "dump"
    result = subprocess.run(
        ["bwrap", "--bind", str(root), "/", "--proc", "/proc", "--dev", "/dev",
         "--tmpfs", "/tmp", "--ro-bind", str(binary), "/tmp/containerd",
         "/tmp/containerd", "--config", config, "config", command],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, f"containerd refuses the node's config:\n{result.stderr}"
    return tomllib.loads(result.stdout)


def _what_pods_depend_on(loaded: Loaded) -> dict[str, Any]:
    version = int(loaded.tree.get("version", 2))
    cri = loaded.tree.get("plugins", {}).get(CRI_PLUGIN.get(version, ""), {})
    runc = cri.get("containerd", {}).get("runtimes", {}).get("runc", {})
    # containerd's defaults add runc where a node's file names none; the model reads files only
    handlers = {n: b for n, b in loaded.handlers().items() if n.startswith("nvidia")}
    return {
        "handlers": handlers,
        "cdi": loaded.cdi_enabled(),
        "runc systemd cgroup": runc.get("options", {}).get("SystemdCgroup"),
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_harness_loads_what_containerd_loads(synth: Synth, tmp_path: Path, name: str) -> None:
    tag, config = CASES[name]
    binary = _containerd(tag)
    root = tmp_path / "host"
    modelled, _, _ = run_node(synth, BY_NAME[name], root, {})
    assert not modelled.unresolved
    real = Loaded("containerd", _dump(binary, tag, root, config))
    assert "nvidia" in real.handlers(), f"containerd {tag} loads no nvidia handler"
    assert set(modelled.handlers()) <= set(real.handlers())
    assert _what_pods_depend_on(modelled) == _what_pods_depend_on(real)
