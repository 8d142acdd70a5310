"""The generated Argo CD and Flux objects in the committed ``dist/gitops/``: valid against their
CRDs (strictly), pointing at the cluster folders gpustack really writes, with honest health."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.test_readme_gitops import crd_schemas

REPO = Path(__file__).resolve().parents[2]
DIST = REPO / "dist"
GITOPS = DIST / "gitops"
FILES = sorted(p for p in GITOPS.rglob("*.yaml") if p.name != "kustomization.yaml")


def _load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(path.read_text())
    return doc


def _profiles() -> dict[str, dict[str, Any]]:
    """Cluster name -> the profile's gitops section as written (bases merged by validate)."""
    from gpustack.checker import check_paths

    result = check_paths([REPO / "profiles"])
    assert result.ok
    return {p.profile.metadata.name: p.profile for p in result.profiles}  # type: ignore[misc]


def _manifests(cluster: str) -> list[dict[str, Any]]:
    folder = DIST / "clusters" / cluster
    resources = yaml.safe_load((folder / "kustomization.yaml").read_text())["resources"]
    return [_load(folder / r) for r in resources]


def test_example_profiles_generate_argo_cd_and_both_flux_sources() -> None:
    kinds = {_load(p)["kind"] for p in FILES}
    assert kinds == {
        "ApplicationSet",
        "AppProject",
        "GitRepository",
        "OCIRepository",
        "Kustomization",
    }


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(GITOPS).as_posix())
def test_generated_object_is_valid_against_its_crd(path: Path) -> None:
    obj = _load(path)
    schema = crd_schemas().get((obj["apiVersion"], obj["kind"]))
    assert schema is not None, f"no served CRD for {obj['apiVersion']} {obj['kind']}"
    errors = list(jsonschema.Draft7Validator(schema).iter_errors(obj))
    assert not errors, "\n".join(f"{e.json_path}: {e.message}" for e in errors)


def test_applicationset_generator_paths_are_the_argo_cd_clusters_folders() -> None:
    profiles = _profiles()
    appset = _load(GITOPS / "argocd" / "applicationset-gpustack.yaml")
    (generator,) = appset["spec"]["generators"]
    paths = [d["path"] for d in generator["git"]["directories"]]
    wanted = sorted(
        n
        for n, p in profiles.items()
        if p.gitops.argocd.enabled and p.gitops.argocd.render == "committed"
    )
    assert paths == [f"dist/clusters/{n}" for n in wanted]
    for path in paths:  # the repository root is REPO: each is a real, synthesized cluster folder
        assert (REPO / path / "kustomization.yaml").is_file(), path
    template = appset["spec"]["template"]["spec"]
    assert template["source"]["path"] == "{{.path.path}}"
    assert template["source"]["repoURL"] == generator["git"]["repoURL"]


@pytest.mark.parametrize(
    "path", sorted((GITOPS / "argocd").glob("appproject-*.yaml")), ids=lambda p: p.stem
)
def test_appproject_allows_exactly_the_kinds_the_clusters_hold(path: Path) -> None:
    project = _load(path)["spec"]
    clusters = [d["name"] for d in project["destinations"]]
    held = {
        (m["apiVersion"].rpartition("/")[0], m["kind"], bool(m["metadata"].get("namespace")))
        for c in set(clusters)
        for m in _manifests(c)
    }
    allowed = {(k["group"], k["kind"], False) for k in project["clusterResourceWhitelist"]} | {
        (k["group"], k["kind"], True) for k in project["namespaceResourceWhitelist"]
    }
    assert allowed == held


@pytest.mark.parametrize(
    "folder", sorted(p for p in (GITOPS / "flux").iterdir()), ids=lambda p: p.name
)
def test_flux_kustomization_path_is_the_clusters_folder(folder: Path) -> None:
    cluster = folder.name
    profile = _profiles()[cluster]
    flux = _load(folder / "kustomization-gpustack.yaml")["spec"]
    listed = yaml.safe_load((folder / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == sorted(p.name for p in folder.glob("*-gpustack.yaml"))
    source = _load(folder / listed[0])
    assert flux["sourceRef"] == {"kind": source["kind"], "name": source["metadata"]["name"]}
    assert flux["prune"] is True
    if source["kind"] == "GitRepository":
        root = REPO  # the repository's root
        assert source["spec"]["sparseCheckout"] == [flux["path"].removeprefix("./")]
    else:
        root = DIST  # the OCI artifact holds the output folder
    assert profile.gitops.flux.source == ("git" if source["kind"] == "GitRepository" else "oci")
    target = (root / flux["path"]).resolve()
    assert target == (DIST / "clusters" / cluster).resolve()
    assert (target / "kustomization.yaml").is_file()


@pytest.mark.parametrize(
    "folder", sorted(p for p in (GITOPS / "flux").iterdir()), ids=lambda p: p.name
)
def test_flux_waits_for_every_daemonset_but_the_ondelete_driver(folder: Path) -> None:
    flux = _load(folder / "kustomization-gpustack.yaml")["spec"]
    assert flux["wait"] is False  # `wait` would never be Ready after a driver bump
    daemonsets = [m for m in _manifests(folder.name) if m["kind"] == "DaemonSet"]
    rolling = [
        (m["metadata"]["namespace"], m["metadata"]["name"])
        for m in daemonsets
        if m["spec"].get("updateStrategy", {}).get("type") != "OnDelete"
    ]
    checked = [(c["namespace"], c["name"]) for c in flux["healthChecks"]]
    assert checked == rolling and checked
    on_delete = [
        m for m in daemonsets if (m["metadata"]["namespace"], m["metadata"]["name"]) not in rolling
    ]
    if folder.name != "k3s-edge":  # k3s-edge runs no driver DaemonSet
        assert [m["metadata"]["name"] for m in on_delete] == ["nvidia-driver-daemonset"]
