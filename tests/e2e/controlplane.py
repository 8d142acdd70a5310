"""A real Kubernetes control plane on loopback: etcd, kube-apiserver, kube-controller-manager and
kube-scheduler, found in the folder ``KUBEBUILDER_ASSETS`` names (envtest's convention).

Why real binaries and not a schema: admission (PodSecurity, RuntimeClass, Priority, ResourceQuota),
RBAC, the DaemonSet and Job controllers and the scheduler decide whether a cluster folder applies,
where its pods land and what its ServiceAccounts may do; a schema sees none of that.

The API server serves TLS with certificates made here at start (the ``openssl`` CLI), authorizes
with ``Node,RBAC`` like a production cluster, and allows privileged pods (the driver and toolkit
need them; PodSecurity decides per namespace). The controller manager runs every controller but
the node lifecycle controller, so Nodes without a kubelet stay Ready (with real kubelets it runs
that one too: :meth:`ControlPlane.start`), and signs service-account tokens. Everything runs in
its own process group and is killed with it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

#: What the tier needs in ``$KUBEBUILDER_ASSETS``.
BINARIES: Final = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
ASSETS_VAR: Final = "KUBEBUILDER_ASSETS"
SERVICE_RANGE: Final = "10.0.0.0/24"
SERVICE_IP: Final = "10.0.0.1"
#: How long the control plane may take to serve and settle on a busy machine.
START_TIMEOUT: Final = 120.0


def missing_assets(environ: dict[str, str] | None = None) -> str | None:
    """Why the tier cannot run here (``None`` when it can)."""
    env = os.environ if environ is None else environ
    folder = env.get(ASSETS_VAR, "")
    if not folder:
        return (
            f"{ASSETS_VAR} is not set (a folder with {', '.join(BINARIES)}; see docs/how-to/e2e.md)"
        )
    absent = [b for b in BINARIES if not os.access(Path(folder) / b, os.X_OK)]
    if absent:
        return f"{ASSETS_VAR}={folder} lacks {', '.join(absent)} (see docs/how-to/e2e.md)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_pki(pki: Path, clients: Sequence[tuple[str, str, str]]) -> None:
    """A CA, the API server's serving certificate, the service-account signing key and one client
    certificate per ``(file stem, CN, O)``."""
    pki.mkdir(parents=True)
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "ca.key", cwd=pki)
    _openssl(
        "req", "-x509", "-new", "-key", "ca.key", "-subj", "/CN=gpustack-e2e-ca", "-days", "2",
        "-out", "ca.crt", cwd=pki,
    )  # fmt: skip
    _openssl("genrsa", "-out", "sa.key", "2048", cwd=pki)
    _openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)
    sans = (
        f"subjectAltName=IP:127.0.0.1,IP:{SERVICE_IP},DNS:localhost,DNS:kubernetes,"
        "DNS:kubernetes.default,DNS:kubernetes.default.svc"
    )
    issue(pki, "apiserver", "kube-apiserver", "", san=sans, usage="serverAuth")
    for stem, cn, org in clients:
        issue(pki, stem, cn, org)


def issue(
    pki: Path, stem: str, cn: str, org: str, *, san: str = "", usage: str = "clientAuth"
) -> None:
    """``<stem>.crt`` and ``<stem>.key`` signed by the CA of ``pki`` (a client certificate
    unless ``usage`` says otherwise); also for users added after the start, such as a kubelet's
    ``system:node:<name>`` (tests/real_node/)."""
    subj = f"/CN={cn}" + (f"/O={org}" if org else "")
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", f"{stem}.key",
             cwd=pki)  # fmt: skip
    _openssl("req", "-new", "-key", f"{stem}.key", "-subj", subj, "-out", f"{stem}.csr",
             cwd=pki)  # fmt: skip
    ext = pki / f"{stem}.ext"
    ext.write_text(
        f"extendedKeyUsage={usage}\nkeyUsage=digitalSignature\n" + (f"{san}\n" if san else "")
    )
    _openssl(
        "x509", "-req", "-in", f"{stem}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", ext.name, "-out", f"{stem}.crt", cwd=pki,
    )  # fmt: skip


def kubeconfig(path: Path, server: str, pki: Path, stem: str) -> Path:
    """A kubeconfig (JSON is YAML) for the client certificate ``stem``."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "e2e",
                "cluster": {"server": server, "certificate-authority": str(pki / "ca.crt")},
            }
        ],
        "users": [
            {
                "name": stem,
                "user": {
                    "client-certificate": str(pki / f"{stem}.crt"),
                    "client-key": str(pki / f"{stem}.key"),
                },
            }
        ],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": stem}}],
        "current-context": "e2e",
    }
    path.write_text(json.dumps(doc, indent=1))
    return path


