"""The device plugin config's JSON Schema, derived from the typed model's field declarations.

``schemas/device-plugin-config.schema.json`` is this module's output (``python -m
gpustack.plugin.schema`` rewrites it; ``--check`` fails when the file is stale, and so does a
test). Every property comes from :mod:`gpustack.plugin.config.model` through
:mod:`gpustack.fields`; only the envelope (id, title) is written here. The plugin itself never
imports this module: it validates with :meth:`PluginConfig.from_dict`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpustack.fields import definitions, object_schema
from gpustack.fields.generated import write_or_check
from gpustack.plugin.config import PluginConfig

SCHEMA_ID = "https://gpustack.dev/schemas/device-plugin-config.schema.json"
#: Where the committed copy lives, relative to the repository root.
SCHEMA_FILE = Path("schemas") / "device-plugin-config.schema.json"

Schema = dict[str, Any]


def build_schema() -> Schema:
    """The whole schema as a fresh dict."""
    defs: dict[str, Schema] = {}
    body = object_schema(PluginConfig, defs)
    out: Schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "gpustack device plugin configuration",
        "description": "NVIDIA k8s-device-plugin config v1 (the subset gpustack's plugin "
        "implements, plus sharing.mps and flags.mpsRoot for NVIDIA's plugin) and an optional "
        "gpustack extension block.",
        **body,
    }
    if defs:
        out["$defs"] = definitions(defs)
    return out


def render() -> str:
    """The schema file's exact text."""
    return json.dumps(build_schema(), indent=2, ensure_ascii=False) + "\n"


def main() -> None:
    """Rewrite (or with ``--check``, verify) ``schemas/device-plugin-config.schema.json``."""
    write_or_check({SCHEMA_FILE: render()}, "python -m gpustack.plugin.schema")


if __name__ == "__main__":
    main()
