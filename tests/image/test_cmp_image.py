"""The Argo CD plugin sidecar image, built for real with buildah and run the way Argo CD runs it.

Slow on purpose (marker ``image``): it builds the image as ``make cmp-image`` does (the cached
Debian base of the plugin image), checks what the image promises (Argo CD's uid, plugin.yaml
where the cmp-server reads it, no installer, no Node on PATH), then runs it under podman as Argo
CD runs a sidecar: uid 999, read-only root filesystem, only /tmp writable, no network. Inside,
a small driver plays Argo CD's cmp-server (which is not available offline): per Application it
unpacks a copy of the repository into ``/tmp/_cmp_server/<id>/`` as uid 999, sets the
variables Argo CD sets, and runs the ``discover`` and ``generate`` commands that the image's
plugin.yaml names, in the Application's source path. One container run covers every example
profile (each render starts Python and Node: ~1-2 s) and the failures.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import gpustack
from gpustack.gitops import argocd_plugin
from tests.gitops.test_argocd_plugin import argo_env
from tests.image.containers import PODMAN_RUN, Tools, built_image, run

pytestmark = pytest.mark.image

REPO = Path(__file__).resolve().parents[2]
PLUGIN_YAML = REPO / "cmp-image" / "plugin.yaml"
PROFILES = sorted((REPO / "profiles").glob("*.yaml"))
#: Nothing in the sidecar may install or build software, or fetch JavaScript packages; Node is
#: the wheel's, found by gpustack, never one on PATH.
ABSENT_COMMANDS = ("pip", "pip3", "pip3.11", "npm", "npx", "corepack", "node", "gcc", "cc", "make")
ABSENT_MODULES = ("pip", "setuptools", "wheel")

# Plays Argo CD's cmp-server for a list of Applications (argv[1], JSON); prints one JSON list.
# Like the cmp-server it reads the commands from the image's plugin.yaml (argv[2]), runs each
# with its own environment plus the Application's variables, in <work dir>/<source path>, and
# removes the work dir afterwards.
DRIVER = r"""
import json, os, shutil, subprocess, sys, uuid
import yaml
cases = json.loads(sys.argv[1])
with open(sys.argv[2]) as f:
    plugin = yaml.safe_load(f)
def argv(command):
    return list(command.get("command", [])) + list(command.get("args", []))
results = []
for case in cases:
    work = os.path.join("/tmp/_cmp_server", uuid.uuid4().hex[:8])
    shutil.copytree("/repo", work)
    app = os.path.join(work, case["env"].get("ARGOCD_APP_SOURCE_PATH", "."))
    env = {**os.environ, **case["env"]}
    found = subprocess.run(argv(plugin["spec"]["discover"]["find"]), cwd=app, env=env,
                           capture_output=True, text=True)
    out = {"id": case["id"], "discover": [found.returncode, found.stdout, found.stderr]}
    if case["generate"]:
        made = subprocess.run(argv(plugin["spec"]["generate"]), cwd=app, env=env,
                              capture_output=True, text=True)
        out["generate"] = [made.returncode, made.stdout, made.stderr]
    shutil.rmtree(work)
    results.append(out)
