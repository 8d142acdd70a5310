"""The profile reference in Markdown (``schemas/profile.md``), rendered from the JSON Schema.

Editors show the schema's titles and descriptions through the modeline; people reading the
repository (or a pull request) get the same text as one table per section, so the documentation
can never say something the schema does not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

Schema = Mapping[str, Any]


def _resolve(node: Schema, root: Schema) -> Schema:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return {
            **root["$defs"][ref.removeprefix("#/$defs/")],
            **{k: v for k, v in node.items() if k != "$ref"},
        }
    return node


def _type(node: Schema, root: Schema) -> str:
    node = _resolve(node, root)
    if "anyOf" in node:
        return " or ".join(_type(n, root) for n in node["anyOf"])
    kind = node.get("type")
    if kind == "array":
        items = node.get("items")
        return f"list of {_type(items, root)}" if isinstance(items, Mapping) else "list"
    if kind == "object" and isinstance(node.get("additionalProperties"), Mapping):
        return f"map of {_type(node['additionalProperties'], root)}"
    if "enum" in node:
        return " | ".join(f"`{v}`" for v in node["enum"])
    if isinstance(kind, list):
        return " or ".join(kind)
    return str(kind or "any")


def _code(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return f"`{text}`" if text else '`""`'


def _cell(text: str) -> str:
    """Table-cell safe: pipes escaped, and ``<name>`` outside code spans kept from reading as
    an HTML tag."""
    parts = text.replace("|", "\\|").replace("\n", " ").split("`")
    for i in range(0, len(parts), 2):  # even parts lie outside code spans
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts)


def _rows(node: Schema, root: Schema, path: str) -> Iterator[tuple[str, Schema]]:
    """Every property below ``node`` as (dotted path, its subschema), depth first."""
    node = _resolve(node, root)
    for name, sub in node.get("properties", {}).items():
        here = f"{path}.{name}" if path else name
        sub = _resolve(sub, root)
        yield here, sub
        yield from _rows(sub, root, here)
        items = sub.get("items")
        if sub.get("type") == "array" and isinstance(items, Mapping):
            yield from _rows(items, root, f"{here}[]")


def render_reference(schema: Schema) -> str:
    """``schemas/profile.md``: one table per top-level section."""
    lines = [
        f"# {schema['title']}: field reference",
        "",
        "<!-- Generated from schemas/profile.schema.json by `python -m gpustack.profile.schema`;"
        " do not edit. -->",
        "",
        _cell(schema["description"]),
        "",
        "Required: " + ", ".join(f"`{r}`" for r in schema.get("required", [])) + ".",
    ]
    for section, sub in schema["properties"].items():
        sub = _resolve(sub, schema)
        lines += ["", f"## `{section}`", "", _cell(sub.get("description", "")), ""]
        rows = list(_rows(sub, schema, section))
        if not rows:
            lines.append(
                f"Type: {_type(sub, schema)}"
                + (f"; default {_code(sub['default'])}." if "default" in sub else ".")
            )
            continue
        lines += ["| Field | Type | Default | Description |", "|---|---|---|---|"]
        for path, node in rows:
            default = _code(node["default"]) if "default" in node else ""
            text = node.get("description", "")
            if node.get("examples") and "default" not in node:
                text += f" Example: {_code(node['examples'][0])}."
            lines.append(
                f"| `{path}` | {_cell(_type(node, schema))} | {_cell(default)} | {_cell(text)} |"
            )
    return "\n".join(lines) + "\n"
