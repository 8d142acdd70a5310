"""How a node-state finding names the nodes that disagree: grouped by the value they have.

Every check (:mod:`.checks`, :mod:`.gpus`, :mod:`.host_driver`) words its finding the same way:
what the profile says, then ``node gpu-1 has X; nodes gpu-2, gpu-3 have Y``, a long list cut
short. :func:`mismatch` does it for a check that compares one value per node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from gpustack.kube.state import JSON, name
from gpustack.profile.document import JsonPath
from gpustack.profile.finding import Finding

#: How many node names a message lists before it counts the rest.
_SHOWN = 4


def names(nodes: Iterable[JSON]) -> str:
    """``gpu-1, gpu-2`` (``gpu-1, ..., and 12 more`` past a few)."""
    shown = sorted(name(n) for n in nodes)
    more = len(shown) - _SHOWN
    head = ", ".join(shown[:_SHOWN])
    return f"{head}, and {more} more" if more > 0 else head


def node_word(count: int) -> str:
    return "node" if count == 1 else "nodes"


def grouped(nodes: Iterable[JSON], value: Callable[[JSON], object]) -> dict[object, list[JSON]]:
    """The nodes by the value they have, skipping those where it is ``None``, in the order the
    values first appear."""
    out: dict[object, list[JSON]] = {}
    for node in nodes:
        found = value(node)
        if found is not None:
            out.setdefault(found, []).append(node)
    return out


def have(groups: dict[object, list[JSON]], show: Callable[[object], str]) -> str:
    """``node gpu-1 has X; nodes gpu-2, gpu-3 have Y``."""
    parts = []
    for value, nodes in groups.items():
        verb = "has" if len(nodes) == 1 else "have"
        parts.append(f"{node_word(len(nodes))} {names(nodes)} {verb} {show(value)}")
    return "; ".join(parts)


def mismatch(
    at: JsonPath,
    nodes: Iterable[JSON],
    value: Callable[[JSON], object],
    wrong: Callable[[object], bool],
    show: Callable[[object], str],
    what: str,
    hint: str,
) -> Iterator[Finding]:
    groups = {v: ns for v, ns in grouped(nodes, value).items() if wrong(v)}
    if groups:
        yield Finding(at, f"{what}, but {have(groups, show)}", hint)
