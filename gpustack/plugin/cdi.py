"""The plugin's own CDI spec, so the names Allocate returns with CDI strategies resolve.

With ``deviceListStrategy`` ``cdi-annotations`` or ``cdi-cri``, Allocate names devices
``k8s.device-plugin.nvidia.com/gpu=<id>``; the container runtime (containerd, CRI-O) looks that
name up in the CDI specs under ``/etc/cdi`` and ``/var/run/cdi``. This module builds the spec for
that kind and writes it to ``<cdi root>/k8s.device-plugin.nvidia.com-gpu.json``:

- one device per name Allocate can return, under both ID strategies (``GPU-…``/``MIG-…`` and
  ``<gpu>``/``<gpu>:<mig>``), so a reload that switches ``deviceIDStrategy`` never leaves a
  running pod's name unresolvable; time-sliced replicas collapse to the same devices;
- ``nvml`` backend: each device adds its ``/dev/nvidia<minor>`` node (and, for MIG devices, the
  ``/dev/nvidia-caps`` nodes the backend read from ``/proc/driver/nvidia/capabilities``); the
  common edits add the control nodes that exist, read-only bind mounts of the driver's
  user-space libraries (:data:`DRIVER_LIBRARIES`) and binaries (:data:`DRIVER_BINARIES`) found
  under the mounted driver root, and ``createContainer`` hooks that run ``nvidia-cdi-hook``
  (``create-symlinks`` for ``libcuda.so``, ``update-ldcache`` for the library folders);
- ``simulated`` backend: no device nodes exist, so each device sets only
  ``GPUSTACK_SIMULATED_DEVICE_<index>=<uuid>`` (``:`` in a MIG index becomes ``_``), which lets
  a pod on a GPU-less cluster start and see what it was given.

Both set ``NVIDIA_VISIBLE_DEVICES=void`` in the common edits, so an NVIDIA runtime in legacy
mode does not inject GPUs on top of (or instead of) the CDI devices because of an image's
``NVIDIA_VISIBLE_DEVICES=all``.

Paths: the plugin sees the host driver root at the container driver root
(``flags.plugin.containerDriverRoot``, ``/driver-root``); a mount's ``hostPath`` is the host
driver root (``flags.nvidiaDriverRoot``) plus the file's path below it, and its
``containerPath`` is that path alone. Device nodes take the host device root
(``flags.nvidiaDevRoot``) as ``hostPath`` prefix. Hooks run on the host, so the hook path
(``--nvidia-cdi-hook-path``, ``NVIDIA_CDI_HOOK_PATH``) is a host path.

The file is deterministic, written only when its content changes, and replaced atomically
(a hidden temp file in the same folder, then ``os.replace``), so the runtime never reads half a
spec. It is not removed when a reload drops the CDI strategies (containers being created may
still name its devices).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from gpustack.plugin.allocate import CDI_KIND, host_path
from gpustack.plugin.devices import Unit

CDI_STRATEGIES: Final = ("cdi-annotations", "cdi-cri")
DEFAULT_CDI_ROOT: Final = "/var/run/cdi"
#: Where the NVIDIA Container Toolkit packages install the hook (``NVIDIA_CDI_HOOK_PATH``
#: overrides; gpustack's toolkit DaemonSet installs it under ``/usr/local/nvidia/toolkit``).
DEFAULT_HOOK_PATH: Final = "/usr/bin/nvidia-cdi-hook"
SPEC_NAME: Final = "k8s.device-plugin.nvidia.com-gpu.json"
SIMULATED_ENV_PREFIX: Final = "GPUSTACK_SIMULATED_DEVICE_"
MOUNT_OPTIONS: Final = ("ro", "nosuid", "nodev", "bind")

#: Driver user-space libraries a CUDA container needs (compute and utility capabilities), by
#: name before ``.so``: the CUDA driver API and its debugger, NVML, the PTX JIT and NVVM
#: compilers, the GPU compiler backend they load, OpenCL, the config and allocator helpers, and
#: the PKCS#11 libraries used in confidential computing. Every regular file (not a symlink)
#: ``<name>.so.<version>`` in :data:`LIBRARY_DIRS` is mounted; missing ones are skipped.
DRIVER_LIBRARIES: Final = (
    "libcuda",
    "libcudadebugger",
    "libnvidia-ml",
    "libnvidia-ptxjitcompiler",
    "libnvidia-nvvm",
    "libnvidia-gpucomp",
    "libnvidia-opencl",
    "libnvidia-cfg",
    "libnvidia-allocator",
    "libnvidia-pkcs11",
    "libnvidia-pkcs11-openssl3",
)
#: Library folders below the driver root, in search order. A folder reached through a symlink
#: (``lib64`` -> ``usr/lib64`` on merged-/usr systems) is skipped: its files are found once,
#: under their real folder.
LIBRARY_DIRS: Final = (
    "usr/lib64",
    "usr/lib/x86_64-linux-gnu",
    "usr/lib/aarch64-linux-gnu",
    "usr/lib",
    "lib64",
    "lib/x86_64-linux-gnu",
    "lib/aarch64-linux-gnu",
    "lib",
)
#: Driver binaries (utility capability and MPS), mounted where present.
DRIVER_BINARIES: Final = (
    "nvidia-smi",
    "nvidia-debugdump",
    "nvidia-persistenced",
    "nvidia-cuda-mps-control",
    "nvidia-cuda-mps-server",
)
BINARY_DIRS: Final = ("usr/bin", "usr/sbin", "bin", "sbin")


def uses_cdi(strategies: Iterable[str]) -> bool:
    return any(s in CDI_STRATEGIES for s in strategies)


@dataclass(frozen=True)
class DriverFiles:
    """Driver files found under the container driver root, as paths below it (``/usr/…``)."""

    libraries: tuple[str, ...] = ()
    binaries: tuple[str, ...] = ()


@dataclass(frozen=True)
class SpecSettings:
    """What the spec needs besides the devices."""

    simulated: bool = False
    #: The driver root as the host sees it (``flags.nvidiaDriverRoot``).
    host_driver_root: str = "/"
    #: The host prefix of ``/dev/nvidia*`` (``flags.nvidiaDevRoot``, else the driver root).
    dev_root: str = "/"
    hook_path: str = DEFAULT_HOOK_PATH


def _through_symlink(root: Path, rel: str) -> bool:
    """Whether ``root/rel`` or a folder on the way to it is a symlink."""
    path = root
    for part in Path(rel).parts:
        path = path / part
        if path.is_symlink():
            return True
    return False


def discover_driver_files(container_driver_root: str) -> DriverFiles:
    """The driver's libraries and binaries under the mounted driver root."""
    root = Path(container_driver_root)
    libraries: list[str] = []
    seen: set[str] = set()
    for lib_dir in LIBRARY_DIRS:
        if not (root / lib_dir).is_dir() or _through_symlink(root, lib_dir):
            continue
        for name in DRIVER_LIBRARIES:
            for candidate in sorted((root / lib_dir).glob(f"{name}.so.*")):
                if candidate.is_symlink() or not candidate.is_file():
                    continue
                if candidate.name in seen:  # the same library in two folders: first wins
                    continue
                seen.add(candidate.name)
                libraries.append(f"/{lib_dir}/{candidate.name}")
    binaries: list[str] = []
    for name in DRIVER_BINARIES:
        for bin_dir in BINARY_DIRS:
            candidate = root / bin_dir / name
            if _through_symlink(root, bin_dir) or not candidate.is_file():
                continue
            binaries.append(f"/{bin_dir}/{name}")
            break
    return DriverFiles(libraries=tuple(libraries), binaries=tuple(binaries))


