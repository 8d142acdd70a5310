"""``gitops.argocd.render``: the Applications the generated ApplicationSets make, and where the
plugin-rendered ones find their profile.

The ApplicationSet controller is not available here, so its one job that matters is done in the
test: each generator's parameters are put into the template (Go template fields, with
``missingkey=error``), and every resulting Application is validated against the Application CRD
and followed to what it deploys: a committed cluster folder, or a profile the plugin renders.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner, Result

from gpustack.checker import check_paths
from gpustack.cli import main
from gpustack.gitops import argocd_plugin
from tests.test_readme_gitops import crd_schemas

REPO = Path(__file__).resolve().parents[2]
ARGOCD = REPO / "dist" / "gitops" / "argocd"
FIELD = re.compile(r"\{\{\s*\.([A-Za-z0-9_.]+)\s*\}\}")


def render(template: Any, params: dict[str, Any]) -> Any:
    """``template`` with every ``{{.a.b}}`` replaced from ``params``; a missing key fails."""
    if isinstance(template, dict):
        return {k: render(v, params) for k, v in template.items()}
    if isinstance(template, list):
        return [render(v, params) for v in template]
    if isinstance(template, str):

        def value(match: re.Match[str]) -> str:
            found: Any = params
            for part in match.group(1).split("."):
                assert isinstance(found, dict) and part in found, f"missing key {match.group(0)}"
                found = found[part]
            return str(found)

        return FIELD.sub(value, template)
    return template


def generator_params(generator: dict[str, Any]) -> list[dict[str, Any]]:
    """What the git-directories and list generators hand the template, per Application."""
    if "git" in generator:
        paths = [d["path"] for d in generator["git"]["directories"]]
        return [{"path": {"path": p, "basename": posixpath.basename(p)}} for p in paths]
    elements: list[dict[str, Any]] = generator["list"]["elements"]
    return elements


def applications(path: Path) -> list[dict[str, Any]]:
    appset = yaml.safe_load(path.read_text())
    spec = appset["spec"]
    assert spec["goTemplate"] is True and spec["goTemplateOptions"] == ["missingkey=error"]
    apps = []
    for generator in spec["generators"]:
        for params in generator_params(generator):
            app = render(spec["template"], params)
            app = {"apiVersion": appset["apiVersion"], "kind": "Application", **app}
            app["metadata"]["namespace"] = appset["metadata"]["namespace"]
            apps.append(app)
    return apps


APPLICATIONS = [
    app for path in sorted(ARGOCD.glob("applicationset-*.yaml")) for app in applications(path)
]


def _profiles() -> dict[str, Any]:
    result = check_paths([REPO / "profiles"])
    assert result.ok
    return {p.profile.metadata.name: p for p in result.profiles}


def test_every_argo_cd_cluster_gets_one_application_and_both_modes_are_exercised() -> None:
    wanted = {n for n, p in _profiles().items() if p.profile.gitops.argocd.enabled}
    names = [a["spec"]["destination"]["name"] for a in APPLICATIONS]
    assert sorted(names) == sorted(wanted)
    assert {"plugin" in a["spec"]["source"] for a in APPLICATIONS} == {True, False}


@pytest.mark.parametrize("app", APPLICATIONS, ids=lambda a: a["metadata"]["name"])
def test_application_is_valid_and_deploys_its_cluster(app: dict[str, Any]) -> None:
    schema = crd_schemas()[(app["apiVersion"], "Application")]
    errors = list(jsonschema.Draft7Validator(schema).iter_errors(app))
    assert not errors, "\n".join(f"{e.json_path}: {e.message}" for e in errors)
    cluster = app["spec"]["destination"]["name"]
    assert app["metadata"]["name"] == f"gpustack-{cluster}"
    source = app["spec"]["source"]
    loaded = _profiles()[cluster]
    if loaded.profile.gitops.argocd.render == "committed":
        assert "plugin" not in source
        assert (REPO / source["path"]) == REPO / "dist" / "clusters" / cluster
        return
    # The plugin, by the name Argo CD gives it (the plugin.yaml the sidecar holds) ...
    config = yaml.safe_load((REPO / "cmp-image" / "plugin.yaml").read_text())
    plugin = source["plugin"]
    assert plugin["name"] == f"{config['metadata']['name']}-{config['spec']['version']}"
    # ... rendering, in the source path, the very profile file this cluster comes from.
    (parameter,) = plugin["parameters"]
    assert parameter["name"] == argocd_plugin.PARAMETER
    file = REPO / source["path"] / parameter["string"]
    assert file.resolve() == loaded.path.resolve()


def test_plugin_name_is_the_one_plugin_yaml_declares() -> None:
    config = yaml.safe_load((REPO / "cmp-image" / "plugin.yaml").read_text())
    assert (
        argocd_plugin.plugin_name() == f"{config['metadata']['name']}-{config['spec']['version']}"
    )


PROFILE = """\
apiVersion: gpustack.dev/v1alpha1
kind: Profile
metadata:
  name: {name}
