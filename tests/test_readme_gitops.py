"""The Argo CD and Flux examples of the GitOps page (docs/concepts/gitops.md, once the README's)
are objects users paste into their clusters: each must be valid against its CRD (strictly: an
unknown field is an error, as with server-side apply) and must point at cluster folders that
``gpustack synth`` really writes.

The CRDs come from ``../shared/crds/`` (CI provides them there).
"""

from __future__ import annotations

import copy
import fnmatch
import os
import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CRDS = REPO.parent / "shared" / "crds"
#: The page that shows the objects (the module kept its name from when the README did).
README = REPO / "docs" / "concepts" / "gitops.md"
FENCED_YAML = re.compile(r"^```yaml\n(.*?)^```", re.MULTILINE | re.DOTALL)
GITOPS_GROUPS = ("argoproj.io", "toolkit.fluxcd.io")


def readme_objects() -> list[dict[str, Any]]:
    """Every YAML document in the page's ```yaml blocks that is an Argo CD or Flux object."""
    found = []
    for block in FENCED_YAML.findall(README.read_text(encoding="utf-8")):
        for doc in yaml.safe_load_all(block):
            if isinstance(doc, dict) and str(doc.get("apiVersion", "")).split("/")[0].endswith(
                GITOPS_GROUPS
            ):
                found.append(doc)
    return found


def strict(schema: Any) -> Any:
    """The CRD's structural schema with unknown fields rejected, as the API server prunes them
    (a pruned field is a setting the user thinks is applied but is not)."""
    if isinstance(schema, dict):
        out = {k: strict(v) for k, v in schema.items()}
        if (
            "properties" in out
            and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")
        ):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [strict(v) for v in schema]
    return schema


@cache
def crd_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) -> strict JSON Schema of that served CRD version."""
    if not CRDS.is_dir():
        message = f"{CRDS} is missing (CI provides the Argo CD and Flux CRDs there)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    schemas = {}
    for path in sorted(CRDS.glob("*.yaml")):
        for crd in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if not isinstance(crd, dict) or crd.get("kind") != "CustomResourceDefinition":
                continue
            spec = crd["spec"]
            for version in spec["versions"]:
                if version.get("served"):
                    schema = copy.deepcopy(version["schema"]["openAPIV3Schema"])
                    key = (f"{spec['group']}/{version['name']}", spec["names"]["kind"])
                    schemas[key] = strict(schema)
    return schemas


OBJECTS = readme_objects()


def object_id(obj: dict[str, Any]) -> str:
    return f"{obj['kind']}-{obj['metadata']['name']}"


def test_readme_has_argo_cd_and_flux_examples() -> None:
    kinds = {obj["kind"] for obj in OBJECTS}
    assert {"ApplicationSet", "GitRepository", "Kustomization"} <= kinds


@pytest.mark.parametrize("obj", OBJECTS, ids=object_id)
def test_example_is_valid_against_its_crd(obj: dict[str, Any]) -> None:
    schema = crd_schemas().get((obj["apiVersion"], obj["kind"]))
    assert schema is not None, f"no served CRD for {obj['apiVersion']} {obj['kind']} in {CRDS}"
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(obj), key=lambda e: e.json_path)
    assert not errors, "\n".join(f"{e.json_path}: {e.message}" for e in errors)


def test_strict_schema_rejects_an_unknown_field() -> None:
    """Guards the guard: a misspelt field must fail, or the test above proves nothing."""
    flux = next(o for o in OBJECTS if o["kind"] == "Kustomization")
    bad = copy.deepcopy(flux)
    bad["spec"]["prunee"] = True
    schema = crd_schemas()[(bad["apiVersion"], bad["kind"])]
    assert not jsonschema.Draft7Validator(schema).is_valid(bad)


def committed_clusters() -> list[str]:
    return sorted(
        p.relative_to(REPO).as_posix()
        for p in (REPO / "dist" / "clusters").iterdir()
        if (p / "kustomization.yaml").is_file()
    )


def test_argo_cd_generator_finds_every_cluster_folder() -> None:
    appset = next(o for o in OBJECTS if o["kind"] == "ApplicationSet")
    patterns = [d["path"] for g in appset["spec"]["generators"] for d in g["git"]["directories"]]
    clusters = committed_clusters()
    assert clusters
    for cluster in clusters:
        assert any(fnmatch.fnmatchcase(cluster, p) for p in patterns), cluster
    # The glob must not also match gpustack's own bookkeeping folder.
    assert not any(fnmatch.fnmatchcase("dist/.gpustack", p) for p in patterns)


def test_flux_kustomization_points_at_a_cluster_folder() -> None:
    flux = next(o for o in OBJECTS if o["kind"] == "Kustomization")
    path = flux["spec"]["path"].removeprefix("./")
    assert path in committed_clusters()
    source = flux["spec"]["sourceRef"]
    assert any(
        o["kind"] == source["kind"] and o["metadata"]["name"] == source["name"] for o in OBJECTS
    ), "the Kustomization's sourceRef names no object of the example"