def _host_file(host_driver_root: str, rel: str) -> str:
    return rel if host_driver_root in ("", "/") else host_driver_root.rstrip("/") + rel


def _node(path: str, dev_root: str) -> dict[str, str]:
    node = {"path": path}
    if dev_root not in ("", "/"):
        node["hostPath"] = host_path(dev_root, path)
    return node


def _hook(hook_path: str, *args: str) -> dict[str, Any]:
    return {
        "hookName": "createContainer",
        "path": hook_path,
        "args": [os.path.basename(hook_path), *args],
    }


def simulated_env_name(index: str) -> str:
    return SIMULATED_ENV_PREFIX + re.sub(r"[^A-Za-z0-9_]", "_", index)


def _device_edits(unit: Unit, settings: SpecSettings) -> dict[str, Any]:
    if settings.simulated:
        return {"env": [f"{simulated_env_name(unit.index)}={unit.uuid}"]}
    return {"deviceNodes": [_node(p, settings.dev_root) for p in unit.device_paths]}


def _common_edits(
    settings: SpecSettings, control_paths: Sequence[str], files: DriverFiles
) -> dict[str, Any]:
    edits: dict[str, Any] = {"env": ["NVIDIA_VISIBLE_DEVICES=void"]}
    if settings.simulated:
        return edits
    if control_paths:
        edits["deviceNodes"] = [_node(p, settings.dev_root) for p in control_paths]
    mounts = [*files.libraries, *files.binaries]
    if mounts:
        edits["mounts"] = [
            {
                "hostPath": _host_file(settings.host_driver_root, rel),
                "containerPath": rel,
                "options": list(MOUNT_OPTIONS),
            }
            for rel in mounts
        ]
    hooks = []
    libcuda = [p for p in files.libraries if os.path.basename(p).startswith("libcuda.so.")]
    if libcuda:
        link = f"{os.path.dirname(libcuda[0])}/libcuda.so"
        target = f"libcuda.so.1::{link}"
        hooks.append(_hook(settings.hook_path, "create-symlinks", "--link", target))
    folders = sorted({os.path.dirname(p) for p in files.libraries})
    if folders:
        args = [a for folder in folders for a in ("--folder", folder)]
        hooks.append(_hook(settings.hook_path, "update-ldcache", *args))
    if hooks:
        edits["hooks"] = hooks
    return edits


