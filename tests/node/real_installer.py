"""NVIDIA's own toolkit installer, run the way gpustack's toolkit DaemonSet runs it.

The binaries are built by hand from NVIDIA/nvidia-container-toolkit at each tag (never
committed) and found through ``$NVIDIA_CTK_INSTALLER_DIR/<tag>/{nvidia-ctk-installer,nvidia-ctk}``.
A pod is a mount namespace made with bubblewrap (Debian's ``bwrap``): the synthesized
container's ``volumeMounts`` are bound onto a fake host root exactly as its ``hostPath``
volumes say, ConfigMap volumes hold the synthesized data, and the rest of the container's
filesystem is a stand-in for NVIDIA's image (v1.20.0 ``deployments/container/Dockerfile``):
``/work/nvidia-ctk-installer`` with its ``nvidia-toolkit`` link, and the packages' files under
``/artifacts/deb`` (``nvidia-ctk`` real, the runtime wrappers and libnvidia-container
stand-ins: the installer only copies them). The container runs gpustack's own
``entrypoint.sh`` unchanged, so the installer gets the synthesized env; the only overrides are
the restart mode (``none``: no runtime to signal here) and the source of a ``containerd config
dump`` (none on a fake root, so ``command`` fails over to the next source as on a node whose
containerd is not on the host's ``PATH``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from gpustack.constructs import SynthObject
from gpustack.constructs.kube import VALIDATIONS_DIR
from gpustack.profile.model.driver import Driver

from .devtree import NVIDIA_NODES, make_nodes
from .pod import PodView

INSTALLER_VAR = "NVIDIA_CTK_INSTALLER_DIR"
SCRIPTS = "nvidia-container-toolkit-scripts"
ENTRYPOINT = "/usr/local/lib/gpustack/entrypoint.sh"
PROBE = "/usr/local/lib/gpustack/ready-probe.sh"
DRIVER_VERSION = Driver().version
BINARIES = ("nvidia-ctk-installer", "nvidia-ctk")
#: Runtime binaries the image's packages carry (nvidia-container-toolkit-base and
#: libnvidia-container-tools); the installer wraps each runtime in a shell script.
STAND_IN_EXECUTABLES = (
    "nvidia-container-runtime",
    "nvidia-container-runtime.cdi",
    "nvidia-container-runtime.legacy",
    "nvidia-container-runtime-hook",
    "nvidia-cdi-hook",
    "nvidia-container-cli",
)
STAND_IN_LIBRARIES = ("libnvidia-container.so.1.18.0", "libnvidia-container-go.so.1.18.0")
LIB_DIR = "usr/lib/x86_64-linux-gnu"
#: What the installer logs once it has configured the runtime and waits for its stop signal
#: (``cmd/nvidia-ctk-installer/main.go``, ``waitForSignal``, v1.18.1 and v1.20.0).
WAITING = "Waiting for signal"
#: ``/proc/devices`` of a node with NVIDIA's kernel modules loaded (the character majors the
#: driver registers; 195 is fixed, the others dynamic): the installer reads it to make the
#: control device nodes (``CREATE_DEVICE_NODES``, default ``control``).
PROC_DEVICES = """\
Character devices:
  1 mem
  4 tty
195 nvidia-frontend
195 nvidia
195 nvidiactl
509 nvidia-caps-imex-channels
510 nvidia-caps
511 nvidia-uvm

Block devices:
  7 loop
"""


def missing_binaries(tag: str) -> str | None:
    """Why NVIDIA's binaries of ``tag`` cannot run here, or ``None``."""
    folder = os.environ.get(INSTALLER_VAR)
    if not folder:
        return f"{INSTALLER_VAR} is not set (a folder with <tag>/nvidia-ctk-installer)"
    for name in BINARIES:
        path = Path(folder) / tag / name
        if not os.access(path, os.X_OK):
            return f"{path} is missing or not executable"
    if shutil.which("bwrap") is None:
        return "bwrap (Debian's bubblewrap) is not installed"
    return None


