"""NVIDIA's real toolkit installer on each distribution's fake host root (``nvidia_code``).

Per distribution and toolkit tag: the node boots (its own regeneration step), the synthesized
toolkit container runs gpustack's entrypoint, which execs NVIDIA's ``nvidia-ctk-installer``
with the synthesized env and mounts (:mod:`tests.node.real_installer`); the runtime restarts
(regeneration again); then the synthesized startup probe must pass, and every RuntimeClass
handler gpustack writes must be in the config that distribution's runtime loads. When the
installer stops (SIGTERM, as the kubelet stops it), its cleanup takes the runtime config away
again, and the probe must fail even with a pid file in place: a probe that cannot fail is no
probe.

What NVIDIA's installer writes, read at v1.18.1 and v1.20.0 (and seen here):
- containerd with a drop-in: the drop-in file, and the drop-in *folder's glob* added to the
  top-level config's ``imports`` (``pkg/config/engine/containerd/config_drop_in.go``,
  ``importPattern`` and ``ensureImports``; ``removeImports`` on cleanup), mapped to the host
  path of ``RUNTIME_DROP_IN_CONFIG_HOST_PATH``'s folder;
- CRI-O in config mode: only the drop-in under ``crio.conf.d`` (CRI-O reads that folder
  itself); ``crio.conf`` is not touched (``pkg/config/engine/crio``);
- CRI-O in hook mode: ``oci-nvidia-hook.json`` in ``CRIO_HOOKS_DIR``
  (``cmd/nvidia-ctk-installer/container/runtime/crio/crio.go``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpustack.constructs.kube import VALIDATIONS_DIR
from gpustack.profile.model.toolkit import Toolkit
from tests.constructs.conftest import Synth, container, find, merge, pod_spec, profile

from .hostroot import DISTRIBUTIONS, Distribution, Loaded
from .installer import DEFAULT_HOOKS_DIR
from .real_installer import (
    ENTRYPOINT,
    PROBE,
    SCRIPTS,
    WAITING,
    Pod,
    Running,
    driver_ready,
    make_image,
    require_binaries,
)
from .test_runtime_config import run_node

pytestmark = pytest.mark.nvidia_code

DS = "nvidia-container-toolkit-daemonset"
CTR = "nvidia-container-toolkit-ctr"
#: The toolkit tags gpustack supports: the default (what the GPU Operator v26.7.0 ships) and
#: v1.18.1 (GPU Operator v25.10.x), whose installer gpustack's settings must also work with.
TAGS = tuple(dict.fromkeys((Toolkit().version, "v1.18.1")))
BY_NAME = {d.name: d for d in DISTRIBUTIONS}
#: Every distribution the schema accepts, with the profile sections that pick its mode.
CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("containerd-1.7", "containerd-1.7", {}),
    ("containerd-2.x", "containerd-2.x", {}),
    ("k3s", "k3s", {}),
    ("rke2", "rke2", {}),
    ("microk8s", "microk8s", {}),
    ("k0s", "k0s", {}),
    ("k0s-1.36", "k0s-1.36", {}),
    ("crio-config", "crio", {}),
    ("crio-hook", "crio", {"toolkit": {"cdi": {"enabled": False}}}),
    ("openshift-hook", "crio-rhcos", {"toolkit": {"cdi": {"enabled": False}}}),
    ("gke", "gke-cos", {}),
]


def _objects(synth: Synth, dist: Distribution, sections: dict[str, Any], tag: str) -> list[Any]:
    base = merge(profile(cluster={"runtime": dist.runtime, **dist.cluster}), dist.sections)
    return synth(merge(merge(base, sections), {"toolkit": {"version": tag}}))


@pytest.fixture(scope="session")
def images(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    made: dict[str, Path] = {}
    for tag in TAGS:
        folder = require_binaries(tag)
        made[tag] = make_image(folder, tmp_path_factory.mktemp(f"image-{tag}"))
    return made


class Node:
    """One fake node with the toolkit DaemonSet's container running NVIDIA's installer."""

    def __init__(
        self, synth: Synth, name: str, sections: dict[str, Any], tag: str, tmp: Path, image: Path
    ) -> None:
        self.dist = BY_NAME[name]
        self.root = tmp / "host"
        self.objects = _objects(synth, self.dist, sections, tag)
        ds = find(self.objects, "DaemonSet", DS)
        scripts = find(self.objects, "ConfigMap", SCRIPTS)["data"]
        self.ctr = container(ds, CTR)
        self.install_dir = next(e["value"] for e in self.ctr["env"] if e["name"] == "ROOT")
        self.pod = Pod(
            self.ctr,
            pod_spec(ds),
            self.root,
            image,
            {SCRIPTS: scripts},
            tmp / "container",
            {"RUNTIME_RESTART_MODE": "none"},
        )
        self.log = tmp / "toolkit.log"
        self.dist.build(self.root)
        self.dist.regenerate(self.root)  # the node as it booted
        driver_ready(self.root, self.objects, tmp)

    @property
    def pid_file(self) -> Path:
        path = next(e["value"] for e in self.ctr["env"] if e["name"] == "TOOLKIT_PID_FILE")
        host = self.pod.host_path(path)
        assert host is not None, f"{path} is not on a host mount"
        return self.root / host.lstrip("/")

    def start(self) -> Running:
        running = Running(self.pod.start(["sh", ENTRYPOINT], self.log), self.log)
        running.wait_for(WAITING)
        self.dist.regenerate(self.root)  # the runtime restart the installer asked for
        return running

    def probe(self) -> tuple[int, str]:
        result = self.pod.run(["sh", PROBE])
        return result.returncode, result.stdout + result.stderr

    def env(self, name: str) -> str | None:
        return next((e["value"] for e in self.ctr["env"] if e["name"] == name), None)

    def configured(self) -> bool:
        """Whether the installer's own output is on the node (its drop-in, or its OCI hook)
        and the runtime, as this distribution loads its config, runs every handler gpustack's
        RuntimeClasses name with our runtime (CRI-O in hook mode: reads our hook), with every
        import resolved. k3s and RKE2 would still find our runtime without the drop-in (they
        render their own config from the binaries they find), so the output is required too:
        the probe tells whether *this* installer configured the node."""
        if self.env("CRIO_CONFIG_MODE") == "hook":
            hooks = self.root / (self.env("CRIO_HOOKS_DIR") or DEFAULT_HOOKS_DIR).lstrip("/")
            if not list(hooks.glob("*nvidia*.json")):
                return False
        elif not (
            self.root / str(self.env("RUNTIME_DROP_IN_CONFIG_HOST_PATH")).lstrip("/")
        ).is_file():
            return False
        loaded = self.dist.load(self.root)
        if loaded.unresolved:
            return False
        found = loaded.handlers()
        runtime = f"{self.install_dir}/toolkit/nvidia-container-runtime"
        for handler in self.handlers():
            binary = found.get(handler, "")
            if not binary.startswith(runtime) or not (self.root / binary.lstrip("/")).is_file():
                return False
        if loaded.kind == "crio" and not self.handlers():
            return any("nvidia" in h for h in loaded.hooks)
        return True

    def handlers(self) -> list[str]:
        return [o.manifest["handler"] for o in self.objects if o.kind == "RuntimeClass"]


def summary(loaded: Loaded) -> dict[str, Any]:
    """What a runtime loads, as far as gpustack's pods depend on it."""
    return {
        "handlers": loaded.handlers(),
        "runtime_types": loaded.runtime_types() if loaded.kind == "containerd" else {},
        "cdi": loaded.cdi_enabled() if loaded.kind == "containerd" else None,
        "imports": sorted(loaded.imports),
        "unresolved": loaded.unresolved,
        "hooks": sorted(Path(h).name for h in loaded.hooks),
    }


