"""A fake of NVIDIA's toolkit installer (``nvidia-ctk-installer``, container toolkit v1.20.0),
reduced to what it leaves on the host for a given environment.

It stays for speed (no binaries, no namespaces: it runs in every plain ``pytest``) and is held
to NVIDIA's real installer by ``tests/node/test_nvidia_installer.py``
(``test_the_fake_installer_writes_what_nvidias_writes``, marker ``nvidia_code``), which runs
both on the same node and compares what the runtime then loads. Until that test existed this
fake wrote the drop-in's file name into ``imports`` (what gpustack's probe looked for) where
NVIDIA's code writes the folder's glob, and the probe failed on real nodes.

Every branch names the behaviour it models; the harness drives it with the env and mounts
gpustack synthesizes, so a wrong variable or a missing mount shows as a missing handler. What it
models (``cmd/nvidia-ctk-installer``, ``pkg/config/engine/{containerd,crio}``):

- Binaries go to ``$ROOT/toolkit`` (``nvidia-container-runtime`` and its ``.cdi``/``.legacy``
  variants, ``nvidia-ctk``, ``nvidia-cdi-hook``, ``nvidia-container-runtime-hook``).
- containerd: the current config comes from ``RUNTIME_CONFIG_SOURCE`` in order: ``command``
  runs ``<RUNTIME_EXECUTABLE_PATH or containerd> config dump`` on the host (only if that binary
  exists there), ``file`` reads ``RUNTIME_CONFIG``, ``file=<path>`` reads that path; the first
  that works wins, else an empty config. Three handlers are added, named
  ``NVIDIA_RUNTIME_NAME`` (default ``nvidia``), ``nvidia-cdi`` and ``nvidia-legacy``, each a
  copy of the ``runc`` entry with ``BinaryName`` set; ``CDI_ENABLED`` sets ``enable_cdi``.
  The config version is the source's (an empty source gives 2), which picks the CRI plugin's
  name (``io.containerd.grpc.v1.cri`` for 2, ``io.containerd.cri.v1.runtime`` for 3).
  With a drop-in (``RUNTIME_DROP_IN_CONFIG``, default ``/etc/containerd/conf.d/99-nvidia.toml``)
  the drop-in starts from the source's whole CRI plugin table, then gets those changes
  (``getBaseDropInConfigTree`` in ``pkg/config/engine/containerd/containerd.go``, v1.18.1 and
  v1.20.0: containerd 1.7 replaces a plugin's table from an import instead of merging it),
  and the top-level file is rewritten from its original
  tree (comments are lost: TOML is re-serialized) plus an ``imports`` entry: the folder of
  ``RUNTIME_DROP_IN_CONFIG_HOST_PATH`` as a glob, ``<dir>/*.toml`` (``importPattern`` and
  ``ensureImports`` in ``pkg/config/engine/containerd/config_drop_in.go``). With
  ``RUNTIME_DROP_IN_CONFIG=""`` the changes are written to the top-level file, which is then
  rewritten from its original tree plus the imports
  line: the handlers are lost (issue #10, item 1).
- CRI-O: ``CRIO_CONFIG_MODE=config`` writes ``[crio.runtime.runtimes.<name>]`` entries to the
  drop-in (CRI-O reads ``crio.conf.d`` itself: no imports); ``hook`` writes
  ``oci-nvidia-hook.json`` to ``CRIO_HOOKS_DIR`` (default ``/usr/share/containers/oci/hooks.d``).
- ``CDI_ENABLED``: a management spec ``management.nvidia.com-gpu.yaml`` in ``CDI_OUTPUT_DIR``.
- ``TOOLKIT_PID_FILE`` is written last.
"""

from __future__ import annotations

import copy
import posixpath
import tomllib
from collections.abc import Callable, Mapping
from typing import Any

import tomli_w

from .pod import PodView

#: Where each containerd config version keeps the CRI runtime settings.
CRI_PLUGIN = {2: "io.containerd.grpc.v1.cri", 3: "io.containerd.cri.v1.runtime"}
HANDLER_BINARIES = {"": "nvidia-container-runtime", "nvidia-cdi": "nvidia-container-runtime.cdi",
                    "nvidia-legacy": "nvidia-container-runtime.legacy"}  # fmt: skip
DEFAULT_DROP_IN = "/etc/containerd/conf.d/99-nvidia.toml"
DEFAULT_HOOKS_DIR = "/usr/share/containers/oci/hooks.d"

#: The host's ``containerd config dump``: given the fake root's containerd binary path, the
#: config it would print (``None``: no such binary on the host).
Dump = Callable[[str | None], dict[str, Any] | None]


def toml_dump(tree: Mapping[str, Any]) -> str:
    return tomli_w.dumps(dict(tree))


def _load(text: str | None) -> dict[str, Any] | None:
    return None if text is None else tomllib.loads(text)


def runtimes_table(tree: dict[str, Any], version: int) -> dict[str, Any]:
    """The ``runtimes`` table of a containerd config tree (created when missing)."""
    cri = tree.setdefault("plugins", {}).setdefault(CRI_PLUGIN[version], {})
    runtimes: dict[str, Any] = cri.setdefault("containerd", {}).setdefault("runtimes", {})
    return runtimes


