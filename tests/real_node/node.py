"""A real node: Debian's containerd (or ``$REAL_NODE_CONTAINERD``), runc and CNI plugins and a
kubelet (``$KUBELET``), registered to a control plane of the e2e tier (tests/e2e/controlplane.py).

Why a real kubelet: the device plugin's registration, ``ListAndWatch`` turning into the node's
allocatable, ``Allocate`` turning into a container's environment, the DaemonSet's
securityContext, mounts and probes under a real runtime: none of that happens on the e2e tier's
fake Nodes.

containerd gets its own root, state, socket and CNI configuration under a temporary folder (its
bridge has its own name and subnet, without masquerading), so nothing of the machine's own
runtime is touched. The kubelet's root is ``/var/lib/kubelet`` because the device plugin API fixes
it: the kubelet serves ``/var/lib/kubelet/device-plugins/kubelet.sock`` whatever its root is, and
the synthesized DaemonSets mount that host path; the node refuses to start when another kubelet
serves it. The kubelet uses the cgroupfs driver (no systemd runs here) and is told to start on a
cgroup v1 host (``failCgroupV1: false``; 1.35+ refuses one by default).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from tests.e2e.controlplane import ControlPlane, free_port, issue, kubeconfig, missing_assets

KUBELET_VAR: Final = "KUBELET"
#: Optional: another containerd binary for the node (e.g. 1.7+, which applies CDI devices;
#: Debian 12's is 1.6). Its shim and runc stay Debian's.
CONTAINERD_VAR: Final = "REAL_NODE_CONTAINERD"
#: The first containerd release that applies the CDI devices the kubelet names (``enable_cdi``).
CDI_CONTAINERD: Final = (1, 7)
#: Debian's containerd, runc and ctr.
RUNTIME_TOOLS: Final = ("containerd", "containerd-shim-runc-v2", "runc", "ctr")
#: Debian's containernetworking-plugins put them here.
CNI_BIN: Final = Path("/usr/lib/cni")
CNI_PLUGINS: Final = ("bridge", "host-local", "loopback")
#: What builds the sandbox and plugin images (tests/real_node/images.py).
BUILD_TOOLS: Final = ("gcc", "buildah", "mmdebstrap", "kubectl", "openssl")
KUBELET_ROOT: Final = Path("/var/lib/kubelet")
DEVICE_PLUGIN_SOCKET: Final = KUBELET_ROOT / "device-plugins" / "kubelet.sock"
NODE_NAME: Final = "real-node"
BRIDGE: Final = "gpustack-rn0"
POD_SUBNET: Final = "10.233.0.0/24"
START_TIMEOUT: Final = 180.0
#: linux/capability.h: lowering a process's ``oom_score_adj`` below its parent's needs it.
CAP_SYS_RESOURCE: Final = 24


def may_lower_oom_score() -> bool:
    """This process holds ``CAP_SYS_RESOURCE``. Some sandboxes run root without it: the kubelet
    asks for -998 on every pod sandbox (pkg/kubelet/qos/policy.go), runc's init then fails to
    write it ("failed to update /proc/self/oom_score_adj: Permission denied", which the kubelet
    reports only as "can't get final child's PID from pipe: EOF") and no pod ever starts."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> CAP_SYS_RESOURCE & 1)
    return False


def _serving(path: Path) -> bool:
    """Something accepts connections on the unix socket ``path``."""
    with socket.socket(socket.AF_UNIX) as s:
        try:
            s.connect(str(path))
        except OSError:
            return False
    return True


