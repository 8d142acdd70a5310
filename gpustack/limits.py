"""Reading a file someone else wrote, within limits, before anything is built from it.

Every entry point reads files it did not write: profiles (``validate``, ``synth``, ``template``),
the team's manifests (``lint``), recorded cluster state (``doctor``) and the device plugin's
config. Files far outside their usual size and shape are mistakes or attacks, and each used to
cost something (issues #11 and #21): a FIFO made a command wait forever, ``/dev/zero`` (or a
committed link to it) filled the memory, a 40 MB file took minutes and gigabytes, 3,000 nested
``[`` gave a ``RecursionError`` traceback and a "billion laughs" file of nested aliases ran on
for a minute. So this one module is how all of them read: only regular files (a link is followed
to what it names, and refused unless that is a regular file), at most a given number of bytes,
and for YAML the event stream (flat, cheap) is checked for depth and node count before a node
tree is composed; a converter that expands aliases counts what it expands with :class:`Budget`.

Issue #33 found what the limits above left open: YAML values PyYAML's safe constructors reject
with plain Python errors (``2001-13-45``, a 4,301-digit integer, ``!!bool maybe``,
``!!timestamp x``) gave tracebacks, and so did readers that bypassed this module. So a YAML
scalar is constructed through :func:`scalar`, whole YAML documents are loaded through
:func:`load_yaml` (shape checked, aliases counted as expanded, constructor errors refused at
their line), and any file or ``-`` (standard input) is read as text through :func:`read_text`.
``tests/test_readers.py`` drives every file option of the command line through them.

Standard library and PyYAML only: the device plugin (whose image ships nothing else) uses it too.
It knows no file format's meaning; each caller turns :class:`Refused` into its own one-line
error, with its own limits where its files are larger (a state of a big cluster).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

#: Larger than any profile or plugin config (the biggest is a few KiB); checked before parsing.
MAX_BYTES = 1 << 20
#: Deeper than any profile, manifest or cluster state nests; checked before composing (and
#: while converting, where an alias of an enclosing node could nest without end).
MAX_DEPTH = 64


class Refused(Exception):
    """The file is outside the limits: ``message`` and ``hint`` at 1-based ``line``/``col``."""

    def __init__(self, message: str, hint: str | None = None, line: int = 1, col: int = 1):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.line = line
        self.col = col

    def __str__(self) -> str:
        return f"{self.message}; {self.hint}" if self.hint else self.message


def read_limited(path: str | Path, limit: int = MAX_BYTES, *, what: str = "profile") -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes (``what`` names
    the kind of file in the message, e.g. "no profile is that large")."""
    try:
        # O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise Refused(f"cannot read the file: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise Refused("this is a folder, not a file", f"name a {what} file")
        if not stat.S_ISREG(info.st_mode):
            raise Refused("not a regular file (a FIFO, socket or device)", f"name a {what} file")
        # the file may grow while it is read: stop past the limit
        return _read_past(lambda n: os.read(fd, n), limit, what)
    except OSError as exc:
        raise Refused(f"cannot read the file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_stream(stream: IO[bytes], limit: int = MAX_BYTES, *, what: str = "profile") -> bytes:
    """At most ``limit`` bytes of an open stream (standard input, which may be a pipe); refused
    past it without reading on (``yes | gpustack lint -`` would never end)."""
    try:
        return _read_past(lambda n: stream.read(min(1 << 16, n)), limit, what)
    except OSError as exc:
        raise Refused(f"cannot read: {exc.strerror or exc}") from None


def _read_past(read: Callable[[int], bytes], limit: int, what: str) -> bytes:
    """What ``read(n)`` (at most ``n`` bytes a call, ``b""`` at the end) gives until the end;
    refused as too large once it passes ``limit``, without reading on."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = read(limit + 1 - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        raise _too_large(limit, what)
    return b"".join(chunks)


def real_path(path: str | Path) -> Path:
    """``path`` with its links followed as far as they lead: ``Path.resolve`` raises
    ``RuntimeError`` on a link loop (Python 3.11) and ``ValueError`` on a NUL; this never
    raises, and reading the path then says what is wrong with it."""
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return Path(os.path.abspath(str(path).replace("\0", "")))


def read_text(
    source: str | Path | IO[bytes],
    limit: int = MAX_BYTES,
    *,
    what: str = "profile",
    lenient: bool = False,
) -> str:
    """The UTF-8 text of a file (``-`` is standard input) or an open binary stream, within
    ``limit`` bytes: the one way a command reads a file it did not write. ``lenient`` reads a
    bad byte as U+FFFD instead of refusing the file (a log, where only some lines matter)."""
    if isinstance(source, str | Path):
        if str(source) == "-":
            data = read_stream(sys.stdin.buffer, limit, what=what)
        else:
            data = read_limited(source, limit, what=what)
    else:
        data = read_stream(source, limit, what=what)
    return data.decode("utf-8", "replace") if lenient else decode(data)


def decode(data: bytes) -> str:
    """UTF-8 text, or :class:`Refused` naming the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(
            f"not UTF-8 text (bad byte at offset {exc.start})", "save the file as UTF-8"
        ) from None


def check_shape(
    text: str,
    loader: Any,
    *,
    max_values: int,
    max_depth: int = MAX_DEPTH,
    what: str = "profile",
) -> None:
    """Refuse nesting deeper than ``max_depth`` and more than ``max_values`` nodes, from the
    event stream; YAML syntax errors are raised as ``yaml.YAMLError`` for the caller."""
    depth = 0
    nodes = 0
    deep = Refused(
        f"values nest deeper than {max_depth} levels",
        f"no {what} nests this deep; is the file generated by mistake?",
    )
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > max_depth:
                    deep.line, deep.col = _where(event)
                    raise deep
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            if isinstance(event, yaml.NodeEvent):
                nodes += 1
                if nodes > max_values:
                    raise Refused(
                        f"the file holds more than {max_values} values",
                        f"no {what} is that large; is the file generated by mistake?",
                        *_where(event),
                    )
    except yaml.MarkedYAMLError as exc:
        # libyaml stops at 1,000 levels on its own, while looking ahead on one line, before
        # the events above reach the limit: the same refusal, where it stopped
        if "maximum nesting depth" not in str(exc.problem):
            raise
        mark = exc.problem_mark
        deep.line, deep.col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise deep from None


class Budget:
    """What a converter may still build: at most ``max_values`` values (aliases counted each
    time they are expanded), of them at most ``max_aliased`` inside an expanded alias, nested at
    most ``max_depth`` deep. :meth:`spend` raises :class:`Refused` at the node past a limit.

    The alias limit is what keeps a "billion laughs" file cheap where files may be large: a
    few lines of nested aliases are refused after ``max_aliased`` values, not ``max_values``.
    """

    def __init__(
        self,
        max_values: int,
        max_depth: int = MAX_DEPTH,
        *,
        max_aliased: int | None = None,
        what: str = "profile",
    ):
        self.left = max_values
        self.max_values = max_values
        self.max_aliased = max_values if max_aliased is None else max_aliased
        self.aliased_left = self.max_aliased
        self.max_depth = max_depth
        self.what = what
        self._seen: set[int] = set()

    def first_visit(self, node: object) -> bool:
        """Whether ``node`` (a composed YAML node) is converted for the first time; a second
        visit is an alias being expanded."""
        if id(node) in self._seen:
            return False
        self._seen.add(id(node))
        return True

    def spend(self, depth: int, line: int = 1, col: int = 1, *, aliased: bool = False) -> None:
        if depth > self.max_depth:  # an alias of an enclosing node nests without end
            raise Refused(f"values nest deeper than {self.max_depth} levels", None, line, col)
        self.left -= 1
        if aliased:
            self.aliased_left -= 1
        if self.left < 0 or self.aliased_left < 0:
            limit = self.max_values if self.left < 0 else self.max_aliased
            raise Refused(
                f"{'the file expands' if self.left < 0 else 'the aliases expand'} to more "
                f"than {limit} values",
                f"do not nest YAML aliases; no {self.what} is that large",
                line,
                col,
            )


#: What PyYAML's safe constructors raise, besides ``yaml.YAMLError``, on a value they cannot
#: build: ``datetime`` on ``2001-13-45`` (ValueError), ``int`` past 4,300 digits (ValueError),
#: ``!!bool maybe`` (KeyError), ``!!timestamp x`` (AttributeError on a failed match).
CONSTRUCTOR_ERRORS = (ValueError, KeyError, AttributeError, TypeError, OverflowError)
_SAFE = SafeConstructor()
#: Longest value a refusal quotes.
_QUOTED = 40


def scalar(node: ScalarNode) -> Any:
    """A YAML scalar with YAML's safe types; :class:`Refused` at the node for a tag that is not
    one of them or a value its constructor rejects."""
    construct = _SAFE.yaml_constructors.get(node.tag)
    line, col = _node_at(node)
    if construct is None:
        raise Refused(f"unsupported YAML tag {node.tag[:_QUOTED]}", "remove the tag", line, col)
    try:
        return construct(_SAFE, node)
    except (*CONSTRUCTOR_ERRORS, yaml.YAMLError):
        raise _unreadable(node) from None


def _unreadable(node: Node) -> Refused:
    text = str(node.value) if isinstance(node, ScalarNode) else ""
    shown = repr(text) if len(text) <= _QUOTED else f"{text[:_QUOTED]!r}... ({len(text)} chars)"
    tag = node.tag.rsplit(":", 1)[-1]
    return Refused(
        f"YAML cannot read {shown} as a {tag}",
        "quote the value to make it a string, or write a valid one",
        *_node_at(node),
    )


def _node_at(node: Node) -> tuple[int, int]:
    mark = node.start_mark
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BASE_LOADER):  # type: ignore[misc]
    """PyYAML's safe loader whose constructor errors are :class:`Refused` at their node."""

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (Refused, yaml.YAMLError):
            raise
        except RecursionError:  # a merge key that merges its own mapping
            raise Refused("a YAML merge key (<<) merges itself", None, *_node_at(node)) from None
        except CONSTRUCTOR_ERRORS:
            raise _unreadable(node) from None


