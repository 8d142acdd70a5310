"""``cluster.runtime``: the nodes' container runtime and distribution, and where each keeps its
config, socket and kubelet root.

Why apart from :mod:`gpustack.profile.model.cluster`: the defaults per runtime and distribution
(k3s, RKE2, MicroK8s, k0s, OpenShift) are a table of their own, read by the toolkit and the rules
that check a runtime's paths, not by the rest of the cluster section.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from gpustack.fields import key
from gpustack.profile.model.common import ABS_PATH

RuntimeName = Literal["containerd", "crio"]
Distribution = Literal["generic", "k3s", "rke2", "microk8s", "k0s", "openshift"]
RestartMode = Literal["signal", "systemd", "none"]
ConfigSource = Literal["command", "file"]


def _derived_path(title: str, what: str, example: str) -> Any:
    """A host path of the runtime that :func:`runtime_paths` derives when the profile leaves it
    unset (``None``)."""
    return key(
        title,
        f"Host path of {what} (derived when unset).",
        default=None,
        pattern=ABS_PATH,
        examples=[example],
    )


@dataclass(frozen=True)
class Runtime:
    """The node's container runtime and where its config and socket live.

    Paths left unset are derived from ``name`` and ``distribution`` by :func:`runtime_paths`.
    ``version`` is the runtime's own version (e.g. containerd ``2.0``); containerd 2.x reads
    drop-in configs from ``conf.d`` and wants ``configSource: file``.
    """

    name: RuntimeName = key("Runtime", "Container runtime on the GPU nodes.", default="containerd")
    distribution: Distribution = key(
        "Distribution",
        "Kubernetes distribution; it decides where the runtime keeps config and socket, "
        "and where the toolkit may write (see the docs' node page). k3s and RKE2 render "
        "containerd's config themselves and register the nvidia runtime they find; "
        "MicroK8s renders it from containerd-template.toml; k0s merges "
        "/etc/k0s/containerd.d/; openshift is CRI-O on RHCOS (read-only /usr, OCI hooks "
        "under /run/containers/oci/hooks.d).",
        default="generic",
        examples=["k3s", "openshift"],
    )
    version: str | None = key(
        "Runtime version",
        "The runtime's own version; containerd 2.x reads its config file, not a dump.",
        default=None,
        pattern=r"^\d+\.\d+(\.\d+)?$",
        examples=["2.0", "1.7.27"],
    )
    config_path: str | None = _derived_path(
        "Config path", "the runtime's main config", "/etc/containerd/config.toml"
    )
    drop_in_config_path: str | None = _derived_path(
        "Drop-in config path",
        "the drop-in file the toolkit writes",
        "/etc/containerd/conf.d/99-nvidia.toml",
    )
    socket_path: str | None = _derived_path(
        "Socket path", "the runtime socket", "/run/containerd/containerd.sock"
    )
    config_source: tuple[ConfigSource, ...] | None = key(
        "Config source",
        "Where the toolkit reads the current config: the runtime's dump command, the "
        "file, or both in order (derived from the runtime version when unset).",
        default=None,
        min_items=1,
        unique_items=True,
        examples=[["file"], ["command", "file"]],
    )
    restart_mode: RestartMode | None = key(
        "Restart mode",
        "How the toolkit makes the runtime reload: a signal, systemd, or not at all "
        "(derived when unset: signal for containerd, systemd for CRI-O, which cannot be "
        "restarted with a signal).",
        default=None,
        examples=["systemd"],
    )

    def resolved_restart_mode(self) -> RestartMode:
        """How the toolkit makes the runtime reload, when the profile does not say.

        containerd reloads on a signal; CRI-O can only be restarted through systemd by the
        toolkit's installer, so a signal default would fail every toolkit pod on CRI-O nodes.
        """
        if self.restart_mode is not None:
            return self.restart_mode
        return "systemd" if self.name == "crio" else "signal"


@dataclass(frozen=True)
class RuntimePaths:
    """Resolved host paths of the runtime's root config, drop-in config and socket.

    - ``config``: the top-level file the toolkit's installer edits (it adds an ``imports`` line
      for the drop-in). On k0s a file of gpustack's own that nothing loads: k0s's
      ``containerd.toml`` must keep its ``# k0s_managed=true`` marker, and any file in
      ``containerd.d`` that has no CRI section is imported by k0s as is.
    - ``drop_in_config``: where the installer writes the runtime handlers.
    - ``executable``: the runtime binary on the host, for the installer's ``command`` config
      source (``None``: on the host's PATH).
    - ``hooks_dir``: where CRI-O reads OCI hooks that the toolkit may write (``None`` for
      containerd).
    """

    config: str
    drop_in_config: str
    socket: str | None
    config_source: tuple[str, ...]
    executable: str | None = None
    hooks_dir: str | None = None


@dataclass(frozen=True)
class _Defaults:
    """A distribution's runtime layout (docs/concepts/node.md and tests/node/)."""

    config: str
    drop_in: str
    socket: str | None
    #: ``None``: by runtime version (``command,file``; ``file`` for containerd 2.x).
    source: tuple[str, ...] | None = None
    executable: str | None = None
    hooks_dir: str | None = None


#: CRI-O's OCI hook folder (read-only on RHCOS, whose CRI-O also reads /run/containers/...).
CRIO_HOOKS_DIR = "/usr/share/containers/oci/hooks.d"
CRIO_RUN_HOOKS_DIR = "/run/containers/oci/hooks.d"

# Every distribution gets a non-empty drop-in: with RUNTIME_DROP_IN_CONFIG="" the installer
# (nvidia-ctk-installer v1.18.1 to v1.20.0) writes the handlers into the top-level file and then
# rewrites that file with its original tree plus an imports line, losing them (issue #10, item 1).
# k3s and RKE2 render config.toml themselves on every start and add the nvidia runtime they find
# under /usr/local/nvidia/toolkit: the handler comes from that, the drop-in is only the
# installer's scratch (config.toml.tmpl is never written: a template from scratch would drop
# k3s's own settings, NVIDIA gpu-operator#406, #623). The k3s/RKE2/MicroK8s/k0s containerd is
# not on the host's PATH, so the installer reads the file, never `containerd config dump`.
_RUNTIME_DEFAULTS: dict[tuple[str, str], _Defaults] = {
    ("containerd", "generic"): _Defaults(
        "/etc/containerd/config.toml",
        "/etc/containerd/conf.d/99-nvidia.toml",
        "/run/containerd/containerd.sock",
    ),
    ("containerd", "k3s"): _Defaults(
        "/var/lib/rancher/k3s/agent/etc/containerd/config.toml",
        "/var/lib/rancher/k3s/agent/etc/containerd/gpustack.d/99-nvidia.toml",
        "/run/k3s/containerd/containerd.sock",
        source=("file",),
    ),
    ("containerd", "rke2"): _Defaults(
        "/var/lib/rancher/rke2/agent/etc/containerd/config.toml",
        "/var/lib/rancher/rke2/agent/etc/containerd/gpustack.d/99-nvidia.toml",
        "/run/k3s/containerd/containerd.sock",
        source=("file",),
    ),
    # The installer copies the runc entry into its handlers: from the rendered file, not from
    # the template, whose ${RUNTIME_TYPE} placeholders the drop-in would keep unrendered.
    ("containerd", "microk8s"): _Defaults(
        "/var/snap/microk8s/current/args/containerd-template.toml",
        "/var/snap/microk8s/current/args/conf.d/99-nvidia.toml",
        "/var/snap/microk8s/common/run/containerd.sock",
        source=("file=/var/snap/microk8s/current/args/containerd.toml",),
    ),
    ("containerd", "k0s"): _Defaults(
        "/etc/k0s/gpustack/containerd-imports.toml",
        "/etc/k0s/containerd.d/nvidia.toml",
        "/run/k0s/containerd.sock",
        source=("file",),
        executable="/var/lib/k0s/bin/containerd",
    ),
    ("crio", "generic"): _Defaults(
        "/etc/crio/crio.conf",
        "/etc/crio/crio.conf.d/99-nvidia.conf",
        None,
        hooks_dir=CRIO_HOOKS_DIR,
    ),
    ("crio", "openshift"): _Defaults(
        "/etc/crio/crio.conf",
        "/etc/crio/crio.conf.d/99-nvidia.conf",
        None,
        hooks_dir=CRIO_RUN_HOOKS_DIR,
    ),
}

#: The first k0s release (its Kubernetes minor) that ships containerd 2.x (2.3) with a version-3
#: ``/etc/k0s/containerd.toml`` importing ``/etc/k0s/containerd.d/*.toml`` directly, and whose
#: pre-flight check rejects a snippet there with a version other than 3 or a
#: ``plugins."io.containerd.grpc.v1.cri"`` table (k0s v1.36.x ``embedded-bins/Makefile.variables``,
#: ``pkg/component/worker/containerd/configurer.go``, ``internal/pkg/sysinfo/probes/containerd.go``;
#: v1.35.x ships containerd 1.7 and version 2).
K0S_CONTAINERD_V3_SINCE = (1, 36)
#: k0s's own containerd config, read as the installer's source from that release on: its
#: ``version = 3`` makes the installer write a version-3 drop-in (an empty source gives 2).
K0S_CONTAINERD_TOML = "/etc/k0s/containerd.toml"


def k0s_containerd_v3(runtime: Runtime, kubernetes_version: str | None) -> bool:
    """True for k0s releases whose containerd takes only version-3 snippets (see above)."""
    if runtime.distribution != "k0s":
        return False
    if runtime.version is not None:
        return int(runtime.version.split(".")[0]) >= 2
    if kubernetes_version is None:
        return False
    major, minor = (int(x) for x in kubernetes_version.split(".")[:2])
    return (major, minor) >= K0S_CONTAINERD_V3_SINCE


#: Distributions that render containerd's config themselves and name the NVIDIA handler
#: ``nvidia`` when they find ``<installDir>/toolkit/nvidia-container-runtime`` there.
SELF_CONFIGURING = frozenset({"k3s", "rke2"})
#: Where k3s and RKE2 look for the NVIDIA runtime (the first of their search folders).
K3S_NVIDIA_INSTALL_DIR = "/usr/local/nvidia"


def runtime_paths(runtime: Runtime, kubernetes_version: str | None = None) -> RuntimePaths:
    """Resolve the runtime's host paths: explicit profile values win over distribution defaults.

    ``kubernetes_version`` picks the layout of distributions whose runtime changed with a release
    (k0s from 1.36, see :func:`k0s_containerd_v3`).

    Raises ``KeyError`` for a runtime/distribution pair that has no defaults (the semantic rules
    report that to the user before synthesis ever runs).
    """
    d = _RUNTIME_DEFAULTS[(runtime.name, runtime.distribution)]
    major = int(runtime.version.split(".")[0]) if runtime.version else None
    if runtime.config_source is not None:
        source: tuple[str, ...] = runtime.config_source
    elif k0s_containerd_v3(runtime, kubernetes_version):
        source = (f"file={K0S_CONTAINERD_TOML}",)
    elif d.source is not None:
        source = d.source
    elif runtime.name == "containerd" and major is not None and major >= 2:
        # containerd 2.x: `containerd config dump` may emit a newer config version than the root
        # file, which breaks the drop-in; reading the file avoids that (NVIDIA toolkit issue).
        source = ("file",)
    else:
        source = ("command", "file")
    return RuntimePaths(
        config=runtime.config_path or d.config,
        drop_in_config=runtime.drop_in_config_path or d.drop_in,
        socket=runtime.socket_path or d.socket,
        config_source=source,
        executable=d.executable,
        hooks_dir=d.hooks_dir,
    )


#: The kubelet's root directory per distribution (k0s and MicroK8s move it; a kubelet started
#: with another ``--root-dir`` needs ``cluster.kubeletRootDir``).
KUBELET_ROOT_DIRS: dict[str, str] = {
    "generic": "/var/lib/kubelet",
    "k3s": "/var/lib/kubelet",
    "rke2": "/var/lib/kubelet",
    "microk8s": "/var/snap/microk8s/common/var/lib/kubelet",
    "k0s": "/var/lib/k0s/kubelet",
    "openshift": "/var/lib/kubelet",
}