def missing_node(environ: dict[str, str] | None = None) -> str | None:
    """Why the tier cannot run here (``None`` when it can)."""
    env = dict(os.environ) if environ is None else environ
    kubelet = env.get(KUBELET_VAR, "")
    if not kubelet:
        return f"{KUBELET_VAR} is not set (a kubelet binary; see docs/how-to/e2e.md)"
    if not os.access(kubelet, os.X_OK):
        return f"{KUBELET_VAR}={kubelet} is not an executable file"
    reason = missing_assets(env)
    if reason is not None:
        return reason
    containerd = env.get(CONTAINERD_VAR, "")
    if containerd and not os.access(containerd, os.X_OK):
        return f"{CONTAINERD_VAR}={containerd} is not an executable file"
    absent = [t for t in (*RUNTIME_TOOLS, *BUILD_TOOLS) if shutil.which(t) is None]
    if absent:
        return f"not installed: {', '.join(absent)} (apt-get install containerd runc buildah ...)"
    plugins = [p for p in CNI_PLUGINS if not os.access(CNI_BIN / p, os.X_OK)]
    if plugins:
        return (
            f"CNI plugins missing in {CNI_BIN}: {', '.join(plugins)} (containernetworking-plugins)"
        )
    if os.geteuid() != 0:
        return "a kubelet and containerd need root"
    if _serving(DEVICE_PLUGIN_SOCKET):
        return f"another kubelet serves {DEVICE_PLUGIN_SOCKET}"
    return None


def _unmount_under(root: Path) -> None:
    """Unmount everything mounted under ``root`` (deepest first): pod volumes, overlay rootfs,
    network namespaces left by a killed runtime."""
    prefix = str(root).rstrip("/") + "/"
    with open("/proc/self/mounts") as mounts:
        points = [line.split()[1] for line in mounts]
    # The kubelet also bind-mounts its root onto itself (mount propagation): that one too.
    mine = {p for p in points if p.startswith(prefix) or p == str(root)}
    for point in sorted(mine, key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)


def _wait(ready: Callable[[], bool], what: str, procs: dict[str, subprocess.Popen[bytes]],
          logs: Path, timeout: float = START_TIMEOUT) -> None:  # fmt: skip
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name, proc in procs.items():
            if proc.poll() is not None:
                raise RuntimeError(
                    f"{name} exited {proc.returncode}:\n{log_tail(logs / f'{name}.log')}"
                )
        if ready():
            return
        time.sleep(0.5)
    tails = "\n".join(f"--- {n}\n{log_tail(logs / f'{n}.log')}" for n in procs)
    raise TimeoutError(f"timed out waiting for {what}:\n{tails}")


def log_tail(path: Path, lines: int = 40) -> str:
    if not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


