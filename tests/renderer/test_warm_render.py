"""The plugin's ``generate`` through the warm renderer, in real processes on real unix sockets:
the same bytes and errors as ``gpustack template --argocd``, one renderer for parallel first
calls, and a correct answer after the renderer is killed, stopped or its inputs change."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpustack.cli import main
from tests.gitops.test_argocd_plugin import GENERATE_ERRORS, argo_env, committed
from tests.gitops.test_argocd_plugin import _bad_profile as bad_profile
from tests.renderer.procs import (
    GENERATE,
    REPO,
    env_for,
    fresh_base,
    generate,
    renderers,
    wait_for,
)

PROFILES = sorted(p.stem for p in (REPO / "profiles").glob("*.yaml"))


@pytest.fixture
def base() -> Iterator[Path]:
    yield from fresh_base()


@pytest.fixture(scope="module")
def shared() -> Iterator[Path]:
    """One renderer folder for the module's read-only calls (one warm renderer for them all)."""
    yield from fresh_base()


@pytest.mark.parametrize("name", PROFILES)
def test_every_example_is_byte_identical_to_template_rendered_and_cached(
    shared: Path, name: str
) -> None:
    env = env_for(shared, f"{name}.yaml")
    for _ in ("rendered", "cached"):
        done = generate(REPO / "profiles", env)
        assert (done.returncode, done.stderr) == (0, b"")
        assert done.stdout == committed(name)
    assert len(renderers(shared)) == 1


@pytest.mark.parametrize(
    "parameters", [c[1] for c in GENERATE_ERRORS], ids=[c[0] for c in GENERATE_ERRORS]
)
def test_an_error_is_the_line_and_status_of_template(
    shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parameters: tuple[object, ...]
) -> None:
    bad_profile(tmp_path)
    env = {**env_for(shared, ""), **argo_env(*parameters, source_path="clusters/gpu")}  # type: ignore[arg-type]
    done = generate(tmp_path, env)
    monkeypatch.chdir(tmp_path)
    here = CliRunner().invoke(main, ["template", "--argocd"], env=dict.fromkeys(os.environ) | env)
    assert (done.returncode, done.stdout) == (here.exit_code, b"") == (1, b"")
    assert done.stderr.decode() == here.stderr


