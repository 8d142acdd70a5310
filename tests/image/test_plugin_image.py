"""The device plugin image, built for real with buildah and run under podman.

Slow on purpose (marker ``image``): it builds the image the way ``make image`` does, with the
Debian base from mmdebstrap (made once, then cached in .cache/plugin-image/), checks what the
image promises (NVIDIA runtime env, OCI labels, entrypoint, nothing to build or install with),
then runs it against a test kubelet on the host through a bind-mounted socket directory, the
way a DaemonSet pod talks to the node's kubelet.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

import gpustack
from gpustack.plugin.config import (
    GpustackExtensions,
    PluginConfig,
    SimulatedBackend,
    SimulatedGpu,
)
from tests.image.containers import PODMAN_RUN, Tools, built_image, run

pytestmark = pytest.mark.image

REPO = Path(__file__).resolve().parents[2]
ENTRYPOINT = ["/opt/gpustack/bin/gpustack-device-plugin"]
VENV_PYTHON = "/opt/gpustack/bin/python"
KUBELET_DIR = "/var/lib/kubelet/device-plugins"
NVIDIA_ENV = {
    "NVIDIA_VISIBLE_DEVICES": "all",
    "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
    "NVIDIA_DISABLE_REQUIRE": "true",
}
_PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
#: Label -> exact value, or None for "present and not empty".
OCI_LABELS: dict[str, str | None] = {
    "org.opencontainers.image.title": "gpustack-device-plugin",
    "org.opencontainers.image.description": None,
    "org.opencontainers.image.source": None,
    "org.opencontainers.image.licenses": _PROJECT["license"],
    "org.opencontainers.image.version": gpustack.__version__,
}
#: Nothing in the final image may build or install software, and the synthesizer's
#: dependencies stay out: the plugin imports none of them.
ABSENT_COMMANDS = ("pip", "pip3", "pip3.11", "gcc", "cc", "c++", "make", "ld", "gpustack")
ABSENT_MODULES = (
    "pip", "setuptools", "wheel",
    "cdk8s", "constructs", "jsii", "click", "jinja2", "jsonschema",
)  # fmt: skip
#: What the plugin needs; importing them proves the compiled wheels suit the image's Python.
PRESENT_MODULES = ("grpc", "google.protobuf", "yaml", "pynvml", "gpustack.plugin.main")

# Runs inside the image with the plugin's interpreter; prints one JSON report.
INVENTORY = r"""
import glob, importlib, importlib.util, json, shutil, sys
names = json.loads(sys.argv[1])
def importable(name):
    return importlib.util.find_spec(name) is not None