def _source(env: Mapping[str, str], pod: PodView, dump: Dump) -> dict[str, Any]:
    config = env.get("RUNTIME_CONFIG") or env.get("CONTAINERD_CONFIG", "")
    for source in env.get("RUNTIME_CONFIG_SOURCE", "command,file").split(","):
        if source == "command":
            found = dump(env.get("RUNTIME_EXECUTABLE_PATH"))
        elif source == "file":
            found = _load(pod.read(config))
        else:
            found = _load(pod.read(source.removeprefix("file=")))
        if found is not None:
            return found
    return {}


def _containerd(env: Mapping[str, str], pod: PodView, dump: Dump) -> None:
    toolkit = env["ROOT"].rstrip("/") + "/toolkit"
    config = env.get("RUNTIME_CONFIG") or env.get("CONTAINERD_CONFIG", "")
    source = _source(env, pod, dump)
    version = int(source.get("version", 2))
    main = env.get("NVIDIA_RUNTIME_NAME", "nvidia")
    changes: dict[str, Any] = {"version": version}
    source_cri = source.get("plugins", {}).get(CRI_PLUGIN[version])
    if source_cri is not None:
        changes["plugins"] = {CRI_PLUGIN[version]: copy.deepcopy(source_cri)}
    runtimes = runtimes_table(changes, version)
    runc = runtimes_table(copy.deepcopy(source), version).get("runc", {})
    for suffix, binary in HANDLER_BINARIES.items():
        entry = copy.deepcopy(runc) or {"runtime_type": "io.containerd.runc.v2"}
        entry.setdefault("options", {})["BinaryName"] = f"{toolkit}/{binary}"
        runtimes[suffix or main] = entry
    cri = changes["plugins"][CRI_PLUGIN[version]]
    if env.get("CDI_ENABLED") == "true":
        cri["enable_cdi"] = True
    if env.get("NVIDIA_RUNTIME_SET_AS_DEFAULT") == "true":
        cri["containerd"]["default_runtime_name"] = main
    original = _load(pod.read(config)) or {"version": version}
    drop_in = env.get("RUNTIME_DROP_IN_CONFIG", DEFAULT_DROP_IN)
    if drop_in:
        pod.write(drop_in, toml_dump(changes))
    else:
        # an empty drop-in (v1.18.1 to v1.20.0): the changes go to the top-level file ...
        pod.write(config, toml_dump(changes))
    # ... which is then rewritten from its original tree plus the imports line.
    imports = list(original.get("imports", []))
    # The drop-in's host *folder* as a glob, never the file (``importPattern``).
    host = env.get("RUNTIME_DROP_IN_CONFIG_HOST_PATH", drop_in)
    pattern = posixpath.dirname(host) + "/*.toml"
    if pattern not in imports:
        imports.append(pattern)
    pod.write(config, toml_dump({**original, "imports": imports}))


def _crio(env: Mapping[str, str], pod: PodView) -> None:
    toolkit = env["ROOT"].rstrip("/") + "/toolkit"
    if env.get("CRIO_CONFIG_MODE", "hook") == "hook":
        hooks = env.get("CRIO_HOOKS_DIR", DEFAULT_HOOKS_DIR)
        hook = {
            "version": "1.0.0",
            "hook": {"path": f"{toolkit}/nvidia-container-runtime-hook", "args": ["prestart"]},
            "when": {"always": True},
            "stages": ["prestart"],
        }
        import json

        pod.write(f"{hooks}/oci-nvidia-hook.json", json.dumps(hook))
        return
    main = env.get("NVIDIA_RUNTIME_NAME", "nvidia")
    runtimes = {
        suffix or main: {"runtime_path": f"{toolkit}/{binary}", "runtime_type": "oci"}
        for suffix, binary in HANDLER_BINARIES.items()
    }
    changes: dict[str, Any] = {"crio": {"runtime": {"runtimes": runtimes}}}
    if env.get("NVIDIA_RUNTIME_SET_AS_DEFAULT") == "true":
        changes["crio"]["runtime"]["default_runtime"] = main
    target = env.get("RUNTIME_DROP_IN_CONFIG") or env.get("RUNTIME_CONFIG", "")
    pod.write(target, toml_dump(changes))


def install(env: Mapping[str, str], pod: PodView, dump: Dump) -> None:
    """What the installer leaves behind, given the container's env and the pod's mounts."""
    toolkit = env["ROOT"].rstrip("/") + "/toolkit"
    for binary in (*HANDLER_BINARIES.values(), "nvidia-ctk", "nvidia-cdi-hook",
                   "nvidia-container-runtime-hook"):  # fmt: skip
        pod.write(f"{toolkit}/{binary}", "#!/bin/sh\n")
        pod.local(f"{toolkit}/{binary}").chmod(0o755)
    if env["RUNTIME"] == "containerd":
        _containerd(env, pod, dump)
    else:
        _crio(env, pod)
    if env.get("CDI_ENABLED") == "true":
        spec = "cdiVersion: 0.5.0\nkind: management.nvidia.com/gpu\ndevices: [{name: all}]\n"
        pod.write(
            f"{env.get('CDI_OUTPUT_DIR', '/var/run/cdi')}/management.nvidia.com-gpu.yaml", spec
        )
    pod.write(env["TOOLKIT_PID_FILE"], "1\n")