gpus:
  product: L4
gitops:
  repoURL: https://git.example.com/fleet.git
  path: {path}
  argocd:
    enabled: true
    render: {render}
    project: {project}
"""


def write_profile(
    file: Path, *, path: str = "dist", render: str = "plugin", project: str = "gpustack"
) -> Path:
    file.parent.mkdir(parents=True, exist_ok=True)
    text = PROFILE.format(name=file.stem, path=path, render=render, project=project)
    file.write_text(text)
    return file


def synth(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["synth", *map(str, args)])


def elements(out: Path, project: str = "gpustack") -> list[dict[str, str]]:
    appset = yaml.safe_load(
        (out / "gitops" / "argocd" / f"applicationset-{project}.yaml").read_text()
    )
    found: list[dict[str, str]] = appset["spec"]["generators"][0]["list"]["elements"]
    return found


def test_in_a_checkout_paths_are_from_its_root_whatever_the_output_folder_and_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write_profile(repo / "profiles" / "team-a" / "alpha.yaml")
    write_profile(repo / "profiles" / "beta.yaml")
    want = [
        {
            "cluster": "alpha",
            "path": "profiles/team-a",
            "profile": "alpha.yaml",
            "generatePaths": "/profiles/team-a/alpha.yaml",
        },
        {
            "cluster": "beta",
            "path": "profiles",
            "profile": "beta.yaml",
            "generatePaths": "/profiles/beta.yaml",
        },
    ]
    monkeypatch.chdir(repo)
    done = synth("profiles", "--out", "dist")
    assert done.exit_code == 0, done.output
    assert elements(repo / "dist") == want
    # From elsewhere, with absolute paths, a detour through ".." and a preview folder outside
    # the checkout: the same objects.
    committed = {
        p.relative_to(repo / "dist"): p.read_bytes()
        for p in (repo / "dist" / "gitops").rglob("*.yaml")
    }
    monkeypatch.chdir(tmp_path)
    preview = tmp_path / "preview"
    done = synth(repo / "profiles" / ".." / "profiles", "--out", preview)
    assert done.exit_code == 0, done.output
    again = {p.relative_to(preview): p.read_bytes() for p in (preview / "gitops").rglob("*.yaml")}
    assert again == committed


def test_without_a_checkout_the_output_folder_places_the_root(tmp_path: Path) -> None:
    """An exported tree without .git: the output folder minus gitops.path is the root."""
    repo = tmp_path / "export"
    write_profile(repo / "gpu" / "profiles" / "alpha.yaml", path="deploy/gpu")
    out = repo / "deploy" / "gpu"
    done = synth(repo / "gpu" / "profiles", "--out", out)
    assert done.exit_code == 0, done.output
    assert elements(out) == [
        {
            "cluster": "alpha",
            "path": "gpu/profiles",
            "profile": "alpha.yaml",
            "generatePaths": "/gpu/profiles/alpha.yaml",
        }
    ]


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        (
            "no-checkout-and-out-is-not-gitops-path",
            "no folder above the profile holds .git and the output folder {out} does not end in "
            "gitops.path ('dist'); run synth in the git checkout",
        ),
        ("profile-outside-repository", "is outside the repository ({repo}: the output folder"),
        ("render-mixed-in-one-project", "but not gitops.repoURL, revision, path and argocd.render"),
    ],
)
def test_a_plugin_path_that_cannot_be_derived_is_one_line_and_writes_nothing(
    tmp_path: Path, layout: str, message: str
) -> None:
    repo = tmp_path / "repo"
    profiles = repo / "profiles"
    out = repo / "dist"
    if layout == "no-checkout-and-out-is-not-gitops-path":
        write_profile(profiles / "alpha.yaml")
        out = repo / "build"
    elif layout == "profile-outside-repository":
        profiles = tmp_path / "elsewhere" / "profiles"
        write_profile(profiles / "alpha.yaml")
    else:
        write_profile(profiles / "alpha.yaml")
        write_profile(profiles / "beta.yaml", render="committed")
    done = synth(profiles, "--out", out)
    assert done.exit_code == 1
    assert message.format(out=out, repo=repo) in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not out.exists()


# --- manifest-generate-paths: a commit re-renders only the Applications it touches --------------


def generate_paths(app: dict[str, Any]) -> list[str]:
    """The repository paths an Application's manifests depend on, as Argo CD reads the
    annotation: ``;``-separated, ``/`` from the repository root, others from source.path."""
    value = app["metadata"]["annotations"]["argocd.argoproj.io/manifest-generate-paths"]
    base = app["spec"]["source"]["path"]
    return [
        p[1:] if p.startswith("/") else posixpath.normpath(posixpath.join(base, p))
        for p in value.split(";")
    ]


def touched(apps: list[dict[str, Any]], changed: str) -> list[str]:
    """The Applications a commit changing repository file ``changed`` makes Argo CD render."""
    return sorted(
        a["spec"]["destination"]["name"]
        for a in apps
        if any(changed == p or changed.startswith(p + "/") for p in generate_paths(a))
    )


@pytest.mark.parametrize("app", APPLICATIONS, ids=lambda a: a["metadata"]["name"])
def test_each_application_names_the_paths_its_manifests_come_from(app: dict[str, Any]) -> None:
    cluster = app["spec"]["destination"]["name"]
    loaded = _profiles()[cluster]
    paths = generate_paths(app)
    if loaded.profile.gitops.argocd.render == "committed":
        assert paths == [f"dist/clusters/{cluster}"]
        return
    want = [Path(f).resolve().relative_to(REPO).as_posix() for f in loaded.files]
    assert paths == want
    assert all((REPO / p).is_file() for p in paths)


def test_a_commit_to_one_profile_re_renders_its_application_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "profiles" / "_bases").mkdir(parents=True)
    (repo / "profiles" / "_bases" / "fleet.yaml").write_text("gpus:\n  perNode: 4\n")
    for name in ("alpha", "beta", "gamma"):
        file = write_profile(repo / "profiles" / f"{name}.yaml")
        if name != "gamma":
            file.write_text(
                file.read_text().replace(
                    "kind: Profile\n", "kind: Profile\nextends: _bases/fleet.yaml\n"
                )
            )
    monkeypatch.chdir(repo)
    done = synth("profiles", "--out", "dist")
    assert done.exit_code == 0, done.output
    apps = applications(repo / "dist" / "gitops" / "argocd" / "applicationset-gpustack.yaml")
    assert touched(apps, "profiles/alpha.yaml") == ["alpha"]
    assert touched(apps, "profiles/gamma.yaml") == ["gamma"]
    assert touched(apps, "profiles/_bases/fleet.yaml") == ["alpha", "beta"]
    assert touched(apps, "README.md") == []


@pytest.mark.parametrize("app", APPLICATIONS, ids=lambda a: a["metadata"]["name"])
def test_each_application_diffs_server_side(app: dict[str, Any]) -> None:
    """Issue #35 item 4: Argo CD compares the way the e2e tier proves clean (a server-side apply
    dry run, ``kubectl diff --server-side``: empty after every example folder's rollout), so no
    ``ignoreDifferences`` is needed; without the annotation ``ServerSideApply=true`` would pick
    the structured-merge diff Argo CD has discontinued (user-guide/diff-strategies.md)."""
    options = app["metadata"]["annotations"]["argocd.argoproj.io/compare-options"]
    assert "ServerSideDiff=true" in options.split(",")
    assert "ServerSideApply=true" in app["spec"]["syncPolicy"]["syncOptions"]
    assert "ignoreDifferences" not in app["spec"]
