"""Where the node state comes from: a recorded file, stdin or ``kubectl`` (read-only).

The same input ``gpustack doctor`` reads (:mod:`gpustack.kube.kubectl`,
:mod:`gpustack.kube.state`): ``kubectl get nodes,pods,daemonsets,events -A -o json``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpustack import limits
from gpustack.kube import kubectl, state
from gpustack.kube.state import ClusterState
from gpustack.nodestate import aicr


class SourceError(Exception):
    """The state could not be read; the message says why in one line."""


def read(path: Path, source: str) -> ClusterState:
    """The state in the file ``path`` (``-``: standard input), read within the limits of a
    recorded state (:func:`gpustack.kube.state.read`)."""
    try:
        text = state.read(sys.stdin.buffer if str(path) == "-" else path, source)
    except state.StateError as exc:
        raise SourceError(str(exc)) from None
    return parse(text, source)


def parse(text: str, source: str) -> ClusterState:
    """A kubectl List (JSON), or an AICR snapshot (YAML or JSON, :mod:`.aicr`)."""
    try:
        data = limits.load_json(text, what=state.WHAT)
    except limits.Refused:
        data = None  # not JSON, or nested past Python's JSON reader: the YAML reader says which
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