def expanded(root: Node, budget: Budget, hint: str | None = None) -> None:
    """Refuse a composed document whose aliases expand past ``budget`` or into themselves,
    counting each node once however often it is reached (linear in the distinct nodes), so a
    converter that expands aliases never starts on a "billion laughs" file."""
    sizes: dict[int, int] = {}

    def size(node: Node, depth: int) -> int:
        known = sizes.get(id(node))
        if known is not None:
            if known < 0:  # an alias of an enclosing node: it nests without end
                raise Refused(
                    f"values nest deeper than {budget.max_depth} levels",
                    "a YAML alias refers to a value that holds it",
                    *_node_at(node),
                )
            return known
        if depth > budget.max_depth:
            raise Refused(
                f"values nest deeper than {budget.max_depth} levels", None, *_node_at(node)
            )
        sizes[id(node)] = -1
        total = 1
        if isinstance(node, SequenceNode):
            total += sum(size(child, depth + 1) for child in node.value)
        elif isinstance(node, MappingNode):
            total += sum(size(k, depth + 1) + size(v, depth + 1) for k, v in node.value)
        sizes[id(node)] = total
        if total > budget.max_aliased:
            raise Refused(
                f"the file expands to more than {budget.max_aliased} values",
                hint or f"do not nest YAML aliases; no {budget.what} is that large",
                *_node_at(node),
            )
        return total

    size(root, 0)


