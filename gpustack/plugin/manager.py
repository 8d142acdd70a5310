"""The plugin's lifecycle: discover, serve, register, and recover from kubelet restarts.

A single loop polls every 100 ms (cheap, and needs no inotify binding): a replaced
``kubelet.sock`` or a deleted plugin socket means the kubelet restarted, so the affected
servers are restarted and re-registered, well within a second. Stop and reload requests (the
signal handlers in ``main``) wake the loop immediately.

Reloads are coalesced (issue #21): requests that arrive while one is due make one reload, at most
one per :data:`RELOAD_INTERVAL_S`; a reload that finds the configuration and the GPUs unchanged
keeps the servers serving and registered (and the health they learned) and writes the CDI spec
again, so Allocate is answered throughout. Only a changed configuration or GPU set restarts them.

Once serving, nothing a peer on the node does ends the loop: a config that fails to load on
SIGHUP keeps the running one, and a socket folder that cannot be served (replaced by a file,
made read-only) is retried every second until it can. Only the first start fails fast, where
such a problem is a wrong flag rather than a hostile peer.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from gpustack.plugin.allocate import AllocateSettings
from gpustack.plugin.backends import Backend, InitError, make_backend
from gpustack.plugin.cdi import (
    DEFAULT_CDI_ROOT,
    DEFAULT_HOOK_PATH,
    SPEC_NAME,
    DriverFiles,
    SpecSettings,
    build_spec,
    discover_driver_files,
    uses_cdi,
    write_spec,
)
from gpustack.plugin.config import ConfigError, PluginConfig
from gpustack.plugin.devices import Gpu
from gpustack.plugin.health import EnvError, HealthState, XidPolicy
from gpustack.plugin.registration import Slot, bind, kubelet_id, register, restart
from gpustack.plugin.resources import Resource, ResourceError, build_resources
from gpustack.plugin.server import PluginServer
from gpustack.plugin.wake import Waker

log = logging.getLogger("gpustack.plugin")

POLL_S = 0.1
#: Reload requests (SIGHUP) are coalesced: however many arrive, at most one reload starts per
#: interval, so a storm of signals (a misfiring ConfigMap watcher) cannot keep the servers down.
RELOAD_INTERVAL_S = 1.0


@dataclass(frozen=True)
class Runtime:
    """Where to serve and how to (re)load the configuration."""

    socket_dir: str
    #: ``None``: serve the sockets but never register (``KUBELET_SOCKET=""``).
    kubelet_socket: str | None
    load_config: Callable[[], PluginConfig]
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    make_backend: Callable[[PluginConfig], Backend] = make_backend
    #: Where the CDI spec goes when a CDI device list strategy is configured.
    cdi_root: str = DEFAULT_CDI_ROOT
    #: ``nvidia-cdi-hook`` as the host sees it (the spec's hooks run on the host).
    cdi_hook_path: str = DEFAULT_HOOK_PATH


class PluginManager:
    """Runs until ``request_stop``; ``request_reload`` re-reads config and rediscovers."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime
        #: Set from signal handlers: plain attributes and a pipe, never a lock
        #: (:mod:`gpustack.plugin.wake`); the loop logs the signals they record.
        self._wake = Waker()
        self._stop = False
        self._reload = False
        self._signals: list[str] = []
        self._slots: list[Slot] = []
        self._health: HealthState | None = None
        self._health_stop = threading.Event()
        self._health_thread: threading.Thread | None = None
        self._backend: Backend | None = None
        #: What the servers run with: the config and GPUs a reload compares with.
        self._running: tuple[PluginConfig, list[Gpu], list[Resource], AllocateSettings] | None = (
            None
        )
        #: No reload starts before this (monotonic seconds): requests meanwhile coalesce.
        self._next_reload = 0.0

    def request_stop(self, signal_name: str | None = None) -> None:
        """Stop serving; safe in a signal handler (``signal_name`` is logged by the loop)."""
        if signal_name is not None:
            self._signals.append(signal_name)
        self._stop = True
        self._wake.wake()

    def request_reload(self, signal_name: str | None = None) -> bool:
        """Ask for a reload; ``False`` when one is already pending (this request joins it).
        Safe in a signal handler; ``signal_name`` is logged once per reload, not per signal of
        a storm."""
        pending = self._reload
        self._reload = True
        if not pending and signal_name is not None:
            self._signals.append(signal_name)
        if time.monotonic() >= self._next_reload:
            self._wake.wake()  # else the loop's next poll starts it: a storm wakes nothing
        return not pending

    def _sleep(self) -> None:
        """Wait for a wake or the next poll, then log the signals received meanwhile."""
        self._wake.sleep(POLL_S)
        while self._signals:
            log.info("received %s", self._signals.pop(0))

    def _reload_due(self) -> bool:
        return self._reload and time.monotonic() >= self._next_reload

    @property
    def socket_paths(self) -> list[str]:
        return [slot.server.socket_path for slot in self._slots]

    def run(self) -> int:
        """The main loop; returns the process exit code.

        Whatever escapes it still stops the servers: their non-daemon gRPC threads would
        otherwise keep a process alive that no longer registers or reloads.
        """
        try:
            return self._run()
        finally:
            self._teardown()
            while self._signals:
                log.info("received %s", self._signals.pop(0))
            self._wake.close()

    def _run(self) -> int:
        try:
            config = self._rt.load_config()
        except (ConfigError, EnvError) as exc:
            log.error("%s", exc)
            return 1
        while not self._stop:
            try:
                self._start(config)
            except (InitError, ResourceError, EnvError) as exc:
                log.error("%s", exc)
                self._teardown()
                if config.flags.fail_on_init_error:
                    return 1
                log.info("failOnInitError is false: waiting (send SIGHUP to retry)")
                self._idle()
                if not self._stop:
                    config = self._reload_config() or config
                continue
            # A broken file on reload leaves the running servers (and the health they
            # learned) untouched; only a valid one tears them down and starts over.
            try:
                while True:
                    self._serve()
                    if self._stop:
                        break
                    new = self._reload_config()
                    if new is not None and self._unchanged(new):
                        self._refresh()
                    elif new is not None:
                        config = new
                        break
            except InitError as exc:  # another plugin took our socket while we served
                log.error("%s", exc)
                self._teardown()
                return 1
            self._teardown()
        log.info("stopped")
        return 0

    def _reload_config(self) -> PluginConfig | None:
        """The re-read configuration, or ``None`` (logged) when it is invalid."""
        self._reload = False
        self._next_reload = time.monotonic() + RELOAD_INTERVAL_S
        log.info("reloading configuration")
        try:
            return self._rt.load_config()
        except (ConfigError, EnvError) as exc:
            log.error("reload failed, keeping the previous configuration: %s", exc)
        except Exception as exc:  # a bug or a hostile file must not end the loop that serves
            log.error(
                "reload failed (%s), keeping the previous configuration: %s",
                type(exc).__name__,
                exc,
            )
        return None

    def _unchanged(self, config: PluginConfig) -> bool:
        """Whether ``config`` and the GPUs found now are what the servers run with."""
        if self._running is None or self._backend is None or config != self._running[0]:
            return False
        try:
            return self._backend.discover() == self._running[1]
        except Exception as exc:  # noqa: BLE001 - a failing discovery is a change: restart
            log.info("rediscovery failed (%s): restarting", exc)
            return False

    def _refresh(self) -> None:
        """A reload that changed nothing: keep serving and registered (the kubelet has nothing
        new to learn), and write the CDI spec again in case someone removed it."""
        assert self._running is not None
        config, _gpus, resources, settings = self._running
        log.info("configuration and GPUs unchanged: servers kept")
        if uses_cdi(settings.strategies):
            try:
                self._write_cdi_spec(config, resources, settings.control_paths)
            except InitError as exc:
                log.error("%s", exc)

    def _start(self, config: PluginConfig) -> None:
        self._running = None
        self._backend = self._rt.make_backend(config)
        gpus = self._backend.discover()
        resources = build_resources(config, gpus)
        log.info(
            "discovered %d GPUs (%s backend): %s",
            len(gpus),
            config.extensions.backend,
            ", ".join(f"{g.index}={g.uuid}" for g in gpus) or "none",
        )
        if not resources:
            log.info("No devices found. Waiting indefinitely.")
        self._health = HealthState(u for r in resources for u in r.units)
        policy = XidPolicy.from_config(config.extensions.health, self._rt.env)
        settings = AllocateSettings(
            strategies=config.flags.plugin.device_list_strategy,
            id_strategy=config.flags.plugin.device_id_strategy,
            cdi_annotation_prefix=config.flags.plugin.cdi_annotation_prefix,
            pass_device_specs=config.flags.plugin.pass_device_specs,
            dev_root=config.flags.dev_root,
            control_paths=self._backend.control_paths(),
            allocation_policy=config.flags.plugin.shared_devices_allocation_policy,
        )
        if uses_cdi(settings.strategies):
            # Before serving: every name Allocate can return must already resolve.
            self._write_cdi_spec(config, resources, settings.control_paths)
        if policy.active:
            self._start_health(self._backend, self._health, policy)
        else:
            log.info("health checks disabled")
        for resource in resources:
            server = PluginServer(resource, self._health, settings, self._rt.socket_dir)
            bind(server, self._rt.socket_dir)
            self._slots.append(Slot(server))
        self._running = (config, gpus, resources, settings)

    def _write_cdi_spec(
        self, config: PluginConfig, resources: list[Resource], control_paths: tuple[str, ...]
    ) -> None:
        simulated = config.extensions.backend == "simulated"
        files = (
            DriverFiles()
            if simulated
            else discover_driver_files(config.flags.plugin.container_driver_root)
        )
        spec = build_spec(
            (u for r in resources for u in r.units),
            SpecSettings(
                simulated=simulated,
                host_driver_root=config.flags.nvidia_driver_root,
                dev_root=config.flags.dev_root,
                hook_path=self._rt.cdi_hook_path,
            ),
            control_paths,
            files,
        )
        path = os.path.join(self._rt.cdi_root, SPEC_NAME)
        try:
            changed = write_spec(self._rt.cdi_root, spec)
        except OSError as exc:
            raise InitError(
                f"cannot write the CDI spec {path}: {exc}; check --cdi-root (the host's "
                "/var/run/cdi, mounted writable) or drop the cdi-* device list strategies"
            ) from None
        log.info(
            "CDI spec %s %s (%d devices)",
            path,
            "written" if changed else "unchanged",
            len(spec["devices"]),
        )
        if not simulated and not files.libraries:
            log.warning(
                "no NVIDIA driver libraries under %s: the CDI spec mounts none; "
                "check --container-driver-root",
                config.flags.plugin.container_driver_root,
            )

    def _start_health(self, backend: Backend, health: HealthState, policy: XidPolicy) -> None:
        self._health_stop = threading.Event()

        def watch() -> None:
            try:
                backend.watch_health(health, policy, self._health_stop)
            except Exception as exc:  # a dead watcher must not look like healthy GPUs
                log.error("health monitor failed: %s", exc)
                health.set_all_unhealthy(f"health monitor failed: {exc}")

        self._health_thread = threading.Thread(target=watch, name="health", daemon=True)
        self._health_thread.start()

    def _serve(self) -> None:
        sock = self._rt.kubelet_socket
        if sock is None:
            log.info("KUBELET_SOCKET is empty: serving %s without registering", self._rt.socket_dir)
        announced = False
        while not self._stop and not self._reload_due():
            current = kubelet_id(sock) if sock is not None else None
            # Silence here would hide a wrong --socket-dir (distributions differ, e.g. k0s).
            if sock is not None and current is None and self._slots and not announced:
                log.info("waiting for the kubelet to create %s", sock)
            announced = current is None
            for slot in self._slots:
                if not slot.server.socket_intact():
                    if slot.server.serving:
                        log.info("socket %s was removed; serving again", slot.server.socket_path)
                    restart(slot, self._rt.socket_dir)
                elif slot.registered_with not in (None, current) and current is not None:
                    log.info("kubelet restarted; re-registering %s", slot.server.resource.name)
                    restart(slot, self._rt.socket_dir)
                if (
                    slot.registered_with is None
                    and slot.server.serving
                    and sock is not None
                    and current is not None
                ):
                    register(slot, sock, current)
            self._sleep()

    def _idle(self) -> None:
        while not self._stop and not self._reload_due():
            self._sleep()

    def _teardown(self) -> None:
        self._running = None
        for slot in self._slots:
            slot.server.stop()
        self._slots = []
        self._health_stop.set()
        if self._health_thread is not None:
            self._health_thread.join(timeout=5)
            self._health_thread = None
        if self._health is not None:
            self._health.close()
            self._health = None
        if self._backend is not None:
            self._backend.close()
            self._backend = None