def test_eight_parallel_first_calls_start_one_renderer(base: Path) -> None:
    names = PROFILES[:8]
    calls = [
        subprocess.Popen(
            GENERATE,
            cwd=REPO / "profiles",
            env=env_for(base, f"{n}.yaml"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for n in names
    ]
    outputs = [c.communicate(timeout=180) for c in calls]
    assert [c.returncode for c in calls] == [0] * 8
    assert [o[1] for o in outputs] == [b""] * 8  # none fell back to rendering itself
    assert [o[0] for o in outputs] == [committed(n) for n in names]
    assert len(renderers(base)) == 1


def test_a_renderer_killed_mid_call_is_replaced_and_the_call_answered(base: Path) -> None:
    env = env_for(base, "lab-1gpu.yaml")
    call = subprocess.Popen(GENERATE, cwd=REPO / "profiles", env=env, stdout=subprocess.PIPE)
    wait_for(lambda: renderers(base))  # started by the call, which now waits on it
    (first,) = renderers(base)
    os.kill(first, signal.SIGKILL)
    out, _ = call.communicate(timeout=180)
    assert (call.returncode, out) == (0, committed("lab-1gpu"))
    (second,) = renderers(base)
    assert second != first
    done = generate(REPO / "profiles", env)  # and the new one serves the next call
    assert (done.returncode, done.stdout, renderers(base)) == (0, out, [second])


def test_a_stopped_renderer_is_killed_after_the_ack_timeout_and_replaced(base: Path) -> None:
    env = env_for(base, "lab-1gpu.yaml", GPUSTACK_RENDERER_ACK_S="1")
    assert generate(REPO / "profiles", env).returncode == 0
    (stopped,) = renderers(base)
    os.kill(stopped, signal.SIGSTOP)
    done = generate(REPO / "profiles", env)
    assert (done.returncode, done.stdout, done.stderr) == (0, committed("lab-1gpu"), b"")
    (replacement,) = renderers(base)
    assert replacement != stopped


def test_unchanged_inputs_are_answered_from_the_cache_not_rendered(base: Path) -> None:
    # a renderer that leaves after two renders: four calls to one renderer made one render
    env = env_for(base, "lab-1gpu.yaml", GPUSTACK_RENDERER_MAX_RENDERS="2")
    pids = []
    for _ in range(4):
        assert generate(REPO / "profiles", env).stdout == committed("lab-1gpu")
        pids.append(renderers(base))
    assert len(set(map(tuple, pids))) == 1


def test_a_changed_base_is_rendered_again_not_served_from_the_cache(
    base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profiles = tmp_path / "profiles"
    shutil.copytree(REPO / "profiles", profiles)
    env = env_for(base, "h100-prod-east.yaml")
    assert generate(profiles, env).stdout == committed("h100-prod-east")
    fleet = profiles / "_bases" / "h100-fleet.yaml"
    fleet.write_text(fleet.read_text().replace("system-node-critical", "system-cluster-critical"))
    done = generate(profiles, env)
    monkeypatch.chdir(profiles)
    here = CliRunner().invoke(main, ["template", "--argocd"], env=env)
    assert done.stdout == here.stdout_bytes != committed("h100-prod-east")
    assert generate(profiles, env).stdout == here.stdout_bytes  # the new render, now cached


def _group_writable(folder: Path) -> None:
    folder.chmod(0o770)


def _link(folder: Path) -> None:
    elsewhere = folder.with_name("elsewhere")
    folder.rename(elsewhere)
    folder.symlink_to(elsewhere)


def _foreign(folder: Path) -> None:
    os.chown(folder, 4321, 4321)


@pytest.mark.parametrize(
    ("spoil", "says"),
    [
        (_group_writable, "has mode 770; only 700 is trusted"),
        (_link, "is not a folder (a link or a file is never followed)"),
        pytest.param(
            _foreign,
            "belongs to uid 4321",
            marks=pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root"),
        ),
    ],
)
def test_an_untrusted_socket_folder_is_not_used_and_the_call_renders_itself(
    base: Path, spoil: object, says: str
) -> None:
    folder = base / f"gpustack-renderer-{os.geteuid()}"
    folder.mkdir(mode=0o700)
    spoil(folder)  # type: ignore[operator]
    done = generate(REPO / "profiles", env_for(base, "lab-1gpu.yaml"))
    assert (done.returncode, done.stdout) == (0, committed("lab-1gpu"))
    assert says in done.stderr.decode()
    assert renderers(base) == []


def test_switched_off_every_call_renders_itself(base: Path) -> None:
    done = generate(REPO / "profiles", env_for(base, "lab-1gpu.yaml", GPUSTACK_RENDERER="off"))
    assert (done.returncode, done.stdout, done.stderr) == (0, committed("lab-1gpu"), b"")
    assert renderers(base) == []


def test_a_malformed_setting_is_one_line_and_exit_1(base: Path) -> None:
    env = env_for(base, "lab-1gpu.yaml", GPUSTACK_RENDERER_IDLE_S="soon")
    done = generate(REPO / "profiles", env)
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode().splitlines() == [
        "Error: GPUSTACK_RENDERER_IDLE_S='soon' is not a positive number "
        "(seconds without a call after which a renderer exits)"
    ]


def test_an_idle_renderer_exits_and_removes_its_socket(base: Path) -> None:
    env = env_for(base, "lab-1gpu.yaml", GPUSTACK_RENDERER_IDLE_S="0.5")
    assert generate(REPO / "profiles", env).returncode == 0
    wait_for(lambda: not renderers(base), seconds=30)
    assert list((base / f"gpustack-renderer-{os.geteuid()}").glob("*.sock")) == []
