"""Rules for GKE nodes, recognised by the folder GKE's own driver installer uses.

NVIDIA's GKE guide (cloud-native-docs ``gpu-operator/google-gke.rst``, "Using the Google Driver
Installer") sets both the driver root and the toolkit's install dir to
``/home/kubernetes/bin/nvidia``: on GKE node images that folder is writable and survives
reboots, while ``/usr/local`` is read-only on Container-Optimized OS. The same guide's known
issue says that on GKE 1.33 and later the toolkit must read containerd's config from the file
(``RUNTIME_CONFIG_SOURCE=file``): the dump of GKE's containerd gives a config the installer
mis-writes, and GPU pods do not start.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile, runtime_paths

#: Where GKE's driver installer puts the driver (``driver.hostDriverRoot`` on GKE).
GKE_DRIVER_FOLDER = "/home/kubernetes/bin/nvidia"
#: The first GKE minor release whose containerd the toolkit must read from the file.
GKE_FILE_SOURCE_SINCE = (1, 33)


def _on_gke(p: Profile) -> bool:
    d = p.driver
    return (
        not d.enabled and d.host_driver_root.rstrip("/") == GKE_DRIVER_FOLDER and p.toolkit.enabled
    )


def gke_toolkit_in_driver_folder(p: Profile) -> Iterator[Finding]:
    if _on_gke(p) and p.toolkit.install_dir.rstrip("/") != GKE_DRIVER_FOLDER:
        yield Finding(
            ("toolkit", "installDir"),
            f"the driver is GKE's ({GKE_DRIVER_FOLDER}), but the toolkit installs to"
            f" {p.toolkit.install_dir}, which is read-only on Container-Optimized OS and not"
            " kept on GKE node images",
            f"set toolkit.installDir: {GKE_DRIVER_FOLDER}, as NVIDIA's GKE guide does",
        )


def gke_runtime_config_from_file(p: Profile) -> Iterator[Finding]:
    if not _on_gke(p) or p.cluster.runtime.name != "containerd":
        return
    major, minor = (int(x) for x in p.cluster.kubernetes_version.split(".")[:2])
    if (major, minor) < GKE_FILE_SOURCE_SINCE:
        return
    source = runtime_paths(p.cluster.runtime, p.cluster.kubernetes_version).config_source
    if "command" in source:
        yield Finding(
            ("cluster", "runtime", "configSource"),
            f"on GKE {p.cluster.kubernetes_version} the toolkit must read containerd's config"
            f" from the file, but the config source is {','.join(source)}",
            "set cluster.runtime.configSource: [file] (NVIDIA's GKE guide: RUNTIME_CONFIG_SOURCE"
            "=file from GKE 1.33)",
        )
