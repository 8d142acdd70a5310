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
from collections.abc import Mapping
from typing import Any

import yaml

from gpustack.emitters import libyaml_may_differ
from gpustack.synth.quoting import ambiguous
from gpustack.synth.yaml_text import emit

#: Larger than any line we emit: PyYAML folds long scalars at ``width`` otherwise.
_NO_FOLD = 2**31 - 1


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


def dump_yaml(
    document: Mapping[str, Any], dumper: type[Any] | None = None, *, shared: bool = False
) -> bytes:
    """Serialize one document; raises ``yaml.YAMLError`` for values YAML can't represent.

    By default with the direct writer (:mod:`gpustack.synth.yaml_text`, the same bytes as the
    pure emitter, several times faster than libyaml), and with the pure emitter, the reference,
    for a document outside the direct writer's subset. With a ``dumper``, with that one; where
    libyaml's text may differ from the pure emitter's (:mod:`gpustack.emitters`), the document
    is written again with the pure one. ``shared``: see :func:`gpustack.synth.yaml_text.emit`."""
    if dumper is None:
        direct = emit(document, shared=shared)
        # not libyaml: it writes some documents outside the subset differently (a long key)
        text = _emit(document, PURE_DUMPER) if direct is None else direct
        return text.encode("utf-8")
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
