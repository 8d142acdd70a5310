"""Rules on how ``cluster.nodeSelector`` is spelled: keys some labeller writes, values it writes.

Why: a selector is a valid label map whatever it says, so ``nvidia.com/gpu.presnt: "true"`` or
``nvidia.com/gpu.present: "ture"`` passes the schema and moves the whole stack onto zero nodes,
which shows only as DaemonSets with nothing desired. :mod:`gpustack.profile.node_label_catalog`
lists who writes which node label; a key nobody in it writes is a finding with the spelling that
was probably meant (a team that labels its nodes itself accepts the finding on that line), and a
known label with a value its labeller never writes is an error.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.profile import node_label_catalog as catalog
from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile


def node_selector_label_known(p: Profile) -> Iterator[Finding]:
    for key, _ in p.cluster.node_selector:
        if catalog.lookup(key) is not None:
            continue
        guess = catalog.suggest(key)
        mean = f" (did you mean {guess}?)" if guess else ""
        if key.startswith(catalog.OWNED_DOMAINS):
            what = (
                f"no labeller writes the node label {key}{mean}: no node carries it, so the"
                " stack runs on none"
            )
        else:
            what = (
                f"gpustack knows no labeller that writes the node label {key}{mean}: unless"
                " something puts it on the GPU nodes, the stack runs on none"
            )
        fix = f"write {guess}" if guess else "select a label your GPU nodes carry"
        yield Finding(
            ("cluster", "nodeSelector", key),
            what,
            f"{fix}, or accept this finding if your team labels the nodes with it",
            at_key=True,
        )


def node_selector_label_value(p: Profile) -> Iterator[Finding]:
    for key, value in p.cluster.node_selector:
        known = catalog.lookup(key)
        if known is None or known.values is None or value in known.values:
            continue
        allowed = " or ".join(repr(v) for v in known.values)
        guess = catalog.suggest_value(value, known.values)
        mean = f" (did you mean {guess!r}?)" if guess else ""
        yield Finding(
            ("cluster", "nodeSelector", key),
            f"{known.source} writes {key} only as {allowed}, never {value!r}{mean}, so no node"
            " matches",
            f"set it to {guess or known.values[0]!r}",
        )
