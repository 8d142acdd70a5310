"""Strict Kubernetes OpenAPI validation of manifests, offline.

Uses the JSON schemas kubernetes-validate bundles (one folder per Kubernetes minor, ``-strict``
variants reject unknown fields) with cached ``jsonschema`` validators: one registry per version
holding ``_definitions.json``, one validator per kind. That is ~0.4 ms per object and reports
every error, where the kubernetes-validate CLI reloads the schemas per call and stops at the
first. No CRD kinds: an unknown kind is itself an error.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import yaml
from referencing import Registry, Resource

from gpustack.constructs import dra_compute_domains
from gpustack.constructs.nfd_crds import CRDS as NFD_CRDS
from gpustack.constructs.nfd_crds import GROUP as NFD_GROUP
from gpustack.constructs.nfd_crds import VERSION as NFD_VERSION

CRD_DIR = Path(__file__).parent / "crds"


def _crd_file_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) -> openAPIV3Schema of every CRD under tests/crds/."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for path in sorted(CRD_DIR.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for version in spec["versions"]:
                key = (f"{spec['group']}/{version['name']}", spec["names"]["kind"])
                found[key] = version["schema"]["openAPIV3Schema"]
    return found


def _strict(schema: Any) -> Any:
    """The schema with every object that lists ``properties`` closed to others: the API server
    prunes unknown fields of a custom resource silently, which strict validation reports."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        if isinstance(schema.get("properties"), dict):
            out["properties"] = {k: _strict(v) for k, v in schema["properties"].items()}
        return out
    if isinstance(schema, list):
        return [_strict(x) for x in schema]
    return schema


#: Custom resource kinds that can be validated: (apiVersion, kind) -> openAPIV3Schema.
CUSTOM_RESOURCES: dict[tuple[str, str], dict[str, Any]] = {
    **{(f"{NFD_GROUP}/{NFD_VERSION}", kind): schema for kind, *_, schema, _ in NFD_CRDS},
    **{
        (f"{dra_compute_domains.CRD_GROUP}/{dra_compute_domains.CRD_VERSION}", kind): schema
        for kind, _, schema, _ in dra_compute_domains.CRDS
    },
    **_crd_file_schemas(),
}

SCHEMA_ROOT = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"


def schema_dir(kubernetes_version: str, *, strict: bool = True) -> Path:
    """The bundled schema folder for ``1.33``-style versions (``v1.33.0-local-strict``)."""
    major, minor = kubernetes_version.split(".")[:2]
    folder = SCHEMA_ROOT / f"v{major}.{minor}.0-local{'-strict' if strict else ''}"
    if not folder.is_dir():
        raise LookupError(f"kubernetes-validate has no schemas for Kubernetes {kubernetes_version}")
    return folder


def schema_file(api_version: str, kind: str) -> str:
    """File name of a kind's schema: ``<kind>-<group prefix>-<version>.json``.

    ``apps/v1`` DaemonSet → ``daemonset-apps-v1.json``; ``rbac.authorization.k8s.io/v1``
    ClusterRole → ``clusterrole-rbac-v1.json``; core ``v1`` ConfigMap → ``configmap-v1.json``.
    """
    group, _, version = api_version.rpartition("/")
    parts = [kind.lower()]
    if group:
        parts.append(group.split(".")[0])
    parts.append(version)
    return "-".join(parts) + ".json"


@functools.cache
def _registry(folder: Path) -> Registry[Any]:
    definitions = json.loads((folder / "_definitions.json").read_text())
    return Resource.from_contents(definitions) @ Registry()


@functools.cache
def _validator(folder: Path, file_name: str) -> jsonschema.protocols.Validator:
    path = folder / file_name
    if not path.is_file():
        raise LookupError(f"no schema {file_name} in {folder.name}")
    schema = json.loads(path.read_text())
    registry = Resource.from_contents(schema) @ _registry(folder)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def errors(
    manifest: Mapping[str, Any], kubernetes_version: str, *, strict: bool = True
) -> list[str]:
    """Every schema violation of ``manifest`` as ``<kind>/<name>: <json path>: <message>``."""
    where = f"{manifest.get('kind')}/{manifest.get('metadata', {}).get('name')}"
    custom = CUSTOM_RESOURCES.get((manifest.get("apiVersion", ""), manifest.get("kind", "")))
    if custom is not None:
        found = sorted(
            jsonschema.Draft202012Validator(_strict(custom)).iter_errors(manifest),
            key=lambda e: list(map(str, e.absolute_path)),
        )
        return [f"{where}: {e.json_path}: {e.message}" for e in found]
    try:
        folder = schema_dir(kubernetes_version, strict=strict)
        validator = _validator(folder, schema_file(manifest["apiVersion"], manifest["kind"]))
    except (LookupError, KeyError) as exc:
        return [f"{where}: {exc}"]
    found = sorted(validator.iter_errors(manifest), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{where}: {e.json_path}: {e.message}" for e in found]


def assert_valid(manifests: Iterable[Mapping[str, Any]], kubernetes_version: str) -> None:
    """Fail with every error of every manifest (strict mode)."""
    problems = [msg for m in manifests for msg in errors(m, kubernetes_version)]
    assert not problems, "\n".join(problems)