def load(name):
    try:
        importlib.import_module(name)
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None
print(json.dumps({
    "python": "%d.%d" % sys.version_info[:2],
    "commands": {c: shutil.which(c) for c in names["commands"]},
    "absent": {m: importable(m) for m in names["absent"]},
    "present": {m: load(m) for m in names["present"]},
    "bundled_wheels": glob.glob("/usr/share/python-wheels/*.whl")
    + glob.glob("/usr/**/ensurepip/_bundled/*.whl", recursive=True),
}))
"""


@pytest.fixture(scope="session")
def plugin_image(tools: Tools) -> Iterator[str]:
    """Tag of a freshly built plugin image."""
    yield from built_image(
        tools, REPO / "scripts" / "build-plugin-image.sh", "gpustack-device-plugin-test", 1200
    )


@pytest.fixture(scope="session")
def image_config(tools: Tools, plugin_image: str) -> dict[str, Any]:
    proc = run([tools.buildah, "inspect", "--type", "image", plugin_image])
    assert proc.returncode == 0, proc.stderr
    config: dict[str, Any] = json.loads(proc.stdout)["OCIv1"]["config"]
    return config


@pytest.fixture(scope="session")
def inventory(tools: Tools, plugin_image: str) -> dict[str, Any]:
    names = {"commands": ABSENT_COMMANDS, "absent": ABSENT_MODULES, "present": PRESENT_MODULES}
    proc = run([
        tools.podman, *PODMAN_RUN, "--rm", "--entrypoint", VENV_PYTHON, plugin_image,
        "-c", INVENTORY, json.dumps(names),
    ])  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


@pytest.mark.parametrize(("name", "value"), NVIDIA_ENV.items())
def test_nvidia_runtime_env(image_config: dict[str, Any], name: str, value: str) -> None:
    env = dict(item.split("=", 1) for item in image_config.get("Env", []))
    assert env.get(name) == value


@pytest.mark.parametrize(("label", "expected"), OCI_LABELS.items())
def test_oci_label(image_config: dict[str, Any], label: str, expected: str | None) -> None:
    value = (image_config.get("Labels") or {}).get(label)
    if expected is None:
        assert value, f"{label} is missing or empty"
    else:
        assert value == expected


def test_entrypoint_is_the_plugin_and_runs_as_root(image_config: dict[str, Any]) -> None:
    assert image_config.get("Entrypoint") == ENTRYPOINT
    assert image_config.get("User", "").split(":")[0] in ("", "0", "root")


def test_python_matches_the_wheels(inventory: dict[str, Any]) -> None:
    assert inventory["python"] == "3.11"


@pytest.mark.parametrize("command", ABSENT_COMMANDS)
def test_no_build_or_install_command(inventory: dict[str, Any], command: str) -> None:
    assert inventory["commands"][command] is None


@pytest.mark.parametrize("module", ABSENT_MODULES)
def test_no_installer_or_synth_module(inventory: dict[str, Any], module: str) -> None:
    assert inventory["absent"][module] is False


def test_no_bundled_wheels_to_bootstrap_pip(inventory: dict[str, Any]) -> None:
    assert inventory["bundled_wheels"] == []


@pytest.mark.parametrize("module", PRESENT_MODULES)
def test_runtime_module_imports(inventory: dict[str, Any], module: str) -> None:
    assert inventory["present"][module] is None


def _simulated_config(gpus: int) -> PluginConfig:
    return PluginConfig(
        gpustack=GpustackExtensions(
            backend="simulated",
            simulated=SimulatedBackend(gpus=tuple(SimulatedGpu(index=i) for i in range(gpus))),
        )
    )


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A short directory: unix socket paths must stay under 108 bytes."""
    path = Path(tempfile.mkdtemp(prefix="gpx-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@dataclass(frozen=True)
class RegisterCase:
    id: str
    gpus: int
    allocate: int
    #: deviceListStrategy; with cdi-cri the plugin also writes its CDI spec, through a mounted
    #: /var/run/cdi, while its root filesystem stays read-only.
    strategy: str = "envvar"


REGISTER_CASES = (
    RegisterCase("one-of-one", 1, 1),
    RegisterCase("two-of-four", 4, 2),
    RegisterCase("cdi-two-of-three", 3, 2, strategy="cdi-cri"),
)
CDI_DIR = "/var/run/cdi"
CDI_SPEC = "k8s.device-plugin.nvidia.com-gpu.json"


def _visible_devices(container_response: Mapping[str, Any]) -> list[str]:
    """NVIDIA_VISIBLE_DEVICES of a container's Allocate response (envvar strategy)."""
    envs: Mapping[str, str] = container_response.get("envs", {})
    return envs.get("NVIDIA_VISIBLE_DEVICES", "").split(",")


@pytest.mark.parametrize("case", REGISTER_CASES, ids=lambda c: c.id)
def test_container_registers_and_allocates(
    tools: Tools, plugin_image: str, short_dir: Path, case: RegisterCase
) -> None:
    config = _simulated_config(case.gpus)
    sockets = short_dir / "dp"
    sockets.mkdir()
    cdi = short_dir / "cdi"
    cdi.mkdir()
    (short_dir / "config.yaml").write_text(yaml.safe_dump(config.to_dict()), encoding="utf-8")
    name = f"gpustack-dp-test-{uuid.uuid4().hex[:12]}"
    resource = config.gpustack.resource_name
    kubelet = subprocess.Popen(
        [sys.executable, "-m", "gpustack.plugin.testkubelet", "--socket-dir", str(sockets),
         "--resource", resource, "--allocate", str(case.allocate),
         "--timeout", "30"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        started = run([
            tools.podman, *PODMAN_RUN, "--detach", "--name", name,
            "--volume", f"{sockets}:{KUBELET_DIR}",
            "--volume", f"{short_dir / 'config.yaml'}:/etc/gpustack/config.yaml:ro",
            "--volume", f"{cdi}:{CDI_DIR}",
            plugin_image, "--backend", "simulated", "--config-file", "/etc/gpustack/config.yaml",
            "--device-list-strategy", case.strategy,
        ])  # fmt: skip
        assert started.returncode == 0, started.stderr
        out, err = kubelet.communicate(timeout=90)
        logs = run([tools.podman, "logs", name])
        context = f"test kubelet stderr:\n{err}\nplugin log:\n{logs.stdout}{logs.stderr}"
        assert kubelet.returncode == 0, context
        result = json.loads(out)

        registered = result["registered"]
        assert (registered["resource"], registered["version"]) == (resource, "v1beta1")
        advertised = sorted(device["id"] for device in result["devices"])
        assert advertised == sorted(gpu.uuid for gpu in config.gpustack.simulated.gpus)
        assert {device["health"] for device in result["devices"]} == {"Healthy"}
        if case.strategy == "cdi-cri":
            # every CDI device Allocate names is defined in the spec the container wrote
            names = [d["name"] for d in result["allocate_response"]["cdi_devices"]]
            spec = json.loads((cdi / CDI_SPEC).read_text(encoding="utf-8"))
            ids = [n.partition("=")[2] for n in names]
            assert len(names) == case.allocate, result
            assert {n.partition("=")[0] for n in names} == {spec["kind"]}
            assert set(ids) <= {d["name"] for d in spec["devices"]} and set(ids) <= set(advertised)
        else:
            visible = _visible_devices(result["allocate_response"])
            assert len(visible) == case.allocate and set(visible) <= set(advertised), result
            assert not any(cdi.iterdir()), "no CDI spec without a CDI strategy"

        # Kubernetes stops a pod with SIGTERM: the plugin (PID 1 here) must exit cleanly on it
        # rather than sit out the grace period and be killed (exit 137).
        stopped = run([tools.podman, "stop", "--time", "20", name])
        assert stopped.returncode == 0, stopped.stderr
        code = run([tools.podman, "inspect", "--format", "{{.State.ExitCode}}", name])
        assert code.stdout.strip() == "0", context
    finally:
        if kubelet.poll() is None:
            kubelet.kill()
            kubelet.communicate()
        run([tools.podman, "rm", "--force", name])
