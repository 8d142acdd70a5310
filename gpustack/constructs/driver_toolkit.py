"""The OpenShift Driver Toolkit: on OpenShift the driver modules are built in a side-car from the
Driver Toolkit image of the node's RHCOS build, which carries that build's kernel packages (the
driver image has none for RHCOS), and there is one driver DaemonSet per RHCOS build.

Used by :mod:`gpustack.constructs.driver`, which passes in its own names (the driver
container, the first DaemonSet's name) so this module depends on nothing of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from gpustack.constructs import k8s, kube
from gpustack.profile.model import DriverToolkit, Profile

#: The Driver Toolkit side-car and the folder it shares with the driver container.
DTK_CONTAINER: Final = "openshift-driver-toolkit-ctr"
DTK_VOLUME: Final = "shared-nvidia-driver-toolkit"
DTK_SHARED: Final = "/mnt/shared-nvidia-driver-toolkit"
#: The driver container's mounts the side-car also needs (its build writes the same places).
_DTK_MOUNTS: Final = (
    "var-log", "host-os-release", "firmware-search-path", "nv-firmware", "mlnx-ofed-usr-src",
)  # fmt: skip


def build_daemonset(daemonset: str, rhcos: str) -> str:
    """The driver DaemonSet of a further RHCOS build: ``418.94.202502101302-0`` ->
    ``nvidia-driver-daemonset-418-94-202502101302-0``."""
    return f"{daemonset}-{rhcos.replace('.', '-')}"


def driver_daemonsets(
    dtk: DriverToolkit | None, daemonset: str
) -> list[tuple[str, str, DriverToolkit | None]]:
    """(construct id, name, the Driver Toolkit of its RHCOS build) of each driver DaemonSet.

    One without the Driver Toolkit. On OpenShift one per RHCOS build the profile names, as the
    GPU Operator renders one per ``OSTREE_VERSION`` on the nodes (``ocpDriverToolkitDaemonSets``,
    ``controllers/object_controls.go``, v26.7.0): the first build keeps the name
    ``nvidia-driver-daemonset`` (a renamed DaemonSet is a new one, and pruning the old one would
    stop every running driver), each further build is ``nvidia-driver-daemonset-<build>`` (its dots
    as hyphens: gpustack's names are DNS labels). All
    share the pod selector and the one-driver-per-node anti-affinity; each pod carries its
    DaemonSet's name as ``app``, and its controller reference keeps each DaemonSet to its pods.
    """
    if dtk is None:
        return [("daemonset", daemonset, None)]
    out: list[tuple[str, str, DriverToolkit | None]] = []
    for i, (rhcos, image) in enumerate(dtk.all_builds()):
        one = replace(dtk, rhcos_version=rhcos, image=image, builds=())
        name = daemonset if i == 0 else build_daemonset(daemonset, rhcos)
        out.append(("daemonset" if i == 0 else f"daemonset-{rhcos}", name, one))
    return out


def driver_toolkit(profile: Profile) -> DriverToolkit | None:
    """``driver.driverToolkit`` where the modules are built on an OpenShift node; else ``None``."""
    d = profile.driver
    dtk = d.driver_toolkit
    on_openshift = profile.cluster.runtime.distribution == "openshift"
    if not on_openshift or not d.enabled or d.use_precompiled or dtk.image is None:
        return None
    return dtk


def dtk_container(
    driver_container: str,
    image_pull_policy: str,
    dtk: DriverToolkit,
    extra_env: Sequence[tuple[str, str]],
    mounts: list[k8s.VolumeMount],
) -> k8s.Container:
    """``openshift-driver-toolkit-ctr``: waits until the driver container has copied its build
    scripts to the shared folder, then builds the modules with the Driver Toolkit's kernel
    packages (as the GPU Operator's ``transformOpenShiftDriverToolkitContainer``, v26.7.0).
    ``extra_env``: the driver container's configuration digest, where it has one."""
    script = (
        f"until [ -f {DTK_SHARED}/dir_prepared ]; do echo waiting for {driver_container} to"
        f" prepare the shared directory; sleep 10; done; exec {DTK_SHARED}/ocp_dtk_entrypoint"
        " dtk-build-driver"
    )
    wanted = {DTK_VOLUME, *_DTK_MOUNTS}
    return k8s.Container(
        name=DTK_CONTAINER,
        image=dtk.image,
        image_pull_policy=image_pull_policy,
        command=["bash", "-xc"],
        args=[script],
        env=kube.env_list(
            [
                ("RHCOS_VERSION", dtk.rhcos_version or ""),
                ("NVIDIA_VISIBLE_DEVICES", "void"),
                *extra_env,
            ]
        ),
        security_context=k8s.SecurityContext(
            privileged=True, se_linux_options=k8s.SeLinuxOptions(level="s0")
        ),
        volume_mounts=[m for m in mounts if m.name in wanted],
    )


def shared_volume() -> k8s.Volume:
    """The folder the driver container prepares and the side-car builds in."""
    return k8s.Volume(name=DTK_VOLUME, empty_dir=k8s.EmptyDirVolumeSource())
