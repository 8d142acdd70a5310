"""The files that install the plugin: ``cmp-image/plugin.yaml`` as Argo CD's cmp-server reads
it, and ``cmp-image/repo-server-patch.yaml`` applied by kustomize to a repo-server Deployment
laid out as Argo CD's install manifests lay it out."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

import gpustack
from gpustack.gitops import argocd_plugin, argocd_sidecar
from tests.docs.blocks import page_text
from tests.k8s_schema import assert_valid
from tests.test_readme_gitops import FENCED_YAML
from tests.tooling import require_tool

REPO = Path(__file__).resolve().parents[2]
PLUGIN_YAML = REPO / argocd_sidecar.PLUGIN_FILE
PATCH = REPO / argocd_sidecar.PATCH_FILE


def _closed(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


STRINGS = {"type": "array", "items": {"type": "string"}}
COMMAND = _closed({"command": STRINGS, "args": STRINGS})
#: The ConfigManagementPlugin as Argo CD's cmpserver/plugin/config.go reads it (PluginConfig,
#: PluginConfigSpec, Command, Discover, Find, Parameters, and the repo-server's
#: ParameterAnnouncement), closed: Go's decoder drops an unknown or misspelt field silently,
#: which this schema reports instead. ValidatePluginConfig's rules: a name, this kind, a
#: non-empty generate command.
PLUGIN_SCHEMA = _closed(
    {
        "apiVersion": {"const": "argoproj.io/v1alpha1"},
        "kind": {"const": "ConfigManagementPlugin"},
        "metadata": _closed({"name": {"type": "string", "minLength": 1}}, ("name",)),
        "spec": _closed(
            {
                "version": {"type": "string"},
                "init": COMMAND,
                "generate": _closed(
                    {"command": {**STRINGS, "minItems": 1}, "args": STRINGS}, ("command",)
                ),
                "discover": _closed(
                    {
                        "fileName": {"type": "string"},
                        "find": _closed(
                            {"command": STRINGS, "args": STRINGS, "glob": {"type": "string"}}
                        ),
                    }
                ),
                "parameters": _closed(
                    {
                        "static": {
                            "type": "array",
                            "items": _closed(
                                {
                                    "name": {"type": "string"},
                                    "title": {"type": "string"},
                                    "tooltip": {"type": "string"},
                                    "required": {"type": "boolean"},
                                    "itemType": {"type": "string"},
                                    "collectionType": {"enum": ["", "string", "array", "map"]},
                                    "string": {"type": "string"},
                                    "array": STRINGS,
                                    "map": {
                                        "type": "object",
                                        "additionalProperties": {"type": "string"},
                                    },
                                },
                                ("name",),
                            ),
                        },
                        "dynamic": COMMAND,
                    }
                ),
                "preserveFileMode": {"type": "boolean"},
                "provideGitCreds": {"type": "boolean"},
            },
            ("generate",),
        ),
    },
    ("apiVersion", "kind", "metadata", "spec"),
)


def plugin_config() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(PLUGIN_YAML.read_text())
    return doc


def test_plugin_yaml_is_what_argo_cd_reads() -> None:
    errors = list(jsonschema.Draft7Validator(PLUGIN_SCHEMA).iter_errors(plugin_config()))
    assert not errors, "\n".join(f"{e.json_path}: {e.message}" for e in errors)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda c: c["spec"].update(generat=c["spec"].pop("generate")),
        lambda c: c["spec"]["generate"].update(command=[]),
        lambda c: c["spec"]["discover"].update(finds=c["spec"]["discover"].pop("find")),
        lambda c: c["spec"]["parameters"]["static"][0].update(requried=True),
    ],
    ids=["misspelt-generate", "empty-command", "misspelt-find", "misspelt-announcement"],
)
def test_plugin_schema_rejects_what_argo_cd_would_drop_or_refuse(mutate: Any) -> None:
    """Guards the guard: the schema must catch a misspelt field."""
    config = copy.deepcopy(plugin_config())
    mutate(config)
    assert not jsonschema.Draft7Validator(PLUGIN_SCHEMA).is_valid(config)


def test_plugin_yaml_names_gpustacks_commands_version_and_parameter() -> None:
    spec = plugin_config()["spec"]
    assert spec["version"] == gpustack.__version__
    assert spec["generate"] == {"command": list(argocd_plugin.GENERATE)}
    assert spec["generate"]["command"][-2:] == ["-m", "gpustack.render_client"]
    assert spec["discover"]["find"]["command"][-1] == "discover"
    assert [p["name"] for p in spec["parameters"]["static"]] == [argocd_plugin.PARAMETER]


def test_generated_files_are_current() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gpustack.gitops.argocd_sidecar", "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


#: A repo-server Deployment with what Argo CD's install manifests give it and the sidecar
#: relies on: the var-files volume the copyutil init container fills with the argocd binary
#: (linked as argocd-cmp-server), the plugins volume for the sockets, the repo-server's own /tmp.
REPO_SERVER: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "argocd-repo-server", "labels": {"app.kubernetes.io/name": "rs"}},
    "spec": {
        "selector": {"matchLabels": {"app.kubernetes.io/name": "rs"}},
        "template": {
            "metadata": {"labels": {"app.kubernetes.io/name": "rs"}},
            "spec": {
                "initContainers": [
                    {
                        "name": "copyutil",
                        "image": "quay.io/argoproj/argocd:v3.1.0",
                        "command": ["sh", "-c"],
                        "args": [
                            "/bin/cp /usr/local/bin/argocd /var/run/argocd/argocd && /bin/ln -sf "
                            "/var/run/argocd/argocd /var/run/argocd/argocd-cmp-server"
                        ],
                        "volumeMounts": [{"name": "var-files", "mountPath": "/var/run/argocd"}],
                    }
                ],
                "containers": [
                    {
                        "name": "argocd-repo-server",
                        "image": "quay.io/argoproj/argocd:v3.1.0",
                        "args": ["/usr/local/bin/argocd-repo-server"],
                        "volumeMounts": [
                            {"name": "tmp", "mountPath": "/tmp"},
                            {"name": "plugins", "mountPath": "/home/argocd/cmp-server/plugins"},
                        ],
                    }
                ],
                "volumes": [
                    {"name": "tmp", "emptyDir": {}},
                    {"name": "var-files", "emptyDir": {}},
                    {"name": "plugins", "emptyDir": {}},
                ],
            },
        },
    },
}


def readme_kustomization() -> dict[str, Any]:
    """The kustomization that installs the sidecar with Argo CD (docs/how-to/argocd-plugin.md)."""
    found = [
        doc
        for block in FENCED_YAML.findall(page_text("how-to/argocd-plugin.md"))
        for doc in yaml.safe_load_all(block)
        if isinstance(doc, dict)
        and doc.get("kind") == "Kustomization"
        and doc.get("apiVersion", "").startswith("kustomize.config.k8s.io/")
    ]
    (kustomization,) = found
    return kustomization


@pytest.fixture(scope="module")
def patched(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The Deployment after `kubectl kustomize` applied the patch as the docs say to: the
    docs' kustomization, with the repo-server Deployment above for Argo CD's manifests."""
    kubectl = require_tool("kubectl")
    folder = tmp_path_factory.mktemp("argocd")
    kustomization = readme_kustomization()
    assert kustomization["patches"] == [{"path": PATCH.name}]
    (folder / "repo-server.yaml").write_text(yaml.safe_dump(REPO_SERVER))
    (folder / PATCH.name).write_bytes(PATCH.read_bytes())
    (folder / "kustomization.yaml").write_text(
        yaml.safe_dump({**kustomization, "resources": ["repo-server.yaml"]})
    )
    built = subprocess.run(
        [kubectl, "kustomize", str(folder)], capture_output=True, text=True, check=False
    )
    assert built.returncode == 0, built.stderr
    (deployment,) = list(yaml.safe_load_all(built.stdout))
    result: dict[str, Any] = deployment
    return result


