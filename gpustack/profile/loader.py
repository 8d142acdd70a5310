"""Read profile YAML into plain data while remembering where every key and value came from.

Why not ``yaml.safe_load``: it forgets positions and silently keeps the last of two duplicate
keys. Here the file is composed into nodes (safe tags only) and converted by hand, so every JSON
path maps to ``file:line:col`` and a duplicate key is an error.

``extends: <path>`` names a base profile, relative to the file. Bases merge under the profile:
mappings merge key by key, anything else (lists, scalars) is replaced, and ``key: null`` in an
overlay removes the key so its default applies again. Chains are allowed; a cycle, a missing base
or a base outside the profiles root is an error. Locations survive the merge, so an error in a
value inherited from a base points into the base file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from gpustack.limits import (
    MAX_DEPTH,
    Budget,
    Refused,
    check_shape,
    expanded,
    read_limited,
    real_path,
    scalar,
    syntax_error_at,
)
from gpustack.profile.document import Document, JsonPath, Loc, ProfileError, merge

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"
#: Folder name that marks the top of a profile tree when a single file is checked.
PROFILES_DIR = "profiles"


def _loc(file: str, node: Node) -> Loc:
    mark = node.start_mark
    return (file, mark.line + 1, mark.column + 1)


#: More values than any profile needs; aliases of aliases could otherwise expand a few lines
#: into billions of values (a "billion laughs" file) and hang a CI job.
MAX_VALUES = 100_000
_ALIAS_HINT = "do not nest YAML aliases; share settings with `extends:`"
#: Longest key or value a load error quotes; the rest is counted.
_QUOTED = 60


def _quote(text: str) -> str:
    return repr(text) if len(text) <= _QUOTED else f"{text[:_QUOTED]!r}... ({len(text)} characters)"


@dataclass
class _Positions:
    """What :func:`_convert` records besides the data (see :class:`Document`)."""

    where: dict[JsonPath, tuple[Loc, Loc]] = field(default_factory=dict)
    written: dict[JsonPath, str] = field(default_factory=dict)


def _scalar(node: ScalarNode, file: str, path: JsonPath) -> Any:
    """A plain value with YAML's safe types; any other tag (``!!python/...``) or a value its
    type cannot hold (``2001-13-45``, ``!!bool maybe``) is refused at its line."""
    try:
        return scalar(node)
    except Refused as exc:
        raise ProfileError((file, exc.line, exc.col), path, exc.message, exc.hint) from None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value}"
    return f"a {type(value).__name__}"  # a date


def _convert(node: Node, file: str, path: JsonPath, seen: _Positions, key: Loc) -> Any:
    if len(path) > MAX_DEPTH:  # an alias of an enclosing node nests without end
        raise ProfileError(
            _loc(file, node), path[:1], f"values nest deeper than {MAX_DEPTH} levels"
        )
    seen.where[path] = (_loc(file, node), key)
    if len(seen.where) > MAX_VALUES:
        raise ProfileError(
            _loc(file, node),
            path,
            f"the file expands to more than {MAX_VALUES} values",
            _ALIAS_HINT,
        )
    if isinstance(node, ScalarNode):
        value = _scalar(node, file, path)
        if value is not None and not isinstance(value, str):
            seen.written[path] = node.value
        return value
    if isinstance(node, SequenceNode):
        return [
            _convert(item, file, (*path, i), seen, _loc(file, item))
            for i, item in enumerate(node.value)
        ]
    if isinstance(node, MappingNode):
        out: dict[str, Any] = {}
        first: dict[str, int] = {}
        for key_node, value_node in node.value:
            key_loc = _loc(file, key_node)
            if key_node.tag == _MERGE_TAG:
                raise ProfileError(
                    key_loc,
                    path,
                    "YAML merge keys (<<) are not supported",
                    "use `extends:` to share settings between profiles",
                )
            if not isinstance(key_node, ScalarNode):
                raise ProfileError(key_loc, path, "mapping keys must be plain scalars")
            child = _scalar(key_node, file, path)
            if not isinstance(child, str):
                # `on:`, `1.30:`, `null:` are read as true, 1.3 and null: every key of a profile
                # is a name, and str() of them would put 'True', '1.3', 'None' in manifests
                raise ProfileError(
                    key_loc,
                    (*path, key_node.value),
                    f"YAML reads the key {_quote(key_node.value)} as {_kind(child)}, not as a name",
                    f'quote it: "{key_node.value}"',
                )
            if child in first:
                raise ProfileError(
                    key_loc,
                    (*path, child),
                    f"duplicate key {_quote(child)} (first defined on line {first[child]})",
                    "remove one of the two entries",
                )
            first[child] = key_loc[1]
            out[child] = _convert(value_node, file, (*path, child), seen, key_loc)
        return out
    raise ProfileError(_loc(file, node), path, "unsupported YAML node")  # pragma: no cover


def read_document(path: Path, display: str) -> Document:
    """Parse one YAML file (one mapping document) without following ``extends``."""
    try:
        text = read_limited(path).decode("utf-8")
        check_shape(text, _Loader, max_values=MAX_VALUES)
    except UnicodeDecodeError as exc:
        raise ProfileError((display, 1, 1), (), f"file is not UTF-8 ({exc.reason})") from None
    except Refused as exc:
        broken = path.is_symlink() and not path.exists()
        hint = "it is a broken symlink; fix or remove it" if broken else exc.hint
        raise ProfileError((display, exc.line, exc.col), (), exc.message, hint) from None
    except yaml.YAMLError:
        pass  # composing below reports it, with its position
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        line, col, problem = syntax_error_at(exc)
        loc = (display, line, col)
        hint = None
        start = exc.context_mark
        if start is not None and (start.line, start.column) != (line - 1, col - 1):
            hint = f"look at line {start.line + 1}, column {start.column + 1}"
        if _char_at(text, line - 1, col - 1) == "\t":
            problem, hint = "tab character in indentation", "indent with spaces; YAML forbids tabs"
        raise ProfileError(loc, (), f"invalid YAML: {problem}", hint) from None
    except yaml.YAMLError as exc:
        raise ProfileError((display, 1, 1), (), f"invalid YAML: {exc}") from None
    if not nodes:
        raise ProfileError((display, 1, 1), (), "file is empty", "a profile is a YAML mapping")
    if len(nodes) > 1:
        raise ProfileError(
            _loc(display, nodes[1]),
            (),
            "file holds more than one YAML document",
            "put each profile in its own file",
        )
    root = nodes[0]
    try:  # before converting: a "billion laughs" file is refused at once, not after 100,000
        expanded(root, Budget(MAX_VALUES, MAX_DEPTH), _ALIAS_HINT)
    except Refused as exc:
        raise ProfileError((display, exc.line, exc.col), (), exc.message, exc.hint) from None
    if not isinstance(root, MappingNode):
        raise ProfileError(
            _loc(display, root), (), "a profile must be a YAML mapping", "start with `apiVersion:`"
        )
    seen = _Positions()
    data = _convert(root, display, (), seen, (display, 1, 1))
    return Document(data=data, where=seen.where, file=display, written=seen.written)


def _char_at(text: str, line: int, column: int) -> str:
    """The character at a 0-based YAML mark, or ``""`` past the end."""
    lines = text.split("\n")
    return lines[line][column : column + 1] if line < len(lines) else ""


def profiles_root(path: Path) -> Path:
    """The folder that ``extends`` may not leave, for a path given on the command line.

    The nearest enclosing (or the given) folder named ``profiles``, looking no higher than the
    repository top (a folder holding ``.git``); failing that, the folder given, or for a file its
    own folder. So ``profiles/team/a.yaml`` may extend ``../_bases/x.yaml``, and no profile can
    reach outside the tree it was checked in.
    """
    folder = path if path.is_dir() else path.parent
    folder = folder.resolve()
    for candidate in (folder, *folder.parents):
        if candidate.name == PROFILES_DIR:
            return candidate
        if (candidate / ".git").exists():
            break
    return folder


class ProfileLoader:
    """Loads profiles and follows ``extends``, parsing each shared base only once."""

    def __init__(self) -> None:
        self._cache: dict[Path, Document] = {}

    def _read(self, path: Path, display: str, *, keep: bool = True) -> Document:
        """``path``'s document, from the cache when read before. ``keep``: cache it. Only
        bases are kept: a profile is read once per run, and keeping each one held every
        document of a 10,000-cluster fleet (about 15 KB each) until its end (issue #37)."""
        key = real_path(path)
        doc = self._cache.get(key)
        if doc is None or doc.file != display:
            doc = read_document(path, display)
            if keep:
                self._cache[key] = doc
        return doc

    def load(self, path: Path, display: str, root: Path) -> Document:
        """Load ``path`` (shown to users as ``display``) with its whole ``extends`` chain."""
        return self._load(path, display, real_path(root), (real_path(path),), top=True)

    def _load(
        self,
        path: Path,
        display: str,
        root: Path,
        chain: tuple[Path, ...],
        *,
        top: bool = False,
    ) -> Document:
        doc = self._read(path, display, keep=not top)
        if "extends" not in doc.data:
            return doc
        target = doc.data["extends"]
        loc = doc.locate(("extends",))
        if not isinstance(target, str) or not target.strip() or not _plausible_path(target):
            raise ProfileError(
                loc,
                ("extends",),
                "extends must be a path to a base profile"
                + ("" if not isinstance(target, str) else f", not {_quote(target)}"),
                "e.g. extends: _bases/h100-fleet.yaml",
            )
        base = path.parent / target
        resolved = real_path(base)
        shown = os.path.normpath(os.path.join(os.path.dirname(display), target))
        if not resolved.is_relative_to(root):
            raise ProfileError(
                loc,
                ("extends",),
                f"base profile {target!r} is outside the profiles root {_rel(root)}",
                f"move the base under {_rel(root)}, e.g. into {_rel(root / '_bases')}",
            )
        if resolved in chain:
            cycle = " -> ".join(p.name for p in (*chain, resolved))
            raise ProfileError(
                loc, ("extends",), f"extends cycle: {cycle}", "remove one of the extends"
            )
        if not _is_file(resolved):
            raise ProfileError(
                loc,
                ("extends",),
                f"base profile {target!r} is a folder"
                if resolved.is_dir()
                else f"base profile {target!r} not found",
                "name a YAML file; extends is relative to the profile's own folder",
            )
        base_doc = self._load(base, shown, root, (*chain, resolved))
        own = Document(
            data={k: v for k, v in doc.data.items() if k != "extends"},
            where={p: w for p, w in doc.where.items() if p[:1] != ("extends",)},
            file=doc.file,
            written={p: t for p, t in doc.written.items() if p[:1] != ("extends",)},
        )
        return merge(base_doc, own)


#: The longest path and file name Linux opens (PATH_MAX, NAME_MAX).
_PATH_MAX = 4096
_NAME_MAX = 255


def _plausible_path(target: str) -> bool:
    """Whether ``target`` could name a file at all: no NUL, no name past the kernel's limits."""
    return (
        "\0" not in target
        and len(target.encode("utf-8", "surrogatepass")) < _PATH_MAX
        and all(
            len(part.encode("utf-8", "surrogatepass")) <= _NAME_MAX for part in target.split("/")
        )
    )


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):  # a link loop, a name too long: no file to extend
        return False


def _rel(path: Path) -> str:
    """A folder as users typed it: relative to the working directory when that is shorter."""
    try:
        shown = os.path.relpath(path)
    except ValueError:  # pragma: no cover - different drive on Windows
        return f"{path}/"
    return f"{shown if len(shown) < len(str(path)) else path}/"
