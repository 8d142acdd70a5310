"""Where the node state comes from: a recorded file, stdin or ``kubectl`` (read-only).

The same input ``gpustack doctor`` reads (:mod:`gpustack.doctor.kubectl`,
:mod:`gpustack.doctor.state`): ``kubectl get nodes,pods,daemonsets,events -A -o json``.
"""

from __future__ import annotations

from gpustack.doctor import kubectl, state
from gpustack.doctor.state import ClusterState


class SourceError(Exception):
    """The state could not be read; the message says why in one line."""


def parse(text: str, source: str) -> ClusterState:
    """A kubectl List (JSON)."""
    try:
        return state.load(text, source)
    except state.StateError as exc:
        raise SourceError(str(exc)) from None


def from_kubectl(context: str | None = None) -> ClusterState:
    try:
        text = kubectl.fetch(extra=["--context", context] if context else [])
    except kubectl.KubectlError as exc:
        raise SourceError(str(exc)) from None
    return parse(text, "kubectl")