CASE_IDS = [f"{c[0]}-{t}" for t in TAGS for c in CASES]
PARAMS = [(c, t) for t in TAGS for c in CASES]


@pytest.mark.parametrize(("case", "tag"), PARAMS, ids=CASE_IDS)
def test_probe_passes_and_runtime_loads_every_handler(
    synth: Synth,
    tmp_path: Path,
    images: dict[str, Path],
    case: tuple[str, str, dict[str, Any]],
    tag: str,
) -> None:
    node = Node(synth, case[1], case[2], tag, tmp_path, images[tag])
    running = node.start()
    try:
        code, out = node.probe()
        assert code == 0, f"startup probe fails after NVIDIA's installer ran:\n{out}"
        configured = node.root / VALIDATIONS_DIR.lstrip("/") / "toolkit-configured"
        assert configured.is_file()
        assert node.configured(), "the runtime does not load what gpustack's manifests name"
        if tag == TAGS[0]:
            # The fake installer the fast tier uses must leave the same node behind.
            fake, _, _ = run_node(synth, node.dist, tmp_path / "fake", case[2])
            assert summary(fake) == summary(node.dist.load(node.root)), (
                "tests/node/installer.py no longer writes what NVIDIA's installer writes"
            )
    finally:
        exit_code = running.stop(node.pid_file)
    assert exit_code == 0, running.text()[-3000:]
    # After the installer's cleanup (SIGTERM, as the kubelet stops it) and the runtime's
    # restart, with a pid file in place again (a new installer starting), the probe must pass
    # exactly when the node is still configured (:meth:`Node.configured`). NVIDIA's cleanup
    # removes the containerd drop-in and the CRI-O hook; in CRI-O config mode it leaves the
    # drop-in (only a default-runtime setting is reverted: ``cleanupConfig`` in
    # ``cmd/nvidia-ctk-installer/container/runtime/crio/crio.go``).
    node.dist.regenerate(node.root)
    (node.root / VALIDATIONS_DIR.lstrip("/") / "toolkit-configured").unlink()
    node.pid_file.parent.mkdir(parents=True, exist_ok=True)
    node.pid_file.write_text("1\n")
    code, out = node.probe()
    still = node.configured()
    assert (code == 0) == still, f"probe exit {code}, runtime configured: {still}\n{out}"


def test_the_cases_cover_every_distribution_the_schema_accepts() -> None:
    assert {c[1] for c in CASES} == set(BY_NAME) - {"k3s-2023"}
    assert len(PARAMS) >= 16
