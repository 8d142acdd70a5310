"""Where the container toolkit's installer sees the node's container runtime: the runtime's
config, drop-in and socket through their *parent directories* mounted at
``/runtime/config-dir/``, ``/runtime/config-dir.d/`` and ``/runtime/sock-dir/`` (the installer
replaces files atomically, which a file mount would not see), the host's ``/dev/char``, and,
where they are used, CRI-O's hooks folder and the CDI folder.

The layout of the GPU Operator's ``nvidia-container-toolkit-daemonset``; the installer's
environment (:func:`gpustack.constructs.toolkit.toolkit_env`) names the same paths.
"""

from __future__ import annotations

import posixpath
from typing import Final

from gpustack.constructs import k8s, kube
from gpustack.constructs.kube import CDI_ROOT
from gpustack.profile.model import RuntimeName, RuntimePaths

#: Where the toolkit sees the host's ``/dev/char`` (it links every NVIDIA device node there).
DEV_CHAR_CTR: Final = "/host-dev-char"
CONFIG_DIR_CTR: Final = "/runtime/config-dir/"
DROP_IN_DIR_CTR: Final = "/runtime/config-dir.d/"
SOCKET_DIR_CTR: Final = "/runtime/sock-dir/"


def runtime_folders(
    runtime: RuntimeName, paths: RuntimePaths, *, crio_hooks: bool, cdi: bool
) -> list[tuple[k8s.Volume, str]]:
    """Each host folder the installer edits or links into, with where it sees it."""
    config_dir = posixpath.dirname(paths.config)
    drop_in_dir = posixpath.dirname(paths.drop_in_config)
    out = [
        (kube.host_path(f"{runtime}-config", config_dir, "DirectoryOrCreate"), CONFIG_DIR_CTR),
        (
            kube.host_path(f"{runtime}-drop-in-config", drop_in_dir, "DirectoryOrCreate"),
            DROP_IN_DIR_CTR,
        ),
    ]
    if paths.socket:
        socket_dir = posixpath.dirname(paths.socket)
        out.append((kube.host_path(f"{runtime}-socket", socket_dir), SOCKET_DIR_CTR))
    out.append((kube.host_path("host-dev-char", "/dev/char", "DirectoryOrCreate"), DEV_CHAR_CTR))
    if crio_hooks and paths.hooks_dir:
        hooks = paths.hooks_dir
        out.append((kube.host_path("crio-hooks", hooks, "DirectoryOrCreate"), hooks))
    if cdi:
        out.append((kube.host_path("cdi-root", CDI_ROOT, "DirectoryOrCreate"), CDI_ROOT))
    return out
