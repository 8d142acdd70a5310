"""Where jsii writes its files, and its failures to write them (issue #33, Deliver 4).

jsii cached about 400 files in ``~/.cache/aws/jsii`` for every ``synth`` that rendered, and a
file-size limit, a read-only ``HOME`` or a full temporary folder failed inside it with a
traceback (or Node waited forever). :mod:`gpustack.synth.jsii_files` decides instead.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpustack.synth import jsii_files
from gpustack.synth.errors import SynthError
from gpustack.synth.jsii_files import CACHE_ROOT_VAR, cache_folder, place_jsii_files

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@pytest.fixture
def tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary folder Python (and so jsii) uses, for this test."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    return tmp_path


def test_the_cache_is_a_private_folder_in_the_temporary_folder(tmp: Path) -> None:
    env: dict[str, str] = {"HOME": "/nonexistent"}
    place_jsii_files(env)
    cache = Path(env[CACHE_ROOT_VAR])
    assert cache == cache_folder(str(tmp)) and cache.is_relative_to(tmp)
    assert "TMPDIR" not in env
    for folder in (cache, cache.parent):
        assert folder.is_dir() and folder.stat().st_mode & 0o077 == 0


def test_node_gets_the_temporary_folder_python_found_usable(tmp: Path) -> None:
    env = {"TMPDIR": "/proc"}  # Python passes over it; Node would fail in it
    place_jsii_files(env)
    assert env["TMPDIR"] == str(tmp)
    env = {"TMPDIR": str(tmp / "mine")}
    (tmp / "mine").mkdir()
    place_jsii_files(env)
    assert env["TMPDIR"] == str(tmp / "mine")


def test_a_cache_the_user_chose_is_kept(tmp: Path) -> None:
    env = {CACHE_ROOT_VAR: "/somewhere"}
    place_jsii_files(env)
    assert env[CACHE_ROOT_VAR] == "/somewhere"
    assert not cache_folder(str(tmp)).exists()


@pytest.mark.parametrize("how", ["link", "others-write"])
def test_a_cache_folder_others_could_write_is_refused(tmp: Path, how: str) -> None:
    """jsii checks only its own default folder for that: Node would run what others put in."""
    folder = cache_folder(str(tmp)).parent
    if how == "link":
        (tmp / "elsewhere").mkdir(mode=0o700)
        folder.symlink_to(tmp / "elsewhere")
    else:
        folder.mkdir()
        folder.chmod(0o777)
    with pytest.raises(SynthError, match="not a folder private to this user"):
        place_jsii_files({})


def test_a_full_temporary_folder_is_one_line(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.statvfs(tmp)

    class Full:
        f_bavail = 10
        f_frsize = real.f_frsize

    monkeypatch.setattr(jsii_files.os, "statvfs", lambda _: Full())
    with pytest.raises(SynthError, match=r"MiB free, and cdk8s' runtime \(jsii\) writes up to"):
        place_jsii_files({})


def _small_files() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY))


def _synth(tmp_path: Path, **kw: Any) -> subprocess.CompletedProcess[str]:
    repo = tmp_path / "repo"
    (repo / "profiles").mkdir(parents=True)
    shutil.copy(REPO / "tests" / "doctor" / "profile.yaml", repo / "profiles" / "gpu.yaml")
    home, temp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    temp.mkdir()
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(temp)}
    for var in (CACHE_ROOT_VAR, jsii_files.CACHE_SWITCH_VAR):
        env.pop(var, None)
    return subprocess.run(
        [str(BIN / "gpustack"), "synth", "-q"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        **kw,
    )


def test_a_file_size_limit_is_one_line_before_node_starts(tmp_path: Path) -> None:
    done = _synth(tmp_path, preexec_fn=_small_files)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        "Error: the file size limit (1048576 bytes, `ulimit -f`) is below the 16 MiB of the "
        "largest file cdk8s' runtime (jsii) writes; raise it (`ulimit -f unlimited`)"
    ], done.stderr


def test_synth_writes_nothing_in_the_home(tmp_path: Path) -> None:
    """A rendering synth: jsii's packages are cached in gpustack's folder, the home is left as
    it was (it held ~/.cache/aws/jsii, about 400 files)."""
    done = _synth(tmp_path)
    assert done.returncode == 0, done.stderr
    assert list((tmp_path / "home").iterdir()) == []
    cached = cache_folder(str(tmp_path / "tmp"))
    assert sum(1 for _ in cached.rglob("*")) > 100