def syntax_error_at(exc: yaml.MarkedYAMLError) -> tuple[int, int, str]:
    """Where a YAML syntax error is (1-based line and column of its mark; 1, 1 where PyYAML gives
    none) and what it is, as every reader of YAML files reports it."""
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    return line, col, " ".join(p for p in (exc.problem, exc.context) if p) or "syntax error"


def load_yaml(
    text: str, *, max_values: int, max_depth: int = MAX_DEPTH, what: str = "profile"
) -> Iterator[Any]:
    """The documents of ``text`` as plain data (safe tags only), each checked first: shape
    (:func:`check_shape`), aliases expanded at most ``max_values`` values deep, every value
    constructible. Refuses with :class:`Refused`; YAML syntax errors stay ``yaml.YAMLError``."""
    check_shape(text, _BASE_LOADER, max_values=max_values, max_depth=max_depth, what=what)
    loader = _Loader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            expanded(node, Budget(max_values, max_depth, what=what))
            yield loader.construct_document(node)
    finally:
        loader.dispose()


def load_yaml_one(
    text: str, *, max_values: int, max_depth: int = MAX_DEPTH, what: str = "profile"
) -> Any:
    """The first document of ``text`` (``None`` when there is none), as :func:`load_yaml`."""
    for doc in load_yaml(text, max_values=max_values, max_depth=max_depth, what=what):
        return doc
    return None


def load_json(text: str, *, what: str) -> Any:
    """``json.loads`` with a one-line :class:`Refused` for what it cannot read: Python's
    decoder recurses once per level and raises ``RecursionError`` past about a thousand."""
    try:
        return json.loads(text)
    except RecursionError:
        raise Refused(
            "values nest deeper than Python can read",
            f"no {what} nests this deep; is the file generated by mistake?",
        ) from None
    except ValueError as exc:
        line, col = getattr(exc, "lineno", 1), getattr(exc, "colno", 1)
        raise Refused(f"not JSON ({getattr(exc, 'msg', exc)})", None, line, col) from None


def _too_large(limit: int, what: str) -> Refused:
    return Refused(
        f"file is larger than {_size(limit)}; no {what} is that large",
        "is it the file you meant?",
    )


def _where(event: yaml.Event) -> tuple[int, int]:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n % (1 << 20) == 0 else f"{n} bytes"
