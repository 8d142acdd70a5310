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
from referencing import Registry, Resource

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
