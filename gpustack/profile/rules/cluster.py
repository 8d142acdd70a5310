"""Rules on ``cluster``: the Kubernetes version and the container runtime gpustack configures."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

from gpustack.profile import components, kubernetes_releases
from gpustack.profile.finding import Finding
from gpustack.profile.model import (
    DEFAULT_KUBERNETES,
    SELF_CONFIGURING,
    SUPPORTED_KUBERNETES,
    Profile,
)
from gpustack.profile.model.runtime import K3S_NVIDIA_INSTALL_DIR
from gpustack.profile.platform import gke_signals


def kubernetes_version_supported(p: Profile) -> Iterator[Finding]:
    version = p.cluster.kubernetes_version
    if version not in SUPPORTED_KUBERNETES:
        yield Finding(
            ("cluster", "kubernetesVersion"),
            f"Kubernetes {version} is not supported",
            f"use {SUPPORTED_KUBERNETES[0]} to {SUPPORTED_KUBERNETES[-1]}",
        )


def kubernetes_end_of_life(p: Profile, today: date) -> Iterator[Finding]:
    """A release past its upstream end of life: a notice, or an error where the profile asks
    (``cluster.endOfLife: error``). Dated, so ``today`` is given, not read."""
    version = p.cluster.kubernetes_version
    end = kubernetes_releases.ended(version, today)
    if end is None:
        return
    notice = p.cluster.end_of_life == "notice"
    switch = "error makes this an error" if notice else "notice where a platform still supports it"
    yield Finding(
        ("cluster", "kubernetesVersion"),
        f"Kubernetes {version} reached its upstream end of life on {end.isoformat()}"
        f" ({kubernetes_releases.SOURCE}{version}/)",
        f'upgrade the cluster and set kubernetesVersion: "{DEFAULT_KUBERNETES}" or another'
        f" supported release; cluster.endOfLife: {switch}",
        notice=notice,
    )


def runtime_matches_distribution(p: Profile) -> Iterator[Finding]:
    runtime = p.cluster.runtime
    if runtime.name == "crio" and runtime.distribution not in ("generic", "openshift"):
        yield Finding(
            ("cluster", "runtime", "distribution"),
            f"{runtime.distribution} ships containerd, not CRI-O",
            "set runtime.name: containerd, or distribution: generic",
        )
    if runtime.name == "containerd" and runtime.distribution == "openshift":
        yield Finding(
            ("cluster", "runtime", "distribution"),
            "openshift (RHCOS) runs CRI-O, not containerd",
            "set runtime.name: crio",
        )


def k3s_keeps_only_its_nvidia_handler(p: Profile) -> Iterator[Finding]:
    # k3s/RKE2 render containerd's config on every start and add one handler, named nvidia, for
    # the runtime they find in /usr/local/nvidia/toolkit: nothing else the toolkit writes lasts.
    runtime, t = p.cluster.runtime, p.toolkit
    if not t.enabled or runtime.distribution not in SELF_CONFIGURING:
        return
    name = runtime.distribution
    if t.runtime_class != "nvidia":
        yield Finding(
            ("toolkit", "runtimeClass"),
            f"{name} names the NVIDIA handler it registers nvidia; a {t.runtime_class!r}"
            " handler would not exist after it renders containerd's config",
            "remove toolkit.runtimeClass (nvidia)",
        )
    if t.install_dir.rstrip("/") != K3S_NVIDIA_INSTALL_DIR:
        yield Finding(
            ("toolkit", "installDir"),
            f"{name} registers the NVIDIA runtime only from {K3S_NVIDIA_INSTALL_DIR}/toolkit;"
            f" installed in {t.install_dir} it has no nvidia handler",
            f"remove toolkit.installDir ({K3S_NVIDIA_INSTALL_DIR})",
        )
    if t.set_as_default:
        yield Finding(
            ("toolkit", "setAsDefault"),
            f"{name} renders containerd's config itself and does not keep the toolkit's"
            " default runtime",
            f"remove toolkit.setAsDefault and start {name} with --default-runtime nvidia",
        )


def crio_restart_not_signal(p: Profile) -> Iterator[Finding]:
    # With CDI the installer edits CRI-O's config and must restart CRI-O, which it can only do
    # through systemd; in hook mode (CDI off) it restarts nothing, so a signal is harmless there.
    runtime = p.cluster.runtime
    if (
        runtime.name == "crio"
        and runtime.restart_mode == "signal"
        and p.toolkit.enabled
        and p.toolkit.cdi.enabled
    ):
        yield Finding(
            ("cluster", "runtime", "restartMode"),
            "the container toolkit cannot restart CRI-O with a signal; every toolkit pod"
            " would fail",
            "remove restartMode (CRI-O defaults to systemd), or set none to restart CRI-O yourself",
        )


def cdi_strategy_needs_runtime_cdi(p: Profile) -> Iterator[Finding]:
    # CDI device names from the plugin resolve only where the runtime has CDI on. The toolkit
    # turns it on in containerd's config when toolkit.cdi is enabled; otherwise containerd 1.x
    # leaves it off (2.0 enables it by default, CRI-O always has it).
    dp, runtime = p.device_plugin, p.cluster.runtime
    cdi = [s for s in dp.device_list_strategy if s.startswith("cdi-")]
    if not (dp.enabled and cdi and p.toolkit.enabled and not p.toolkit.cdi.enabled):
        return
    if runtime.name != "containerd":
        return
    major = int(runtime.version.split(".")[0]) if runtime.version else None
    if major is not None and major >= 2:
        return
    which = f"containerd {runtime.version}" if runtime.version else "containerd before 2.0"
    yield Finding(
        ("toolkit", "cdi", "enabled"),
        f"deviceListStrategy {', '.join(cdi)} hands pods CDI devices, but with toolkit.cdi off"
        f" {which} does not resolve them",
        "set toolkit.cdi.enabled: true, or use deviceListStrategy envvar"
        + ("" if runtime.version else " (or set cluster.runtime.version if it is 2.x)"),
    )


def tolerations_valid(p: Profile) -> Iterator[Finding]:
    # What the API server's toleration validation refuses and the schema cannot say: it rejects
    # the whole DaemonSet at sync time, so the stack never lands on a node.
    for i, t in enumerate(p.cluster.tolerations):
        here = ("cluster", "tolerations", i)
        if t.operator == "Exists" and t.value:
            yield Finding(
                (*here, "value"),
                "a toleration with operator Exists matches any value and must not give one",
                "remove value, or set operator: Equal",
            )
        if not t.key and t.operator == "Equal":
            yield Finding(
                (*here, "operator"),
                "a toleration without a key must use operator Exists (it tolerates every taint)",
                "set key, or operator: Exists",
            )
        if t.toleration_seconds is not None and t.effect != "NoExecute":
            yield Finding(
                (*here, "tolerationSeconds"),
                "tolerationSeconds applies only to effect NoExecute"
                + (f", not {t.effect}" if t.effect else " (effect is unset)"),
                "set effect: NoExecute, or remove tolerationSeconds",
            )


def k3s_cdi_needs_containerd_2(p: Profile) -> Iterator[Finding]:
    # CDI device names resolve only where containerd has CDI on; k3s/RKE2 render containerd
    # 1.7's config without enable_cdi, and the toolkit's setting does not survive the render.
    # containerd 2.x (k3s/RKE2 1.32 and later) has CDI on by default.
    dp, runtime = p.device_plugin, p.cluster.runtime
    cdi = [s for s in dp.device_list_strategy if s.startswith("cdi-")]
    if not (dp.enabled and cdi and runtime.distribution in SELF_CONFIGURING):
        return
    if runtime.version and int(runtime.version.split(".")[0]) >= 2:
        return
    yield Finding(
        ("devicePlugin", "deviceListStrategy"),
        f"{runtime.distribution} with containerd before 2.0 renders containerd's config without"
        f" CDI, so {', '.join(cdi)} devices would not resolve",
        "use deviceListStrategy envvar, or set cluster.runtime.version to the 2.x containerd"
        f" your {runtime.distribution} ships",
    )


def image_digests_required(p: Profile) -> Iterator[Finding]:
    if not p.cluster.require_image_digests:
        return
    for path, ref in components.images(p):
        if "@sha256:" in ref:
            continue
        whole = path[-1] != "digest"  # a full reference: pin it in place
        yield Finding(
            path,
            f"image {ref} has no digest, and cluster.requireImageDigests is set",
            "write it as <image>:<tag>@sha256:<64 hex>"
            if whole
            else f"set {'.'.join(map(str, path))}: sha256:<64 hex> (e.g. from `crane digest`)",
        )


def gke_platform_stated(p: Profile) -> Iterator[Finding]:
    """A profile that names what only GKE has (:func:`gpustack.profile.platform.gke_signals`)
    but says ``cluster.platform: generic`` would leave out the quota GKE's admission requires of
    the stack's critical pods (issue 20 item 3, issue 31 item 1). Unset, the platform is taken
    from the signals and the quota written; written, it must agree. One finding per signal, at
    its line."""
    if p.cluster.platform != "generic":
        return
    for signal in gke_signals(p):
        yield Finding(
            signal.path,
            f"{signal.what}, but cluster.platform is generic: GKE admits no"
            " system-node-critical pod of the stack without a ResourceQuota",
            "set cluster.platform: gke (gpustack adds the quota), or remove cluster.platform",
            at_key=signal.at_key,
        )
