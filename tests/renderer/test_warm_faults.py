"""The warm renderer under load and failure, after it is warm: eight parallel Applications,
a renderer killed or stopped in the middle of its life, an input edited behind the cache's
back. Every call must print what ``gpustack template`` prints for the same profile, or fail;
none may print an older render."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpustack.cli import main
from tests.renderer.procs import (
    GENERATE,
    REPO,
    env_for,
    fresh_base,
    generate,
    renderers,
    wait_for,
)

#: Eight Applications, as an ApplicationSet refresh asks for them at once.
EIGHT = sorted(p.stem for p in (REPO / "profiles").glob("*.yaml"))[:8]


@pytest.fixture
def base() -> Iterator[Path]:
    yield from fresh_base()


def template(profile: Path) -> bytes:
    """``gpustack template PROFILE``: what each plugin call must print, byte for byte."""
    done = CliRunner().invoke(main, ["template", str(profile)])
    assert done.exit_code == 0, done.output
    return done.stdout_bytes


def _socket(base: Path) -> Path:
    (found,) = (base / f"gpustack-renderer-{os.geteuid()}").glob("*.sock")
    return found


def test_eight_parallel_calls_to_a_warm_renderer_print_what_template_prints(base: Path) -> None:
    want = {n: template(REPO / "profiles" / f"{n}.yaml") for n in EIGHT}
    assert generate(REPO / "profiles", env_for(base, "lab-1gpu.yaml")).returncode == 0
    (renderer,) = renderers(base)

    def call(name: str) -> tuple[int, bytes, bytes]:
        done = generate(REPO / "profiles", env_for(base, f"{name}.yaml"))
        return done.returncode, done.stdout, done.stderr

    for _ in ("rendered", "cached"):
        with ThreadPoolExecutor(len(EIGHT)) as pool:
            got = dict(zip(EIGHT, pool.map(call, EIGHT), strict=True))
        assert got == {n: (0, want[n], b"") for n in EIGHT}
    assert renderers(base) == [renderer]  # all sixteen were the warm renderer's


def test_a_renderer_killed_between_calls_is_replaced_by_the_next_call(base: Path) -> None:
    env = env_for(base, "h100-prod-east.yaml")
    first = generate(REPO / "profiles", env)
    (killed,) = renderers(base)
    os.kill(killed, signal.SIGKILL)
    wait_for(lambda: not renderers(base))
    assert _socket(base).exists()  # its socket is left behind, with nothing listening
    done = generate(REPO / "profiles", env)
    assert (done.returncode, done.stdout, done.stderr) == (0, first.stdout, b"")
    assert done.stdout == template(REPO / "profiles" / "h100-prod-east.yaml")
    (replacement,) = renderers(base)
    assert replacement != killed


def test_a_renderer_stopped_while_a_call_waits_is_killed_and_the_call_answered(
    base: Path,
) -> None:
    """Stopped after it opened its socket: the call waits for the acknowledgement or for the
    answer, gives up after ACK_S or TIMEOUT_S, kills the stopped renderer and asks a new one."""
    env = env_for(
        base, "lab-1gpu.yaml", GPUSTACK_RENDERER_ACK_S="1", GPUSTACK_RENDERER_TIMEOUT_S="3"
    )
    folder = base / f"gpustack-renderer-{os.geteuid()}"
    call = subprocess.Popen(
        GENERATE, cwd=REPO / "profiles", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    wait_for(lambda: folder.is_dir() and any(folder.glob("*.sock")))
    (stopped,) = renderers(base)
    os.kill(stopped, signal.SIGSTOP)
    out, err = call.communicate(timeout=120)
    assert (call.returncode, out, err) == (0, template(REPO / "profiles" / "lab-1gpu.yaml"), b"")
    wait_for(lambda: stopped not in renderers(base), seconds=10)  # killed, not left stopped
    (replacement,) = renderers(base)
    assert replacement != stopped


def test_an_edit_of_the_same_size_and_mtime_is_rendered_not_served_from_the_cache(
    base: Path, tmp_path: Path
) -> None:
    """The cache is keyed on the files' bytes: an edit that keeps a base's size and
    modification time (a checkout, a copy with ``-p``) still renders anew."""
    profiles = tmp_path / "profiles"
    shutil.copytree(REPO / "profiles", profiles)
    env = env_for(base, "h100-prod-east.yaml")
    old = generate(profiles, env).stdout
    assert generate(profiles, env).stdout == old  # now cached
    fleet = profiles / "_bases" / "h100-fleet.yaml"
    before = fleet.stat()
    text = fleet.read_text()
    assert "system-node-critical" in text
    fleet.write_text(text.replace("system-node-critical", "system-node-criticax"))
    os.utime(fleet, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert fleet.stat().st_size == before.st_size
    done = generate(profiles, env)
    assert done.stdout == template(profiles / "h100-prod-east.yaml") != old
    assert b"system-node-criticax" in done.stdout


def test_a_renderer_whose_gpustack_changed_on_disk_hands_the_call_to_a_new_one(
    base: Path, tmp_path: Path
) -> None:
    """An edited checkout (or an upgrade in place): the old renderer answers "retry" and
    leaves, and the call is answered by a renderer started from the files as they are now."""
    site = tmp_path / "site"
    shutil.copytree(
        REPO / "gpustack", site / "gpustack", ignore=shutil.ignore_patterns("__pycache__")
    )
    env = {**env_for(base, "lab-1gpu.yaml"), "PYTHONPATH": str(site)}
    assert generate(REPO / "profiles", env).stdout == template(REPO / "profiles" / "lab-1gpu.yaml")
    (old,) = renderers(base)
    stream = site / "gpustack" / "synth" / "stream.py"
    stream.write_text(stream.read_text() + "\n# edited\n")
    time.sleep(0.3)  # past the renderer's STAMP_S
    done = generate(REPO / "profiles", env)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == template(REPO / "profiles" / "lab-1gpu.yaml")
    wait_for(lambda: old not in renderers(base), seconds=10)
    (new,) = renderers(base)
    assert new != old


def test_a_renderer_past_its_memory_bound_leaves_after_answering(base: Path) -> None:
    """Bounded in memory: past ``GPUSTACK_RENDERER_RSS_MIB`` (here 1 MiB, so after its first
    render) a renderer answers the call, then leaves; the next call gets a new one."""
    env = env_for(base, "lab-1gpu.yaml", GPUSTACK_RENDERER_RSS_MIB="1")
    want = template(REPO / "profiles" / "lab-1gpu.yaml")
    done = generate(REPO / "profiles", env)
    assert (done.returncode, done.stdout, done.stderr) == (0, want, b"")
    wait_for(lambda: not renderers(base), seconds=30)
    assert list((base / f"gpustack-renderer-{os.geteuid()}").glob("*.sock")) == []
    again = generate(REPO / "profiles", env)
    assert (again.returncode, again.stdout, again.stderr) == (0, want, b"")
