"""Where the node state comes from: a recorded file, stdin or ``kubectl`` (read-only).

The same input ``gpustack doctor`` reads (:mod:`gpustack.doctor.kubectl`,
:mod:`gpustack.doctor.state`): ``kubectl get nodes,pods,daemonsets,events -A -o json``.
"""

from __future__ import annotations

import json

from gpustack.doctor import kubectl, state
from gpustack.doctor.state import ClusterState
from gpustack.nodestate import aicr


class SourceError(Exception):
    """The state could not be read; the message says why in one line."""


def parse(text: str, source: str) -> ClusterState:
    """A kubectl List (JSON), or an AICR snapshot (YAML or JSON, :mod:`.aicr`)."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    try:
        if aicr.is_snapshot(data):
            return aicr.to_state(data, source)
        if data is None:
            found = aicr.parse(text, source)
            if found is not None:
                return found
        return state.load(text, source)
    except (state.StateError, aicr.SnapshotError) as exc:
        raise SourceError(str(exc)) from None


def from_kubectl(context: str | None = None) -> ClusterState:
    try:
        # the node rules read no claims: the core kinds, and no permission on resource.k8s.io
        text = kubectl.fetch(extra=["--context", context] if context else [], dra=False)
    except kubectl.KubectlError as exc:
        raise SourceError(str(exc)) from None
    return parse(text, "kubectl")
