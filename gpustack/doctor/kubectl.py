"""The one place ``gpustack doctor`` talks to a cluster: ``kubectl get ... -o json``.

Read-only: the four kinds it lists need ``get``/``list`` on nodes, pods, daemonsets and events
in every namespace, nothing more. Isolated here so that the diagnosis runs on files in tests.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence

#: What ``doctor`` reads, and what a user records with ``kubectl ... > state.json``.
ARGS = ("get", "nodes,pods,daemonsets,events", "-A", "-o", "json")


class KubectlError(Exception):
    """kubectl is missing, failed or timed out; the message says which, in one line."""


def fetch(kubectl: str = "kubectl", extra: Sequence[str] = (), timeout: float = 60) -> str:
    """The cluster's state as JSON text (``extra``: e.g. ``--context``, ``--kubeconfig``)."""
    binary = shutil.which(kubectl)
    if binary is None:
        raise KubectlError(
            f"{kubectl} not found on PATH; record the state elsewhere with "
            f"`kubectl {' '.join(ARGS)} > state.json` and pass --state state.json"
        )
    try:
        done = subprocess.run(
            [binary, *extra, *ARGS], capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise KubectlError(f"kubectl did not answer within {timeout:.0f} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise KubectlError(f"kubectl failed (exit {done.returncode}): {last}")
    return done.stdout
