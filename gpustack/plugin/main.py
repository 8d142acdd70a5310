"""``gpustack-device-plugin``: command line, environment fallbacks and signals.

Precedence follows NVIDIA's plugin: an explicitly set flag, else its environment variable,
else the config file, else the built-in default. Overrides are applied to the file's decoded
form and re-parsed, so they are validated exactly like the file. argparse (not click) keeps
the plugin image's dependencies to grpcio, protobuf, PyYAML and pynvml.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpustack.plugin.cdi import DEFAULT_CDI_ROOT, DEFAULT_HOOK_PATH
from gpustack.plugin.config import ConfigError, PluginConfig, load_config
from gpustack.plugin.health import EnvError, XidPolicy
from gpustack.plugin.logs import log_to_stderr
from gpustack.plugin.manager import PluginManager, Runtime
from gpustack.plugin.wake import on_signals

DEFAULT_SOCKET_DIR = "/var/lib/kubelet/device-plugins"
TRUE = ("true", "1", "yes", "on")
FALSE = ("false", "0", "no", "off")


def _bool(text: str) -> bool:
    low = text.strip().lower()
    if low in TRUE:
        return True
    if low in FALSE:
        return False
    raise ValueError(f"{text!r} is not a boolean; use true or false")


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


@dataclass(frozen=True)
class Override:
    """A flag/env pair that overrides one config key."""

    flag: str
    env: str
    path: tuple[str, ...]
    convert: Callable[[str], Any]
    help: str
    is_bool: bool = False
    #: NVIDIA's other spellings of the flag and the variable, accepted alike.
    flag_aliases: tuple[str, ...] = ()
    env_aliases: tuple[str, ...] = ()

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


OVERRIDES: tuple[Override, ...] = (
    Override("--backend", "DP_BACKEND", ("gpustack", "backend"), str, "nvml or simulated"),
    Override("--resource-name", "DP_RESOURCE_NAME", ("gpustack", "resourceName"), str,
             "resource name for whole GPUs (default nvidia.com/gpu)"),
    Override("--mig-strategy", "MIG_STRATEGY", ("flags", "migStrategy"), str,
             "none, single or mixed"),
    Override("--fail-on-init-error", "FAIL_ON_INIT_ERROR", ("flags", "failOnInitError"), _bool,
             "exit when NVML cannot start (default true)", is_bool=True),
    Override("--nvidia-driver-root", "NVIDIA_DRIVER_ROOT", ("flags", "nvidiaDriverRoot"), str,
             "host driver root", flag_aliases=("--driver-root",)),
    Override("--nvidia-dev-root", "NVIDIA_DEV_ROOT", ("flags", "nvidiaDevRoot"), str,
             "host prefix of /dev/nvidia* (default: driver root)", flag_aliases=("--dev-root",)),
    Override("--pass-device-specs", "PASS_DEVICE_SPECS", ("flags", "plugin", "passDeviceSpecs"),
             _bool, "return /dev/nvidia* device specs", is_bool=True),
    Override("--device-list-strategy", "DEVICE_LIST_STRATEGY",
             ("flags", "plugin", "deviceListStrategy"), _csv,
             "comma list of envvar, volume-mounts, cdi-annotations, cdi-cri"),
    Override("--device-id-strategy", "DEVICE_ID_STRATEGY", ("flags", "plugin", "deviceIDStrategy"),
             str, "uuid or index"),
    Override("--cdi-annotation-prefix", "CDI_ANNOTATION_PREFIX",
             ("flags", "plugin", "cdiAnnotationPrefix"), str, "annotation prefix for CDI"),
    Override("--container-driver-root", "CONTAINER_DRIVER_ROOT",
             ("flags", "plugin", "containerDriverRoot"), str,
             "driver root inside this container (default /driver-root)",
             flag_aliases=("--driver-root-ctr-path",), env_aliases=("DRIVER_ROOT_CTR_PATH",)),
    Override("--shared-devices-allocation-policy", "SHARED_DEVICES_ALLOCATION_POLICY",
             ("flags", "plugin", "sharedDevicesAllocationPolicy"), str, "distributed or packed"),
)  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpustack-device-plugin",
        description="Kubernetes device plugin for NVIDIA GPUs (kubelet API v1beta1).",
        epilog="Every option also reads the environment variable named in brackets. Health "
        "checks: DP_DISABLE_HEALTHCHECKS=all|xids|<xid,...>, DP_ENABLE_HEALTHCHECKS=<xid,...>.",
    )
    parser.add_argument("--config-file", help="config file (YAML) [CONFIG_FILE]")
    parser.add_argument(
        "--socket-dir",
        help=f"device plugin socket directory [DP_SOCKET_DIR] ({DEFAULT_SOCKET_DIR})",
    )
    parser.add_argument(
        "--kubelet-socket",
        help="kubelet registration socket [KUBELET_SOCKET] (<socket-dir>/kubelet.sock); "
        "empty: serve the sockets without registering",
    )
    parser.add_argument(
        "--cdi-root",
        help="folder for the CDI spec written with cdi-annotations or cdi-cri "
        f"[CDI_ROOT] ({DEFAULT_CDI_ROOT})",
    )
    parser.add_argument(
        "--nvidia-cdi-hook-path",
        help="nvidia-cdi-hook on the host, run by the CDI spec's hooks "
        f"[NVIDIA_CDI_HOOK_PATH] ({DEFAULT_HOOK_PATH})",
    )
    for o in OVERRIDES:
        flags = (o.flag, *o.flag_aliases)
        envs = ", ".join((o.env, *o.env_aliases))
        if o.is_bool:
            parser.add_argument(
                *flags, dest=o.dest, nargs="?", const="true", metavar="BOOL",
                help=f"{o.help} [{envs}]",
            )  # fmt: skip
        else:
            parser.add_argument(*flags, dest=o.dest, help=f"{o.help} [{envs}]")
    return parser


def _set(doc: dict[str, Any], path: Sequence[str], value: Any) -> None:
    for key in path[:-1]:
        doc = doc.setdefault(key, {})
    doc[path[-1]] = value


def collect_overrides(
    args: argparse.Namespace, env: Mapping[str, str]
) -> list[tuple[Override, str, Any]]:
    """(override, where it came from, converted value) for every flag or env that is set."""
    found = []
    for o in OVERRIDES:
        raw = getattr(args, o.dest)
        source = o.flag
        for name in (o.env, *o.env_aliases):
            if raw is None and env.get(name, "") != "":
                raw, source = env[name], name
        if raw is None:
            continue
        try:
            found.append((o, source, o.convert(raw)))
        except ValueError as exc:
            raise ConfigError(source, str(exc)) from None
    return found


def apply_overrides(
    config: PluginConfig, overrides: Sequence[tuple[Override, str, Any]]
) -> PluginConfig:
    """The config with overrides applied, validated like the file."""
    doc = config.to_dict()
    for o, source, value in overrides:
        _set(doc, o.path, value)
        try:
            PluginConfig.from_dict(doc)
        except ConfigError as exc:
            raise ConfigError(source, f"{exc.message} (from {source})") from None
    return PluginConfig.from_dict(doc)


def main(argv: Sequence[str] | None = None) -> int:
    log_to_stderr()
    parser = build_parser()
    args = parser.parse_args(argv)
    env = dict(os.environ)
    try:
        overrides = collect_overrides(args, env)
        apply_overrides(PluginConfig(), overrides)
        XidPolicy.from_config(PluginConfig().extensions.health, env)
    except (ConfigError, EnvError) as exc:
        parser.error(str(exc))
    config_file = args.config_file or env.get("CONFIG_FILE") or None
    socket_dir = args.socket_dir or env.get("DP_SOCKET_DIR") or DEFAULT_SOCKET_DIR
    # Set but empty (flag or env, as in NVIDIA's plugin): serve without registering, for a
    # kubelet that finds plugins itself or for tests that dial the sockets directly.
    given = args.kubelet_socket if args.kubelet_socket is not None else env.get("KUBELET_SOCKET")
    if given is None:
        given = os.path.join(socket_dir, "kubelet.sock")
    kubelet_socket = given or None

    def load() -> PluginConfig:
        base = load_config(config_file) if config_file else PluginConfig()
        return apply_overrides(base, overrides)

    cdi_root = args.cdi_root or env.get("CDI_ROOT") or DEFAULT_CDI_ROOT
    hook_path = args.nvidia_cdi_hook_path or env.get("NVIDIA_CDI_HOOK_PATH") or DEFAULT_HOOK_PATH
    if not os.path.isabs(hook_path):
        parser.error(f"--nvidia-cdi-hook-path {hook_path!r} must be an absolute host path")
    manager = PluginManager(
        Runtime(socket_dir, kubelet_socket, load, env, cdi_root=cdi_root, cdi_hook_path=hook_path)
    )

    # the manager's loop logs the signals the handlers record
    on_signals(manager.request_stop, manager.request_reload)
    return manager.run()


if __name__ == "__main__":
    sys.exit(main())