def test_patched_deployment_is_valid_kubernetes(patched: dict[str, Any]) -> None:
    assert_valid([patched], "1.33")


def test_sidecar_is_added_as_argo_cd_documents_it(patched: dict[str, Any]) -> None:
    pod = patched["spec"]["template"]["spec"]
    containers = {c["name"]: c for c in pod["containers"]}
    assert set(containers) == {"argocd-repo-server", argocd_sidecar.CONTAINER}
    original = REPO_SERVER["spec"]["template"]["spec"]["containers"][0]
    assert containers["argocd-repo-server"] == original
    sidecar = containers[argocd_sidecar.CONTAINER]
    assert sidecar["command"] == ["/var/run/argocd/argocd-cmp-server"]
    (image,) = readme_kustomization()["images"]
    assert image["name"] == argocd_sidecar.IMAGE_NAME
    assert sidecar["image"] == f"{image['newName']}:{gpustack.__version__}"
    security = sidecar["securityContext"]
    assert (security["runAsNonRoot"], security["runAsUser"]) == (True, 999)
    assert security["readOnlyRootFilesystem"] is True
    mounts = {m["mountPath"]: m["name"] for m in sidecar["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert mounts["/var/run/argocd"] == "var-files"
    assert mounts["/home/argocd/cmp-server/plugins"] == "plugins"
    # Its own /tmp, an emptyDir the repo-server does not mount (Argo CD's advice since 2.4).
    tmp = mounts["/tmp"]
    assert "emptyDir" in volumes[tmp]
    assert tmp not in {m["name"] for m in containers["argocd-repo-server"]["volumeMounts"]}
    assert set(mounts.values()) <= set(volumes)
    assert len(pod["volumes"]) == len(volumes) == 4
