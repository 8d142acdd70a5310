"""Render manifests as byte-stable YAML.

Reviewers read these files in pull requests, and Argo CD / Flux diff them, so the same object must
always give the same bytes: keys keep the order cdk8s produced (it already sorts them), lines are
never folded, multi-line strings use literal blocks (readable ConfigMap payloads), no anchors or
aliases appear even when a dict is shared, line endings are LF and the file ends with one newline.
Single-document files carry no ``---`` marker. A string that any YAML reader (1.1 or 1.2) could
take for a number, boolean or null is quoted, so ``kubectl kustomize`` and Argo CD read what was
meant. Only JSON data types are accepted: a set or a date in a manifest is a bug upstream, not
something to render as a YAML-only tag.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Any

import yaml

from gpustack.emitters import libyaml_may_differ

#: Larger than any line we emit: PyYAML folds long scalars at ``width`` otherwise.
_NO_FOLD = 2**31 - 1


#: Plain scalars that some YAML reader takes for a number, though PyYAML (YAML 1.1 as PyYAML
#: implements it) reads them as strings: YAML 1.2 octals and binaries (``0o17``, ``0b101``),
#: exponents without a dot (``5E10``), decimals with a leading zero (``0859``, read by Go's
#: yaml.v3 as a float, so ``kubectl kustomize`` turns the string into ``859``), underscores
#: (``1_000``), sexagesimal (``190:20:30``, YAML 1.1), hex and timestamps.
_NUMBER_LIKE = re.compile(
    r"[-+]?("
    r"0b[01_]+|0o[0-7_]+|0x[0-9a-fA-F_]+"
    r"|[0-9][0-9_]*(:[0-5]?[0-9])*(\.[0-9_]*)?([eE][-+]?[0-9]+)?"
    r"|\.[0-9][0-9_]*([eE][-+]?[0-9]+)?"
    r"|\.(inf|Inf|INF)"
    r")|\.(nan|NaN|NAN)"
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt \t].*)?"  # a YAML 1.1 timestamp
)
#: Words a YAML 1.1 or 1.2 reader takes for a boolean or null (YAML 1.1's ``y``/``n`` too,
#: which PyYAML leaves out but Go's yaml.v2 and others read as booleans).
_WORDS = frozenset(
    spelling
    for word in ("y", "yes", "n", "no", "true", "false", "on", "off", "null")
    for spelling in (word, word.capitalize(), word.upper())
) | {"~", ""}


def ambiguous(value: str) -> bool:
    """Whether any YAML reader (1.1 or 1.2, PyYAML, libyaml, Go's yaml.v2/v3) could read
    ``value``, written plain, as something other than this string."""
    return value in _WORDS or _NUMBER_LIKE.fullmatch(value) is not None


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        # PyYAML falls back to a quoted style by itself when a literal block can't hold the value
        # exactly (e.g. trailing spaces on a line), so this never changes the data.
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    if ambiguous(value):
        # PyYAML quotes what its own resolver would misread, not what other readers would
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="'")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


def _represent_tuple(dumper: yaml.SafeDumper, value: tuple[Any, ...]) -> yaml.SequenceNode:
    return dumper.represent_list(list(value))


def _refuse(dumper: yaml.SafeDumper, value: Any) -> yaml.Node:
    # Manifests are JSON data: YAML-only types (!!set, !!binary, !!timestamp) mean a bug upstream.
    raise yaml.representer.RepresenterError(
        f"{type(value).__name__} is not JSON data (only str, number, bool, null, list, map)"
    )


def _stable(base: type[Any]) -> type[Any]:
    """``base`` without aliases, with literal blocks and with only JSON data types."""

    class Stable(base):  # type: ignore[misc]
        def ignore_aliases(self, data: Any) -> bool:
            return True

    Stable.add_representer(str, _represent_str)
    Stable.add_representer(tuple, _represent_tuple)
    for refused in (set, frozenset, bytes, bytearray, datetime.date, datetime.datetime):
        Stable.add_representer(refused, _refuse)
    return Stable


#: The pure-Python emitter: the reference output.
PURE_DUMPER = _stable(yaml.SafeDumper)
#: libyaml's emitter when PyYAML was built with it: ~8x faster, and tests check that it writes
#: the very same bytes as the pure one, so output never depends on how PyYAML was installed.
FAST_DUMPER = _stable(yaml.CSafeDumper) if yaml.__with_libyaml__ else PURE_DUMPER


def dump_yaml(document: Mapping[str, Any], dumper: type[Any] = FAST_DUMPER) -> bytes:
    """Serialize one document; raises ``yaml.YAMLError`` for values YAML can't represent.

    Where libyaml's text may differ from the pure emitter's (:mod:`gpustack.emitters`), the
    document is written again with the pure one, the reference."""
    text = _emit(document, dumper)
    if dumper is not PURE_DUMPER and libyaml_may_differ(text):
        text = _emit(document, PURE_DUMPER)
    return text.encode("utf-8")


def _emit(document: Mapping[str, Any], dumper: type[Any]) -> str:
    text: str = yaml.dump(
        dict(document),
        Dumper=dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=_NO_FOLD,
        line_break="\n",
        explicit_start=False,
    )
    return text
