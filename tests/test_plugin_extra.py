"""grpcio, protobuf and nvidia-ml-py are the ``plugin`` extra: the synthesizer never imports them.

Only the device plugin and the DRA driver (gpustack/plugin/) need them, so ``pip install
gpustack-gitops`` leaves them out. The commands run here in a subprocess whose import system
refuses the extra's modules (a :data:`sys.meta_path` finder), so a stray import anywhere on the
path of ``synth``, ``validate``, ``lint`` or ``doctor`` fails the test, whether or not this
environment has the modules installed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from gpustack.plugin.entry import DISTRIBUTION, EXTRA, EXTRA_MODULES

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s\\]+)", re.MULTILINE)

#: Run before the command: the extra's modules (and their submodules) cannot be imported.
BLOCK = f"""
import sys
BLOCKED = {sorted(EXTRA_MODULES)!r}

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if any(name == m or name.startswith(m + ".") for m in BLOCKED):
            raise ModuleNotFoundError(f"blocked by the test: {{name}}", name=name)
        return None

sys.meta_path.insert(0, Blocker())
for loaded in [m for m in sys.modules if any(m == b or m.startswith(b + ".") for b in BLOCKED)]:
    del sys.modules[loaded]
"""


def _run(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK + code], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def _cli(*args: str) -> str:
    return f"sys.argv = ['gpustack', *{list(args)!r}]\nfrom gpustack.cli import main\nmain()\n"


def _names(requirements: list[str]) -> list[str]:
    return sorted(canonicalize_name(Requirement(r).name) for r in requirements)


def test_the_extra_is_the_plugins_modules_and_the_base_install_has_none() -> None:
    assert PROJECT["name"] == DISTRIBUTION
    extras = PROJECT["optional-dependencies"]
    assert _names(extras[EXTRA]) == sorted(canonicalize_name(d) for d in EXTRA_MODULES.values())
    assert not set(_names(PROJECT["dependencies"])) & set(_names(extras[EXTRA]))
    assert f"{DISTRIBUTION}[{EXTRA}]" in extras["dev"]


def _pins(folder: str) -> dict[str, str]:
    text = (REPO / folder / "requirements.txt").read_text()
    return {canonicalize_name(n): v for n, v in PIN.findall(text)}


def test_the_plugin_image_pins_the_extra_and_the_argo_sidecar_does_not() -> None:
    """The plugin image installs the extra's distributions (pinned, with hashes) and gpustack
    with ``--no-deps``; the Argo CD plugin sidecar only synthesizes."""
    plugin, sidecar = _pins("plugin-image"), _pins("cmp-image")
    for text in PROJECT["optional-dependencies"][EXTRA]:
        req = Requirement(text)
        name = canonicalize_name(req.name)
        assert name in plugin, f"plugin-image/requirements.txt does not pin {req.name}"
        assert req.specifier.contains(Version(plugin[name]), prereleases=True), text
        assert name not in sidecar, f"cmp-image/requirements.txt pins {req.name}"


def test_the_blocker_blocks(tmp_path: Path) -> None:
    """The plugin's manager needs the extra: the blocker refuses whichever of its modules the
    import reaches first (which one depends on the manager's own import order)."""
    done = _run("import gpustack.plugin.manager\n", tmp_path)
    assert done.returncode == 1
    blocked = re.search(r"blocked by the test: (\S+)", done.stderr)
    assert blocked, done.stderr
    name = blocked[1]
    assert any(name == m or name.startswith(f"{m}.") for m in EXTRA_MODULES), name


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("work")
    (work / "profiles").mkdir()
    shutil.copy2(REPO / "profiles" / "lab-1gpu.yaml", work / "profiles" / "lab-1gpu.yaml")
    shutil.copy2(REPO / "tests" / "doctor" / "profile.yaml", work / "doctor-profile.yaml")
    shutil.copy2(REPO / "tests" / "doctor" / "fixtures" / "pod-pending.json", work / "state.json")
    job = REPO / "dist" / "clusters" / "lab-1gpu" / "examples"
    shutil.copytree(job, work / "jobs")
    return work


#: Each command with arguments that make it do its whole job, and the exit codes that mean it did.
COMMANDS = [
    (("validate",), {0}),
    (("synth",), {0}),
    (("template", "profiles/lab-1gpu.yaml"), {0}),
    (("lint", "--profile", "profiles/lab-1gpu.yaml", "jobs"), {0, 1}),
    (("doctor", "--profile", "doctor-profile.yaml", "--state", "state.json"), {0, 1}),
]


@pytest.mark.parametrize(("args", "codes"), COMMANDS, ids=[a[0] for a, _ in COMMANDS])
def test_a_command_runs_without_the_extra(
    workdir: Path, args: tuple[str, ...], codes: set[int]
) -> None:
    done = _run(_cli(*args), workdir)
    assert "blocked by the test" not in done.stderr, done.stderr
    assert done.returncode in codes, done.stdout + done.stderr
    assert done.stdout.strip(), done.stderr


@pytest.mark.parametrize("script", ["device_plugin", "dra_plugin"])
def test_a_plugin_without_the_extra_says_what_to_install(tmp_path: Path, script: str) -> None:
    done = _run(f"from gpustack.plugin.entry import {script}\nsys.exit({script}())\n", tmp_path)
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "error: grpcio, protobuf, nvidia-ml-py not installed" in lines[0]
    assert lines[0].endswith(f"pip install '{DISTRIBUTION}[{EXTRA}]'")


def test_a_plugin_with_the_extra_starts(tmp_path: Path) -> None:
    """This environment has the extra (``dev`` includes it): the entry point hands over to the
    plugin's own command line."""
    code = "import sys\nfrom gpustack.plugin.entry import device_plugin\n"
    done = subprocess.run(
        [sys.executable, "-c", code + "sys.argv = ['x', '--help']\nsys.exit(device_plugin())\n"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "usage: gpustack-device-plugin" in done.stdout