@dataclass
class RealNode:
    """containerd and a kubelet registered as :data:`NODE_NAME`; :meth:`stop` removes every
    container, mount and file they made."""

    cp: ControlPlane
    kubelet: Path
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="gpustack-node-")))
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    made_kubelet_root: bool = False
    containerd: str = field(default_factory=lambda: os.environ.get(CONTAINERD_VAR) or "containerd")

    @property
    def socket(self) -> Path:
        return self.root / "containerd.sock"

    @property
    def cdi_dir(self) -> Path:
        """Where containerd reads CDI specs (when it applies them: :meth:`applies_cdi`)."""
        return self.root / "cdi"

    def containerd_version(self) -> tuple[int, int]:
        out = subprocess.run([self.containerd, "--version"], capture_output=True, text=True).stdout
        found = re.search(r"\sv?(\d+)\.(\d+)\.\d+", out)
        assert found, out
        return int(found[1]), int(found[2])

    def applies_cdi(self) -> bool:
        """The node's containerd injects the CDI devices the kubelet names for a claim."""
        return self.containerd_version() >= CDI_CONTAINERD

    @classmethod
    def start(cls, cp: ControlPlane, kubelet: Path, sandbox: Path) -> RealNode:
        """Start containerd, import the sandbox image archive ``sandbox`` (its one image is the
        sandbox image) and start the kubelet; returns once the Node is Ready."""
        node = cls(cp=cp, kubelet=kubelet)
        try:
            node._start(sandbox)
        except BaseException:
            node.stop()
            raise
        return node

    def _spawn(self, name: str, args: list[str]) -> None:
        log = (self.root / f"{name}.log").open("wb")
        self.procs[name] = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        log.close()

    def ctr(self, *args: str) -> str:
        """``ctr`` in the kubelet's namespace (``k8s.io``) of this node's containerd."""
        done = subprocess.run(
            ["ctr", f"--address={self.socket}", "--namespace=k8s.io", *args],
            capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"ctr {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
        return done.stdout

    def import_image(self, archive: Path, *tags: str) -> str:
        """Import an OCI archive of one image; tag it also as each of ``tags``. Returns the
        name it was imported as."""
        self.ctr("images", "import", "--all-platforms", str(archive))
        names = [line.split()[0] for line in self.ctr("images", "ls").splitlines()[1:]]
        annotated = json.loads(
            subprocess.run(
                ["tar", "-xOf", str(archive), "index.json"], capture_output=True, check=True
            ).stdout
        )
        (manifest,) = annotated["manifests"]
        ref = manifest["annotations"]["org.opencontainers.image.ref.name"]
        imported = next(n for n in names if n == ref or n.endswith("/" + ref) or ref in n)
        for tag in tags:
            self.ctr("images", "tag", "--force", imported, tag)
        return imported

    def _start(self, sandbox: Path) -> None:
        cni = self.root / "cni"
        cni.mkdir()
        (cni / "10-gpustack-real-node.conflist").write_text(
            json.dumps(
                {
                    "cniVersion": "1.0.0",
                    "name": "gpustack-real-node",
                    "plugins": [
                        {
                            "type": "bridge",
                            "bridge": BRIDGE,
                            "isGateway": True,
                            "ipMasq": False,
                            "hairpinMode": True,
                            "ipam": {
                                "type": "host-local",
                                "dataDir": str(self.root / "ipam"),
                                "ranges": [[{"subnet": POD_SUBNET}]],
                            },
                        },
                        {"type": "loopback"},
                    ],
                }
            )
        )
        sandbox_image = json.loads(
            subprocess.run(
                ["tar", "-xOf", str(sandbox), "index.json"], capture_output=True, check=True
            ).stdout
        )["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"]
        config = self.root / "containerd.toml"
        cri = 'plugins."io.containerd.grpc.v1.cri"'
        self.cdi_dir.mkdir()
        cdi = (
            f'  enable_cdi = true\n  cdi_spec_dirs = ["{self.cdi_dir}"]\n'
            if self.applies_cdi()
            else ""
        )
        config.write_text(
            f"""version = 2
root = "{self.root / "containerd-root"}"
state = "{self.root / "containerd-state"}"
[grpc]
  address = "{self.socket}"
[ttrpc]
  address = "{self.socket}.ttrpc"
[{cri}]
  sandbox_image = "{sandbox_image}"
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = {str(not may_lower_oom_score()).lower()}
{cdi}  [{cri}.cni]
    bin_dir = "{CNI_BIN}"
    conf_dir = "{cni}"
  [{cri}.containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [{cri}.containerd.runtimes.runc.options]
      SystemdCgroup = false
"""
        )
        self._spawn("containerd", [self.containerd, f"--config={config}"])
        _wait(lambda: _serving(self.socket), "containerd", self.procs, self.root)
        self.import_image(sandbox)

        pki = self.cp.root / "pki"
        issue(pki, "kubelet", f"system:node:{NODE_NAME}", "system:nodes")
        kubeconfig(self.root / "kubelet.kubeconfig", self.cp.server, pki, "kubelet")
        kubelet_config = self.root / "kubelet.json"
        kubelet_config.write_text(json.dumps(self._kubelet_configuration(pki), indent=1))
        if not KUBELET_ROOT.exists():
            KUBELET_ROOT.mkdir(parents=True)
            self.made_kubelet_root = True
        self._spawn(
            "kubelet",
            [
                str(self.kubelet),
                f"--config={kubelet_config}",
                f"--kubeconfig={self.root / 'kubelet.kubeconfig'}",
                f"--root-dir={KUBELET_ROOT}",
                f"--cert-dir={self.root / 'kubelet-pki'}",
                f"--hostname-override={NODE_NAME}",
                "--node-ip=127.0.0.1",
                "--v=2",
            ],
        )
        _wait(self._ready, f"Node {NODE_NAME} to be Ready", self.procs, self.root)

    def _kubelet_configuration(self, pki: Path) -> dict[str, object]:
        return {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "containerRuntimeEndpoint": f"unix://{self.socket}",
            # No systemd runs here; containerd is configured with cgroupfs too.
            "cgroupDriver": "cgroupfs",
            # This machine mounts cgroup v1 (with v2 only at /sys/fs/cgroup/unified).
            "failCgroupV1": False,
            "failSwapOn": False,
            "address": "127.0.0.1",
            "port": free_port(),
            "readOnlyPort": 0,
            "healthzPort": free_port(),
            "authentication": {
                "anonymous": {"enabled": False},
                "webhook": {"enabled": False},
                "x509": {"clientCAFile": str(pki / "ca.crt")},
            },
            "authorization": {"mode": "AlwaysAllow"},
            "podLogsDir": str(self.root / "pod-logs"),
            "enforceNodeAllocatable": [],
            # A test machine's disk may be fuller than the kubelet's defaults allow.
            "evictionHard": {
                "memory.available": "1Mi",
                "nodefs.available": "1%",
                "imagefs.available": "1%",
                "nodefs.inodesFree": "1%",
            },
            "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            "nodeStatusUpdateFrequency": "2s",
            "syncFrequency": "5s",
            "resolvConf": "/etc/resolv.conf",
        }

    def _ready(self) -> bool:
        done = self.cp.run(
            "get", "node", NODE_NAME, "-o",
            "jsonpath={.status.conditions[?(@.type=='Ready')].status}",
        )  # fmt: skip
        return done.returncode == 0 and done.stdout.strip() == "True"

    def kubelet_log(self, lines: int = 60) -> str:
        return log_tail(self.root / "kubelet.log", lines)

    def stop(self) -> None:
        """Stop the kubelet, kill every container, stop containerd, unmount and remove what the
        node made (``/var/lib/kubelet`` too when the node created it)."""
        kubelet = self.procs.pop("kubelet", None)
        if kubelet is not None:
            _kill(kubelet)
        if "containerd" in self.procs and self.procs["containerd"].poll() is None:
            self._remove_containers()
        for proc in self.procs.values():
            _kill(proc)
        self.procs.clear()
        subprocess.run(["ip", "link", "delete", BRIDGE], capture_output=True)
        _unmount_under(KUBELET_ROOT)
        _unmount_under(self.root)
        if self.made_kubelet_root:
            shutil.rmtree(KUBELET_ROOT, ignore_errors=True)
        shutil.rmtree(self.root, ignore_errors=True)

    def _remove_containers(self) -> None:
        """Kill and delete every task and container; their shims exit with them."""
        try:
            tasks = [line.split()[0] for line in self.ctr("tasks", "ls").splitlines()[1:]]
            for task in tasks:
                subprocess.run(
                    ["ctr", f"--address={self.socket}", "--namespace=k8s.io", "tasks", "kill",
                     "--all", "--signal=SIGKILL", task], capture_output=True,
                )  # fmt: skip
            time.sleep(1)
            for task in tasks:
                subprocess.run(
                    ["ctr", f"--address={self.socket}", "--namespace=k8s.io", "tasks", "delete",
                     "--force", task], capture_output=True,
                )  # fmt: skip
            containers = self.ctr("containers", "ls", "--quiet").split()
            if containers:
                subprocess.run(
                    ["ctr", f"--address={self.socket}", "--namespace=k8s.io", "containers",
                     "delete", *containers], capture_output=True,
                )  # fmt: skip
        except RuntimeError:
            pass


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass
