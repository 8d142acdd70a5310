"""Fixtures: a simulated kubelet and the plugin, in-process or as the real console script.

Unix socket paths are limited to 107 bytes, so socket directories live directly under /tmp.
"""

from __future__ import annotations

import copy
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.plugin.config import load_config
from gpustack.plugin.manager import PluginManager, Runtime
from gpustack.plugin.testkubelet import KubeletSimulator

REPO = Path(__file__).resolve().parents[2]
PLUGIN_SCRIPT = Path(sys.executable).parent / "gpustack-device-plugin"

#: 8 × H100 in NVLink pairs (0-1, 2-3, 4-5, 6-7); GPUs 0-3 on NUMA node 0, 4-7 on node 1.
H100X8: dict[str, Any] = {
    "gpustack": {
        "backend": "simulated",
        "simulated": {
            "gpus": [{"index": i, "numaNode": i // 4, "nvlinkPeers": [i ^ 1]} for i in range(8)]
        },
    }
}


def sim_config(**sections: Any) -> dict[str, Any]:
    """H100X8 with top-level sections merged in (``gpustack`` is merged one level deep)."""
    doc = copy.deepcopy(H100X8)
    for key, value in sections.items():
        if key == "gpustack":
            doc["gpustack"].update(value)
        else:
            doc[key] = value
    return doc


@pytest.fixture
def sockdir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="gsp", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def kubelet(sockdir: Path) -> Iterator[KubeletSimulator]:
    with KubeletSimulator(str(sockdir / "dp")) as sim:
        yield sim


class InProcessPlugin:
    """The plugin's manager on a thread, stopped (and checked) at teardown."""

    def __init__(
        self,
        socket_dir: str,
        config_file: Path,
        env: Mapping[str, str],
        cdi_root: Path | None = None,
    ) -> None:
        # The CDI spec (with a CDI strategy) goes next to the socket folder, never the host's.
        cdi_root = cdi_root or Path(socket_dir).parent / "cdi"
        runtime = Runtime(
            socket_dir=socket_dir,
            kubelet_socket=os.path.join(socket_dir, "kubelet.sock"),
            load_config=lambda: load_config(config_file),
            env=dict(env),
            cdi_root=str(cdi_root),
        )
        self.cdi_root = cdi_root
        self.config_file = config_file
        self.manager = PluginManager(runtime)
        self.exit_code: int | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.exit_code = self.manager.run()

    def stop(self) -> int | None:
        self.manager.request_stop()
        self.thread.join(timeout=10)
        assert not self.thread.is_alive(), "plugin did not stop within 10 s"
        return self.exit_code


StartPlugin = Callable[..., InProcessPlugin]


@pytest.fixture
def start_plugin(kubelet: KubeletSimulator, sockdir: Path) -> Iterator[StartPlugin]:
    """``start_plugin(config_dict, env={})`` runs the plugin against ``kubelet``."""
    plugins: list[InProcessPlugin] = []

    def start(config: dict[str, Any], env: Mapping[str, str] | None = None) -> InProcessPlugin:
        path = sockdir / f"config{len(plugins)}.yaml"
        path.write_text(yaml.safe_dump(config))
        plugin = InProcessPlugin(kubelet.socket_dir, path, env or {})
        plugins.append(plugin)
        return plugin

    yield start
    for plugin in plugins:
        assert plugin.stop() in (0, 1)


class PluginProcess:
    """The ``gpustack-device-plugin`` console script as a child process; stderr is collected."""

    def __init__(self, args: list[str], env: Mapping[str, str] | None = None) -> None:
        # a plugin that hangs is killed with SIGABRT by finish(): faulthandler then prints
        # every thread's stack, which the failure shows
        full_env = {**os.environ, "PYTHONFAULTHANDLER": "1", **(env or {})}
        self.proc = subprocess.Popen(
            [str(PLUGIN_SCRIPT), *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=full_env,
        )
        self._lines: list[str] = []
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._cond:
                self._lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    @property
    def stderr(self) -> str:
        with self._cond:
            return "\n".join(self._lines)

    def wait_for_line(self, text: str, timeout: float = 10) -> str:
        """The first stderr line containing ``text``; fails on timeout or exit."""
        with self._cond:
            ok = self._cond.wait_for(
                lambda: any(text in line for line in self._lines) or not self._reader.is_alive(),
                timeout,
            )
            match = [line for line in self._lines if text in line]
        assert ok and match, f"no stderr line with {text!r}; stderr:\n{self.stderr}"
        return match[0]

    def send(self, sig: signal.Signals) -> None:
        self.proc.send_signal(sig)

    def finish(self, sig: signal.Signals | None = signal.SIGTERM, timeout: float = 10) -> int:
        """Send ``sig`` (if still running) and return the exit code."""
        if sig is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGABRT)
            self.proc.wait(timeout=10)
            self._reader.join(timeout=5)
            raise AssertionError(
                f"the plugin did not exit within {timeout} s of {sig and sig.name}; its threads:\n"
                + self.stderr[-8000:]
            ) from None
        self._reader.join(timeout=5)
        if self.proc.stderr is not None:
            self.proc.stderr.close()
        return code


@pytest.fixture
def run_plugin() -> Iterator[Callable[..., PluginProcess]]:
    procs: list[PluginProcess] = []

    def run(*args: str, env: Mapping[str, str] | None = None) -> PluginProcess:
        proc = PluginProcess(list(args), env)
        procs.append(proc)
        return proc

    yield run
    for proc in procs:
        if proc.proc.poll() is None:
            proc.proc.kill()
        proc.finish(sig=None)
