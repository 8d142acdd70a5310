"""Rules on the GPU nodes' taints: the stack's own pods must be able to land on those nodes.

Why: ``cluster.nodeTaints`` says what the GPU nodes carry, ``cluster.tolerations`` what the
stack's pods tolerate. A blocking taint (``NoSchedule``, ``NoExecute``) that no toleration
matches keeps every DaemonSet pod of the stack off every GPU node: the driver, toolkit and device
plugin never start, and nothing says why but the scheduler's "untolerated taint".
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.profile.finding import Finding
from gpustack.profile.model import Profile

#: Effects that keep a pod off a node (PreferNoSchedule only discourages).
BLOCKING = ("NoSchedule", "NoExecute")


def tolerations_cover_node_taints(p: Profile) -> Iterator[Finding]:
    for i, taint in enumerate(p.cluster.node_taints):
        if taint.effect not in BLOCKING:
            continue
        if any(
            taint.tolerated_by(t.key, t.operator, t.value, t.effect) for t in p.cluster.tolerations
        ):
            continue
        yield Finding(
            ("cluster", "nodeTaints", i),
            f"no entry of cluster.tolerations tolerates the GPU nodes' taint {taint.key}"
            f"{'=' + taint.value if taint.value else ''}:{taint.effect}, so no pod of the stack"
            " lands on a GPU node",
            f"add to cluster.tolerations: {{key: {taint.key}, operator: Exists, effect:"
            f" {taint.effect}}}",
        )
