"""Running the plugin's ``generate`` as Argo CD does, in real processes, and finding the
renderers it started (by their socket folder, which each test makes its own)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from gpustack.gitops import argocd_plugin

REPO = Path(__file__).resolve().parents[2]
#: plugin.yaml's ``generate`` command, with this interpreter for its ``python3``.
GENERATE = [sys.executable, *argocd_plugin.GENERATE[1:]]


def short_dir() -> Path:
    """A folder with a short path (a unix socket path has 107 bytes at most)."""
    return Path(tempfile.mkdtemp(prefix="gsr-", dir="/tmp"))


def env_for(base: Path, profile: str, **knobs: str) -> dict[str, str]:
    """The environment of one Application's ``generate``, its renderer's folder under ``base``."""
    params = f'[{{"name":"profile","string":"{profile}"}}]'
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOCD_", "GPUSTACK_"))}
    env.update(
        PYTHONPATH=str(REPO),
        GPUSTACK_RENDERER_DIR=str(base),
        ARGOCD_APP_PARAMETERS=params,
        ARGOCD_APP_SOURCE_PATH="profiles",
        ARGOCD_APP_NAME=f"gpustack-{profile}",
        **knobs,
    )
    return env


def generate(
    cwd: Path, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    """One ``generate`` call as Argo CD's cmp-server makes it: a fresh process in ``cwd``."""
    return subprocess.run(GENERATE, cwd=cwd, env=env, capture_output=True, timeout=timeout)


def renderers(base: Path) -> list[int]:
    """The pids of live (or stopped) renderers whose socket is under ``base``. A child the
    renderer has forked but not yet turned into Node shows the renderer's command line for a
    moment: a match whose parent matches too is that child, not a second renderer."""
    found: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state, ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
        except OSError:
            continue
        if (
            state != "Z"
            and b"gpustack.renderer" in argv
            and any(a.startswith(str(base).encode()) for a in argv)
        ):
            found[int(entry.name)] = int(ppid)
    return sorted(pid for pid, parent in found.items() if parent not in found)


def wait_for(check: Callable[[], object], seconds: float = 60) -> None:
    """Poll ``check`` until it is true; fail the test after ``seconds`` (a hang is a failure)."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def kill_all(base: Path) -> None:
    """End the renderers a test started (they run in their own session, so pytest would not)."""
    for pid in renderers(base):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def fresh_base() -> Iterator[Path]:
    """A private socket base for a fixture, its renderers killed when the fixture ends."""
    base = short_dir()
    try:
        yield base
    finally:
        kill_all(base)
        shutil.rmtree(base, ignore_errors=True)