def required_version(spec: dict[str, Any]) -> str:
    """The lowest CDI spec version that has everything ``spec`` uses.

    0.3.0 has device nodes, env, mounts and hooks; 0.5.0 added device names that start with a
    digit (``deviceIDStrategy: index``) and ``hostPath`` on device nodes (a device root).
    """
    edits = [spec.get("containerEdits", {}), *(d["containerEdits"] for d in spec["devices"])]
    digit_name = any(d["name"][:1].isdigit() for d in spec["devices"])
    host_paths = any("hostPath" in n for e in edits for n in e.get("deviceNodes", []))
    return "0.5.0" if digit_name or host_paths else "0.3.0"


def build_spec(
    units: Iterable[Unit],
    settings: SpecSettings,
    control_paths: Sequence[str] = (),
    files: DriverFiles = DriverFiles(),
) -> dict[str, Any]:
    """The CDI spec for ``units`` (whole GPUs and MIG devices; repeats are ignored)."""
    devices: dict[str, dict[str, Any]] = {}
    for unit in units:
        edits = _device_edits(unit, settings)
        for name in (unit.uuid, unit.index):
            devices.setdefault(name, {"name": name, "containerEdits": edits})
    spec: dict[str, Any] = {
        "cdiVersion": "",
        "kind": CDI_KIND,
        "devices": [devices[name] for name in sorted(devices)],
        "containerEdits": _common_edits(settings, control_paths, files),
    }
    spec["cdiVersion"] = required_version(spec)
    return spec


def render(spec: dict[str, Any]) -> str:
    return json.dumps(spec, indent=2) + "\n"


def write_spec(cdi_root: str, spec: dict[str, Any], name: str = SPEC_NAME) -> bool:
    """Write ``spec`` atomically to ``<cdi_root>/<name>``; ``False`` when it was unchanged."""
    path = os.path.join(cdi_root, name)
    text = render(spec)
    try:
        with open(path, encoding="utf-8") as fh:
            if fh.read() == text:
                return False
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    os.makedirs(cdi_root, exist_ok=True)
    # Hidden and not *.json/*.yaml: the runtime's CDI cache ignores it until it is renamed.
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=cdi_root)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return True
