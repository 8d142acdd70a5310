"""Read Kubernetes manifests: multi-document YAML, with the position of every value.

Why not ``yaml.safe_load_all``: it forgets where a value was written. Here each document is
composed into nodes and converted by hand, as :mod:`gpustack.profile.loader` does for profiles;
a node's mark is its position in the whole stream, so a finding in the third document of a
``helm template`` output points at the right line of the file. ``kind: List`` documents (what
``kubectl get -o yaml`` prints) are split into their items.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from gpustack import limits
from gpustack.profile.document import JsonPath, Loc

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE_TAG = "tag:yaml.org,2002:merge"
SUFFIXES = (".yaml", ".yml")
#: Stands for standard input among the paths, as in ``helm template . | gpustack lint -``.
STDIN = "-"
#: Bounds on one file (``helm template`` of a large chart is a few MiB, nested about fifteen
#: levels): past them the file is one load error before PyYAML builds anything.
MAX_BYTES = 8 << 20
MAX_VALUES = 250_000
#: Values inside expanded aliases: manifests seldom use aliases at all (Helm and kubectl write
#: none), and a few lines of nested ones must not cost a quarter of a million values.
MAX_ALIASED = 10_000
_WHAT = "manifest"


class ManifestError(Exception):
    """A file that is no YAML (or cannot be read), located."""

    def __init__(self, loc: Loc, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class Manifest:
    """One Kubernetes object: its data and where each JSON path (from the object) was written.

    ``base`` is the object's path inside its document: ``()``, or ``("items", 3)`` for an item
    of a ``kind: List``; :meth:`locate` takes paths relative to the object.
    """

    data: dict[str, Any]
    where: dict[JsonPath, Loc]
    file: str
    base: JsonPath = ()

    @property
    def kind(self) -> str:
        kind = self.data.get("kind")
        return kind if isinstance(kind, str) else ""

    @property
    def name(self) -> str:
        meta = self.data.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        return name if isinstance(name, str) else "?"

    def locate(self, path: JsonPath) -> Loc:
        """Position of ``path``, or of its nearest written ancestor (a missing key is reported
        where its parent is)."""
        full = (*self.base, *path)
        for end in range(len(full), -1, -1):
            found = self.where.get(full[:end])
            if found is not None:
                return found
        return (self.file, 1, 1)


def _loc(file: str, node: Node) -> Loc:
    mark = node.start_mark
    return (file, mark.line + 1, mark.column + 1)


def _scalar(node: ScalarNode) -> Any:
    """The value with YAML's safe types; a custom tag or a value its type cannot hold keeps its
    text (a linter need not refuse what the API server would read as a string)."""
    try:
        return limits.scalar(node)
    except limits.Refused:
        return node.value


def _convert(
    node: Node,
    file: str,
    path: JsonPath,
    where: dict[JsonPath, Loc],
    budget: limits.Budget,
    depth: int = 0,
    aliased: bool = False,
) -> Any:
    """Plain data of ``node``; ``depth`` counts nested calls (a merge key adds one without
    lengthening the path, and ``<<: *x`` inside ``x`` would merge without end); ``aliased``:
    inside an alias being expanded (counted apart, see :class:`~gpustack.limits.Budget`)."""
    mark = node.start_mark
    aliased = aliased or not budget.first_visit(node)
    budget.spend(depth, mark.line + 1, mark.column + 1, aliased=aliased)
    where[path] = _loc(file, node)
    if isinstance(node, ScalarNode):
        return _scalar(node)
    if isinstance(node, SequenceNode):
        return [
            _convert(item, file, (*path, i), where, budget, depth + 1, aliased)
            for i, item in enumerate(node.value)
        ]
    if isinstance(node, MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                merged = _convert(value_node, file, path, {}, budget, depth + 1, aliased)
                for k, v in merged.items() if isinstance(merged, dict) else ():
                    out.setdefault(k, v)
                continue
            name = _scalar(key_node) if isinstance(key_node, ScalarNode) else None
            if name is None:
                continue
            child = name if isinstance(name, str) else str(name)
            out[child] = _convert(
                value_node, file, (*path, child), where, budget, depth + 1, aliased
            )
        return out
    return None  # pragma: no cover - composer yields only the three node kinds


def parse(text: str, display: str) -> list[Manifest]:
    """Every object in ``text`` (shown as ``display``); empty documents are skipped.

    Raises :class:`ManifestError` when the text is not YAML or outside the limits.
    """
    try:
        limits.check_shape(text, _Loader, max_values=MAX_VALUES, what=_WHAT)
    except limits.Refused as exc:
        raise _refused(display, exc) from None
    except yaml.YAMLError:
        pass  # composing below reports it, with its position
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
    except yaml.MarkedYAMLError as exc:
        line, col, problem = limits.syntax_error_at(exc)
        raise ManifestError((display, line, col), f"invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ManifestError((display, 1, 1), f"invalid YAML: {exc}") from None
    out: list[Manifest] = []
    budget = limits.Budget(MAX_VALUES, max_aliased=MAX_ALIASED, what=_WHAT)
    for node in nodes:
        if node is None:
            continue
        where: dict[JsonPath, Loc] = {}
        try:
            data = _convert(node, display, (), where, budget)
        except limits.Refused as exc:
            raise _refused(display, exc) from None
        if not isinstance(data, dict):
            continue  # a scalar or list document is no Kubernetes object
        items = data.get("items")
        kind = data.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
            out += [
                Manifest(item, where, display, ("items", i))
                for i, item in enumerate(items)
                if isinstance(item, dict)
            ]
        else:
            out.append(Manifest(data, where, display))
    return out


def discover(paths: Sequence[str]) -> Iterator[str]:
    """Files to lint, in order: files as given, ``-`` as is, folders searched recursively for
    ``*.yaml``/``*.yml`` (sorted), skipping names that start with ``.``.

    Raises ``FileNotFoundError`` for a path that does not exist.
    """
    for given in paths:
        if given == STDIN:
            yield given
            continue
        path = Path(given)
        if path.is_dir():
            for found in sorted(path.rglob("*")):
                hidden = any(p.startswith(".") for p in found.relative_to(path).parts)
                if found.suffix in SUFFIXES and found.is_file() and not hidden:
                    yield str(found)
        elif path.exists():
            yield given
        else:
            raise FileNotFoundError(given)


def read(path: str, stdin: str | None = None) -> list[Manifest]:
    """The objects of one file (``-``: ``stdin``, shown as ``<stdin>``), a regular file within
    :data:`MAX_BYTES` (:mod:`gpustack.limits`)."""
    if path == STDIN:
        return parse(stdin or "", "<stdin>")
    try:
        text = limits.decode(limits.read_limited(path, MAX_BYTES, what=_WHAT))
    except limits.Refused as exc:
        raise _refused(path, exc) from None
    return parse(text, path)


def read_stdin(stream: IO[bytes]) -> str:
    """Standard input as text, within the limits of a file; :class:`ManifestError` otherwise."""
    try:
        return limits.decode(limits.read_stream(stream, MAX_BYTES, what=_WHAT))
    except limits.Refused as exc:
        raise _refused("<stdin>", exc) from None


def _refused(display: str, exc: limits.Refused) -> ManifestError:
    return ManifestError((display, exc.line, exc.col), exc.message, exc.hint)