print(json.dumps({"uid": os.getuid(), "home": os.environ.get("HOME"), "results": results}))
"""

# Inventory, run with the image's python3.
INVENTORY = r"""
import importlib.util, json, os, shutil, sys
names = json.loads(sys.argv[1])
print(json.dumps({
    "commands": {c: shutil.which(c) for c in names["commands"]},
    "modules": {m: importlib.util.find_spec(m) is not None for m in names["modules"]},
    "plugin_yaml": open(names["plugin_yaml"]).read(),
    "home_writable": os.access(os.environ.get("HOME", "/"), os.W_OK),
}))
"""


@pytest.fixture(scope="session")
def cmp_image(tools: Tools) -> Iterator[str]:
    """Tag of a freshly built sidecar image."""
    yield from built_image(
        tools, REPO / "scripts" / "build-cmp-image.sh", "gpustack-argocd-cmp-test", 1800
    )


def _podman(tools: Tools, image: str, *args: str, volumes: tuple[str, ...] = ()) -> Any:
    """Run ``args`` in the sidecar as Argo CD does: uid 999, only /tmp writable."""
    mounts = [arg for v in volumes for arg in ("--volume", v)]
    proc = run(
        [tools.podman, *PODMAN_RUN, "--rm", "--user", "999", "--tmpfs", "/tmp", *mounts, image,
         *args],
        timeout=900,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-6000:]
    return json.loads(proc.stdout)


def test_image_config(tools: Tools, cmp_image: str) -> None:
    proc = run([tools.buildah, "inspect", "--type", "image", cmp_image])
    config = json.loads(proc.stdout)["OCIv1"]["config"]
    assert config["User"] == "999:999"
    labels = config["Labels"]
    assert labels["org.opencontainers.image.title"] == "gpustack-argocd-cmp"
    assert labels["org.opencontainers.image.version"] == gpustack.__version__
    assert labels["org.opencontainers.image.source"]


def test_image_holds_plugin_yaml_and_nothing_to_install_with(tools: Tools, cmp_image: str) -> None:
    names = {
        "commands": ABSENT_COMMANDS,
        "modules": ABSENT_MODULES,
        "plugin_yaml": argocd_plugin.CONFIG_PATH,
    }
    found = _podman(tools, cmp_image, "python3", "-c", INVENTORY, json.dumps(names))
    assert found["plugin_yaml"] == PLUGIN_YAML.read_text()
    assert {c: p for c, p in found["commands"].items() if p} == {}
    assert {m for m, present in found["modules"].items() if present} == set()
    assert found["home_writable"] is False  # renders must not need it


def _committed(profile: Path) -> str:
    name = yaml.safe_load(profile.read_text())["metadata"]["name"]
    folder = REPO / "dist" / "clusters" / name
    resources = yaml.safe_load((folder / "kustomization.yaml").read_text())["resources"]
    return "".join("---\n" + (folder / r).read_text() for r in resources)


def _application(case_id: str, *parameters: dict[str, object], generate: bool = True) -> Any:
    return {"id": case_id, "env": argo_env(*parameters), "generate": generate}


#: Applications that must fail: (id, parameters), each with one line on stderr.
FAILING = [
    ("no-parameter", ()),
    ("typo", ({"name": "profle", "string": "lab-1gpu.yaml"},)),
    ("missing-file", ({"name": "profile", "string": "gone.yaml"},)),
    ("invalid-profile", ({"name": "profile", "string": "broken.yaml"},)),
]


@pytest.fixture(scope="session")
def argo_run(tools: Tools, cmp_image: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One container run: every example profile's Application, the failing ones, and an
    Application without a plugin section (which discovery must leave alone)."""
    repo = tmp_path_factory.mktemp("argo-repo")
    shutil.copytree(REPO / "profiles", repo / "profiles")
    (repo / "profiles" / "broken.yaml").write_text(
        "apiVersion: gpustack.dev/v1alpha1\nkind: Profile\nmetadata: {name: Broken}\n"
    )
    os.chmod(repo, 0o755)
    cases = [_application(p.name, {"name": "profile", "string": p.name}) for p in PROFILES]
    cases += [_application(i, *params) for i, params in FAILING]
    plain = {"id": "plain-directory-app", "env": {"ARGOCD_APP_NAME": "x"}, "generate": False}
    plain["env"]["ARGOCD_APP_SOURCE_PATH"] = "profiles"
    cases.append(plain)
    found = _podman(
        tools, cmp_image, "python3", "-c", DRIVER, json.dumps(cases), argocd_plugin.CONFIG_PATH,
        volumes=(f"{repo}:/repo:ro",),
    )  # fmt: skip
    assert found["uid"] == 999
    return {r["id"]: r for r in found["results"]}


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.stem)
def test_argo_cd_renders_the_committed_cluster_folder(argo_run: Any, profile: Path) -> None:
    result = argo_run[profile.name]
    code, out, err = result["discover"]
    assert code == 0 and out.strip(), err
    code, out, err = result["generate"]
    assert (code, err) == (0, "")  # nothing on stderr: the warm renderer answered, no fallback
    assert out == _committed(profile)


@pytest.mark.parametrize("case_id", [c[0] for c in FAILING])
def test_a_bad_application_gets_one_line_and_a_failure(argo_run: Any, case_id: str) -> None:
    code, out, err = argo_run[case_id]["generate"]
    assert code != 0
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("Error: ")


def test_discovery_leaves_other_applications_alone(argo_run: Any) -> None:
    code, out, err = argo_run["plain-directory-app"]["discover"]
    assert (code, out) == (0, ""), err