#: ResourceQuota admission as GKE configures it: pods of the critical priority classes are
#: admitted outside kube-system only in a namespace with a quota whose scope names them.
GKE_QUOTA_ADMISSION: Final = {
    "name": "ResourceQuota",
    "configuration": {
        "apiVersion": "apiserver.config.k8s.io/v1",
        "kind": "ResourceQuotaConfiguration",
        "limitedResources": [
            {
                "resource": "pods",
                "matchScopes": [
                    {
                        "scopeName": "PriorityClass",
                        "operator": "In",
                        "values": ["system-node-critical", "system-cluster-critical"],
                    }
                ],
            }
        ],
    },
}

#: The admission plugin GKE (and AKS) run: a pod requesting an extended resource such as
#: ``nvidia.com/gpu`` is given a NoSchedule toleration for a taint of that key, so workloads on
#: GKE's tainted GPU pools need not write one (GKE's "Run GPUs in Standard node pools" page).
EXTENDED_RESOURCE_TOLERATION: Final = "ExtendedResourceToleration"

#: PodSecurity's cluster default: ``baseline``, as hardened clusters set it, so a namespace that
#: runs privileged pods must say so itself.
POD_SECURITY_ADMISSION: Final = {
    "name": "PodSecurity",
    "configuration": {
        "apiVersion": "pod-security.admission.config.k8s.io/v1",
        "kind": "PodSecurityConfiguration",
        "defaults": {
            "enforce": "baseline",
            "enforce-version": "latest",
            "warn": "restricted",
            "warn-version": "latest",
            "audit": "restricted",
            "audit-version": "latest",
        },
        "exemptions": {"usernames": [], "runtimeClasses": [], "namespaces": []},
    },
}


