"""The profile JSON Schema, derived from the typed model's field declarations.

``schemas/profile.schema.json`` is this module's output (``python -m gpustack.profile.schema``
rewrites it; a test fails when the file is stale), and so is ``profile-base.schema.json``: the
same schema without required keys, for the modeline of ``extends`` bases, which are not whole
profiles (a base without ``metadata`` would otherwise be marked wrong in every editor).
Every property comes from :mod:`gpustack.profile.model` through :mod:`gpustack.fields`; only the
envelope (``apiVersion``, ``kind``, ``extends``), which the loader consumes, is written here.
The schema keeps to the subset every yaml-language-server understands: ``enum``, ``pattern``,
``additionalProperties``, ``$defs`` and one ``anyOf`` (a string-or-list field).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.protocols import Validator

from gpustack import fields
from gpustack.fields.generated import write_or_check
from gpustack.profile import model

SCHEMA_ID = "https://gpustack.dev/schemas/profile.schema.json"
BASE_SCHEMA_ID = "https://gpustack.dev/schemas/profile-base.schema.json"
#: Where the committed copies live, relative to the repository root.
SCHEMA_FILE = Path("schemas") / "profile.schema.json"
BASE_SCHEMA_FILE = Path("schemas") / "profile-base.schema.json"
REFERENCE_FILE = Path("schemas") / "profile.md"

Schema = dict[str, Any]

#: The document envelope: what the loader reads before the model does.
_ENVELOPE: dict[str, Schema] = {
    "apiVersion": {
        "title": "API version",
        "description": "Version of the profile format.",
        "type": "string",
        "enum": [model.API_VERSION],
    },
    "kind": {
        "title": "Kind",
        "description": "Always Profile.",
        "type": "string",
        "enum": [model.KIND],
    },
    "extends": {
        "title": "Extends",
        "description": "Base profile this one builds on, as a path relative to this file; maps "
        "merge, lists and other values replace, null removes a key.",
        "type": "string",
        "minLength": 1,
        "examples": ["_bases/h100-fleet.yaml"],
    },
}


def build_schema() -> Schema:
    """The whole profile schema as a fresh dict."""
    defs: dict[str, Schema] = {}
    body = fields.object_schema(model.Profile, defs)
    sections = body["properties"]
    properties = {
        "apiVersion": _ENVELOPE["apiVersion"],
        "kind": _ENVELOPE["kind"],
        "metadata": sections.pop("metadata"),
        "extends": _ENVELOPE["extends"],
        **sections,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "gpustack profile",
        "description": "One Kubernetes cluster's NVIDIA GPU stack: what gpustack validates and "
        "turns into GitOps manifests.",
        "type": "object",
        "additionalProperties": False,
        "required": ["apiVersion", "kind", *body.get("required", [])],
        "properties": properties,
        "$defs": fields.definitions(defs),
    }


def build_base_schema() -> Schema:
    """The schema for bases named by ``extends``: any part of a profile, nothing required."""
    out = build_schema()
    del out["required"]
    out["$id"] = BASE_SCHEMA_ID
    out["title"] = "gpustack profile base"
    out["description"] = (
        "Settings shared by profiles that `extends:` this file; any part of a profile, nothing "
        "required. The merged profile is checked against profile.schema.json."
    )
    return out


@cache
def schema() -> Schema:
    """The schema, built once per process (treat as read-only)."""
    return build_schema()


def _pattern(
    checker: Validator, pattern: str, instance: Any, schema: Schema
) -> Iterator[ValidationError]:
    # jsonschema matches with Python's re.search, whose `$` also matches before a final newline;
    # the schema means ECMA-262's `$` (the very end), as editors read it (issue #11, item 9).
    if checker.is_type(instance, "string") and not fields.compiled(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


#: Draft 2020-12 with patterns matched as JSON Schema means them (see :mod:`gpustack.fields`).
ProfileValidator: type[Validator] = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, {"pattern": _pattern}
)


@cache
def validator() -> Validator:
    """The compiled validator, built once per process."""
    return ProfileValidator(schema())


def _text(data: Schema) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def render() -> str:
    """The schema file's exact text."""
    return _text(build_schema())


def render_base() -> str:
    """The base schema file's exact text."""
    return _text(build_base_schema())


def render_reference_doc() -> str:
    """The Markdown field reference's exact text (``schemas/profile.md``)."""
    from gpustack.profile.reference import render_reference

    return render_reference(build_schema())


def main() -> None:
    """Rewrite (or with ``--check``, verify) the schemas and the field reference."""
    write_or_check(
        {
            SCHEMA_FILE: render(),
            BASE_SCHEMA_FILE: render_base(),
            REFERENCE_FILE: render_reference_doc(),
        },
        "python -m gpustack.profile.schema",
    )


if __name__ == "__main__":
    main()