def require_binaries(tag: str) -> Path:
    """The folder of ``tag``'s binaries; skips with the reason (also under ``CI=true``: no
    registry ships NVIDIA's installer, it is built by hand)."""
    reason = missing_binaries(tag)
    if reason is not None:
        pytest.skip(reason)
    return Path(os.environ[INSTALLER_VAR]) / tag


def make_image(binaries: Path, image: Path) -> Path:
    """A stand-in for the toolkit image's own files (``/work`` and ``/artifacts``)."""
    work = image / "work"
    work.mkdir(parents=True)
    shutil.copy2(binaries / "nvidia-ctk-installer", work / "nvidia-ctk-installer")
    (work / "nvidia-toolkit").symlink_to("nvidia-ctk-installer")
    deb = image / "artifacts" / "deb"
    (deb / "usr/bin").mkdir(parents=True)
    shutil.copy2(binaries / "nvidia-ctk", deb / "usr/bin/nvidia-ctk")
    for name in STAND_IN_EXECUTABLES:
        path = deb / "usr/bin" / name
        path.write_text(f"#!/bin/sh\necho {name} is a stand-in >&2\nexit 1\n")
        path.chmod(0o755)
    (image / "proc-devices").write_text(PROC_DEVICES)
    (deb / LIB_DIR).mkdir(parents=True)
    for name in STAND_IN_LIBRARIES:
        (deb / LIB_DIR / name).write_bytes(b"\x7fELF stand-in")
        (deb / LIB_DIR / name.rsplit(".so.", 1)[0]).with_suffix(".so.1").symlink_to(name)
    return image


@dataclass
class Pod:
    """One container of a synthesized pod, as a mount namespace over a fake host root."""

    container: Mapping[str, Any]
    pod_spec: Mapping[str, Any]
    root: Path
    image: Path
    configmaps: Mapping[str, Mapping[str, str]]
    scratch: Path
    env_override: Mapping[str, str] = field(default_factory=dict)

    def _volume_binds(self) -> list[tuple[str, list[str]]]:
        volumes = {v["name"]: v for v in self.pod_spec.get("volumes", [])}
        binds: list[tuple[str, list[str]]] = []
        for m in self.container.get("volumeMounts", []):
            volume = volumes[m["name"]]
            target = m["mountPath"].rstrip("/") or "/"
            flag = "--ro-bind" if m.get("readOnly") else "--bind"
            if "hostPath" in volume:
                host = self.root / volume["hostPath"]["path"].lstrip("/")
                if volume["hostPath"].get("type") in (None, "", "DirectoryOrCreate", "Directory"):
                    host.mkdir(parents=True, exist_ok=True)  # the kubelet's (or runtime's) mkdir
                source = host
            elif "configMap" in volume:
                source = self.scratch / "configmaps" / m["name"]
                source.mkdir(parents=True, exist_ok=True)
                for key, text in self.configmaps[volume["configMap"]["name"]].items():
                    (source / key).write_text(text)
            else:
                source = self.scratch / "volumes" / m["name"]
                source.mkdir(parents=True, exist_ok=True)
            binds.append((target, [flag, str(source), target]))
        # Outer mounts first, so a mount inside another one is not hidden by it.
        binds.sort(key=lambda b: b[0].count("/") if b[0] != "/" else 0)
        return binds

    def host_path(self, path: str) -> str | None:
        """The host path behind a container path (``None``: not on a host mount)."""
        return PodView.of(self.container, self.pod_spec, self.root, self.scratch).host_path(path)

    def argv(self, command: Sequence[str]) -> list[str]:
        args = [
            "bwrap",
            "--die-with-parent",
            *(["--cap-add", "ALL"] if self.privileged else []),
            # The image's own /usr: the machine's programs, with /usr itself left writable in
            # the namespace so that mount points under /usr/local can be made.
            "--ro-bind", "/usr/bin", "/usr/bin",
            "--ro-bind", "/usr/sbin", "/usr/sbin",
            "--ro-bind", "/usr/lib", "/usr/lib",
            "--ro-bind-try", "/usr/lib64", "/usr/lib64",
            "--symlink", "usr/bin", "/bin",
            "--symlink", "usr/sbin", "/sbin",
            "--symlink", "usr/lib", "/lib",
            "--symlink", "usr/lib64", "/lib64",
            "--ro-bind", "/etc", "/etc",
            "--proc", "/proc",
            "--ro-bind", str(self.image / "proc-devices"), "/proc/devices",
            "--dev", "/dev",
            "--tmpfs", "/tmp",
            "--dir", "/run",
            "--symlink", "../run", "/var/run",
            "--ro-bind", str(self.image / "work"), "/work",
            "--ro-bind", str(self.image / "artifacts"), "/artifacts",
        ]  # fmt: skip
        for _, bind in self._volume_binds():
            args += bind
        return [*args, "--", *command]

    @property
    def privileged(self) -> bool:
        return bool(self.container.get("securityContext", {}).get("privileged"))

    def env(self) -> dict[str, str]:
        env = {"PATH": "/work:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
        for item in self.container.get("env", []):
            if "value" in item:
                env[item["name"]] = item["value"]
        env.update(self.env_override)
        return env

    def run(self, command: Sequence[str], timeout: float = 30) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(command), env=self.env(), capture_output=True, text=True, timeout=timeout
        )

    def start(self, command: Sequence[str], log: Path) -> subprocess.Popen[bytes]:
        with log.open("wb") as out:
            return subprocess.Popen(
                self.argv(command), env=self.env(), stdout=out, stderr=subprocess.STDOUT
            )


@dataclass
class Running:
    """A started container; :meth:`stop` sends SIGTERM, as the kubelet does."""

    process: subprocess.Popen[bytes]
    log: Path

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, needle: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in self.text():
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(
            f"{needle!r} not seen (exit {self.process.poll()}); log:\n{self.text()[-4000:]}"
        )

    def stop(self, pid_file: Path, timeout: float = 30) -> int:
        """SIGTERM to the installer itself (its pid file names it: the pod shares the host's
        PID namespace), as the kubelet's stop reaches the container's main process."""
        if self.process.poll() is None:
            if pid_file.is_file():
                os.kill(int(pid_file.read_text().split()[0]), signal.SIGTERM)
            else:  # the installer never started: stop the entrypoint
                self.process.terminate()
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise


def driver_ready(root: Path, objects: list[SynthObject], tmp: Path) -> None:
    """What the driver (its startup probe, or the toolkit's init container for a host driver)
    leaves on the node: device nodes, and ``driver-ready`` naming where they are."""
    host_driver = not any(o.kind == "DaemonSet" and o.name == "nvidia-driver-daemonset"
                          for o in objects)  # fmt: skip
    if host_driver:
        driver_root, dev_root, dev_ctr = "/home/kubernetes/bin/nvidia", "/", "/host"
    else:
        driver_root, dev_root, dev_ctr = "/run/nvidia/driver", "/run/nvidia/driver", "/driver-root"
    env = make_nodes(root / dev_root.lstrip("/") / "dev", NVIDIA_NODES, tmp / "shim")
    # The driver's user-space libraries, where each layout keeps them (the installer's CDI
    # management spec takes the driver version from libcuda's file name).
    libs = root / driver_root.lstrip("/") / ("lib64" if host_driver else LIB_DIR)
    libs.mkdir(parents=True, exist_ok=True)
    for lib in ("libcuda.so", "libnvidia-ml.so"):
        (libs / f"{lib}.{DRIVER_VERSION}").write_bytes(b"\x7fELF stand-in")
        (libs / f"{lib}.1").symlink_to(f"{lib}.{DRIVER_VERSION}")
    assert env["PATH"] == os.environ["PATH"], "the probe's stat needs real device nodes"
    validations = root / VALIDATIONS_DIR.lstrip("/")
    validations.mkdir(parents=True, exist_ok=True)
    (validations / "driver-ready").write_text(
        f"IS_HOST_DRIVER={str(host_driver).lower()}\nNVIDIA_DRIVER_ROOT={driver_root}\n"
        f"DRIVER_ROOT_CTR_PATH=/driver-root\nNVIDIA_DEV_ROOT={dev_root}\n"
        f"DEV_ROOT_CTR_PATH={dev_ctr}\n"
    )