@dataclass
class ControlPlane:
    """A running control plane; :meth:`stop` kills it and removes its files."""

    assets: Path
    root: Path
    admin: Path = field(init=False)
    server: str = field(init=False)
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @classmethod
    def start(cls, assets: Path, *, gke: bool = False, kubelets: bool = False) -> ControlPlane:
        """``kubelets``: the Nodes are real kubelets, so the node lifecycle controller runs too,
        as in a production cluster: the API server taints every new Node
        ``node.kubernetes.io/not-ready:NoSchedule`` (the TaintNodesByCondition admission plugin,
        plugin/pkg/admission/nodetaint) and only that controller takes the taint off once the
        kubelet reports Ready; without it no pod, not even a DaemonSet's, is ever placed."""
        root = Path(tempfile.mkdtemp(prefix="gpustack-e2e-"))
        cp = cls(assets=assets, root=root)
        try:
            cp._start(gke=gke, kubelets=kubelets)
        except BaseException:
            cp.stop()
            raise
        return cp

    def _spawn(self, name: str, args: list[str]) -> None:
        log = (self.root / f"{name}.log").open("wb")
        self.procs[name] = subprocess.Popen(
            [str(self.assets / name), *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, killed as one
        )
        log.close()

    def _start(self, *, gke: bool, kubelets: bool) -> None:
        pki = self.root / "pki"
        make_pki(
            pki,
            [
                ("admin", "gpustack-e2e-admin", "system:masters"),
                ("controller-manager", "system:kube-controller-manager", ""),
                ("scheduler", "system:kube-scheduler", ""),
            ],
        )
        etcd_port, peer_port, api_port = free_port(), free_port(), free_port()
        self._spawn(
            "etcd",
            [
                f"--data-dir={self.root / 'etcd'}",
                f"--listen-client-urls=http://127.0.0.1:{etcd_port}",
                f"--advertise-client-urls=http://127.0.0.1:{etcd_port}",
                f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
                "--unsafe-no-fsync",
            ],
        )
        plugins = [POD_SECURITY_ADMISSION] + ([GKE_QUOTA_ADMISSION] if gke else [])
        admission = self.root / "admission.json"
        admission.write_text(
            json.dumps(
                {
                    "apiVersion": "apiserver.config.k8s.io/v1",
                    "kind": "AdmissionConfiguration",
                    "plugins": plugins,
                }
            )
        )
        self.server = f"https://127.0.0.1:{api_port}"
        self._spawn(
            "kube-apiserver",
            [
                f"--etcd-servers=http://127.0.0.1:{etcd_port}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={api_port}",
                f"--tls-cert-file={pki / 'apiserver.crt'}",
                f"--tls-private-key-file={pki / 'apiserver.key'}",
                f"--client-ca-file={pki / 'ca.crt'}",
                f"--service-account-key-file={pki / 'sa.pub'}",
                f"--service-account-signing-key-file={pki / 'sa.key'}",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-cluster-ip-range={SERVICE_RANGE}",
                "--authorization-mode=Node,RBAC",
                "--enable-admission-plugins=NodeRestriction,PodSecurity,ResourceQuota,"
                "RuntimeClass,Priority" + (f",{EXTENDED_RESOURCE_TOLERATION}" if gke else ""),
                f"--admission-control-config-file={admission}",
                "--allow-privileged=true",
                "--enable-priority-and-fairness=false",
                "--profiling=false",
            ],
        )
        self.admin = kubeconfig(self.root / "admin.kubeconfig", self.server, pki, "admin")
        self._wait(lambda: self._ok("get", "--raw", "/readyz"), "the API server to be ready")
        for stem in ("controller-manager", "scheduler"):
            kubeconfig(self.root / f"{stem}.kubeconfig", self.server, pki, stem)
        self._spawn(
            "kube-controller-manager",
            [
                f"--kubeconfig={self.root / 'controller-manager.kubeconfig'}",
                # Fake Nodes have no kubelet: the node lifecycle controller would taint them.
                "--controllers=*" if kubelets else "--controllers=*,-node-lifecycle-controller",
                f"--service-account-private-key-file={pki / 'sa.key'}",
                f"--root-ca-file={pki / 'ca.crt'}",
                "--use-service-account-credentials=true",
                "--leader-elect=false",
                "--secure-port=0",
                "--concurrent-daemonset-syncs=5",
            ],
        )
        self._spawn(
            "kube-scheduler",
            [
                f"--kubeconfig={self.root / 'scheduler.kubeconfig'}",
                f"--authentication-kubeconfig={self.root / 'scheduler.kubeconfig'}",
                f"--authorization-kubeconfig={self.root / 'scheduler.kubeconfig'}",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
            ],
        )
        # Settled: the service-account controller made `default`, the CA publisher its ConfigMap.
        self._wait(
            lambda: (
                self._ok("get", "serviceaccount", "default", "-n", "default")
                and self._ok("get", "configmap", "kube-root-ca.crt", "-n", "default")
            ),
            "the controller manager to settle",
        )

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """``kubectl`` as the cluster's admin."""
        return subprocess.run(
            ["kubectl", f"--kubeconfig={self.admin}", *args],
            input=stdin,
            capture_output=True,
            text=True,
        )

    def kubectl(self, *args: str, check: bool = True, stdin: str | None = None) -> str:
        done = self.run(*args, stdin=stdin)
        if check and done.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
            )
        return done.stdout

    def _ok(self, *args: str) -> bool:
        done = subprocess.run(
            ["kubectl", f"--kubeconfig={self.admin}", "--request-timeout=5s", *args],
            capture_output=True,
        )
        return done.returncode == 0

    def _wait(self, ready: object, what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited {proc.returncode}:\n{self.log_tail(name)}")
            if callable(ready) and ready():
                return
            time.sleep(0.3)
        raise TimeoutError(f"timed out waiting for {what}:\n{self.log_tail('kube-apiserver')}")

    def log_tail(self, name: str, lines: int = 30) -> str:
        path = self.root / f"{name}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """Kill every process group (the API server first, etcd last) and remove the files."""
        for name in reversed(list(self.procs)):
            proc = self.procs[name]
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                except ProcessLookupError:
                    pass
        self.procs.clear()
        shutil.rmtree(self.root, ignore_errors=True)
