"""``gpustack-dra-plugin``: the simulated DRA driver's command line.

It reads the device plugin's config file (``gpustack.backend: simulated`` and its
``gpustack.simulated.gpus``), so one ConfigMap describes a node's simulated GPUs to both
plugins. The driver name defaults to NVIDIA's ``gpu.nvidia.com`` (as the simulated device
plugin advertises NVIDIA's ``nvidia.com/gpu``): NVIDIA's DeviceClasses and the claims written
for real GPUs, CEL selectors included, then work unchanged on a cluster without GPUs. Give
another name (``--driver-name``) where NVIDIA's driver runs in the same cluster; never run both
under one name on one node. Flags fall back to the environment variable named in brackets;
the directory variables are those NVIDIA's driver reads.
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gpustack import dra_upstream as upstream
from gpustack.plugin.backends.simulated import SimulatedBackend
from gpustack.plugin.cdi import DEFAULT_CDI_ROOT
from gpustack.plugin.config import ConfigError, PluginConfig, load_config
from gpustack.plugin.devices import Gpu
from gpustack.plugin.dra import slices
from gpustack.plugin.dra.driver import DEFAULT_RESYNC_S, DraDriver, DriverSettings
from gpustack.plugin.dra.kubeapi import ApiConfig, ApiError, KubeClient
from gpustack.plugin.logs import log_to_stderr
from gpustack.plugin.server import SocketBusyError
from gpustack.plugin.wake import Waker, on_signals

log = logging.getLogger("gpustack.plugin.dra")

DRIVER_NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$"

#: (flag, environment variable, default, help)
OPTIONS: tuple[tuple[str, str, str, str], ...] = (
    ("--config-file", "CONFIG_FILE", "", "the device plugin's config file (required)"),
    ("--node-name", "NODE_NAME", "", "this node's name: the pool name (required)"),
    ("--driver-name", "DRA_DRIVER_NAME", upstream.GPU_DRIVER, "DRA driver name"),
    ("--kubelet-registrar-directory-path", "KUBELET_REGISTRAR_DIRECTORY_PATH",
     upstream.KUBELET_REGISTRY_DIR, "the kubelet's plugin registration folder"),
    ("--kubelet-plugins-directory-path", "KUBELET_PLUGINS_DIRECTORY_PATH",
     upstream.KUBELET_PLUGINS_DIR, "the kubelet's plugin data folder"),
    ("--cdi-root", "CDI_ROOT", DEFAULT_CDI_ROOT, "folder for the claims' CDI specs"),
    ("--api-server", "KUBERNETES_API_SERVER", "",
     "API server URL (default: in-cluster, with the ServiceAccount token)"),
    ("--token-file", "KUBERNETES_TOKEN_FILE", "", "bearer token file for --api-server"),
    ("--ca-file", "KUBERNETES_CA_FILE", "", "CA bundle for an https --api-server"),
    ("--driver-version", "SIMULATED_DRIVER_VERSION", slices.NodeDriver.driver_version,
     "simulated driver version (driverVersion)"),
    ("--cuda-driver-version", "SIMULATED_CUDA_DRIVER_VERSION",
     slices.NodeDriver.cuda_driver_version, "simulated CUDA driver version (cudaDriverVersion)"),
    ("--resync-seconds", "RESYNC_SECONDS", str(DEFAULT_RESYNC_S),
     "seconds between ResourceSlice syncs"),
)  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpustack-dra-plugin",
        description="Simulated DRA driver for GPUs: NVIDIA's ResourceSlice shape, no hardware.",
    )
    for flag, env, default, text in OPTIONS:
        shown = f" ({default})" if default else ""
        parser.add_argument(flag, help=f"{text} [{env}]{shown}")
    return parser


def resolve(args: argparse.Namespace, env: dict[str, str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for flag, var, default, _ in OPTIONS:
        dest = flag.lstrip("-").replace("-", "_")
        given = getattr(args, dest)
        values[dest] = given if given is not None else (env.get(var) or default)
    return values


def settings_from(values: dict[str, str]) -> DriverSettings:
    """Validated settings; raises ``ValueError`` with a one-line message."""
    for required in ("config_file", "node_name"):
        if not values[required]:
            flag = "--" + required.replace("_", "-")
            raise ValueError(f"{flag} is required")
    if not re.match(DRIVER_NAME_PATTERN, values["driver_name"]) or len(values["driver_name"]) > 63:
        raise ValueError(
            f"--driver-name {values['driver_name']!r} must be a DNS subdomain of at most 63 "
            "characters, e.g. gpu.nvidia.com"
        )
    node = slices.NodeDriver(
        driver_version=values["driver_version"],
        cuda_driver_version=values["cuda_driver_version"],
    )
    slices.semver(node.driver_version)
    slices.semver(node.cuda_driver_version)
    try:
        resync = float(values["resync_seconds"])
    except ValueError:
        resync = -1.0
    if not resync > 0:
        raise ValueError(f"--resync-seconds {values['resync_seconds']!r} must be > 0")
    return DriverSettings(
        driver=values["driver_name"],
        node_name=values["node_name"],
        registry_dir=values["kubelet_registrar_directory_path"],
        plugins_dir=values["kubelet_plugins_directory_path"],
        cdi_root=values["cdi_root"],
        node=node,
        resync_s=resync,
    )


def _client(values: dict[str, str], env: dict[str, str]) -> tuple[PluginConfig, KubeClient]:
    """The simulated GPUs' config and the API client; raises what the flags or files get wrong."""
    config = load_config(values["config_file"])
    if config.extensions.backend != "simulated":
        raise ValueError(
            f"{values['config_file']}: gpustack.backend is {config.extensions.backend!r}; "
            "the DRA driver only simulates GPUs: set gpustack.backend: simulated"
        )
    api = (
        ApiConfig(values["api_server"], values["token_file"], values["ca_file"])
        if values["api_server"]
        else ApiConfig.in_cluster(env)
    )
    return config, KubeClient(api)


@dataclass
class _Signals:
    """What the signal handlers recorded: the stop signals, and the reloads (SIGHUP) asked for.

    The handlers take no lock and log nothing themselves (gpustack.plugin.wake): they record
    the signal and wake the loop of :func:`_serve`. SIGHUP, which killed the driver and left its
    sockets behind (issue #33), reloads the config file as it does for the device plugin.
    """

    wake: Waker = field(default_factory=Waker)
    received: list[str] = field(default_factory=list)
    reloads: list[str] = field(default_factory=list)

    def install(self) -> None:
        def record(into: list[str]) -> Callable[[str], None]:
            def add(name: str) -> None:
                into.append(name)
                self.wake.wake()

            return add

        on_signals(record(self.received), record(self.reloads))


def _serve(
    driver: DraDriver, signals: _Signals, config_file: str, gpus: list[Gpu]
) -> tuple[DraDriver, int]:
    """Run until a stop signal, restarting the driver on each reload that changes the GPUs;
    the driver running at the end (to stop) and the exit status."""
    while not signals.received:
        signals.wake.sleep(None)
        if signals.reloads and not signals.received:
            log.info("received %s: reloading %s", signals.reloads[0], config_file)
            signals.reloads.clear()  # signals during the reload ask for one more, not one each
            found = _reload(config_file, gpus)
            if found is None:
                continue
            gpus = found
            driver.stop()
            driver = DraDriver(driver.settings, driver.client, gpus)
            try:
                driver.start()
            except (SocketBusyError, OSError) as exc:
                log.error("restarting with the new configuration failed: %s", exc)
                return driver, 1
    return driver, 0


def main(argv: Sequence[str] | None = None) -> int:
    log_to_stderr()
    parser = build_parser()
    args = parser.parse_args(argv)
    env = dict(os.environ)
    values = resolve(args, env)
    try:
        settings = settings_from(values)
        config, client = _client(values, env)
    except (ValueError, ConfigError, ApiError) as exc:
        print(f"gpustack-dra-plugin: {exc}", file=sys.stderr)
        return 1
    gpus = SimulatedBackend(config).discover()
    driver = DraDriver(settings, client, gpus)
    signals = _Signals()
    signals.install()
    try:
        driver.start()
    except (SocketBusyError, OSError) as exc:
        print(f"gpustack-dra-plugin: {exc}", file=sys.stderr)
        driver.stop()
        return 1
    driver, status = _serve(driver, signals, values["config_file"], gpus)
    if signals.received:
        log.info("received %s", signals.received[0])
    driver.stop()
    signals.wake.close()
    return status


def _reload(path: str, gpus: list[Gpu]) -> list[Gpu] | None:
    """The GPUs of the config file now, or ``None`` (logged) when it is unchanged or cannot be
    used: the running driver then keeps the previous configuration."""
    try:
        config = load_config(path)
        if config.extensions.backend != "simulated":
            raise ValueError(f"{path}: gpustack.backend is {config.extensions.backend!r}")
        found = SimulatedBackend(config).discover()
    except (ConfigError, ValueError, OSError) as exc:
        log.error("reload failed, keeping the previous configuration: %s", exc)
        return None
    if found == gpus:
        log.info("configuration unchanged: %d GPUs", len(gpus))
        return None
    log.info("configuration changed: %d GPUs, restarting the servers", len(found))
    return found


if __name__ == "__main__":
    sys.exit(main())
