"""The one place ``gpustack doctor`` talks to a cluster: ``kubectl get ... -o json``.

Read-only: the kinds it lists need ``get``/``list`` on nodes, pods, daemonsets and events in
every namespace, and on Dynamic Resource Allocation's resourceclaims, resourceslices,
deviceclasses and devicetaintrules (``resource.k8s.io``), nothing more. A cluster without that
API (before 1.34, or with it turned off) makes kubectl refuse the whole list ("the server doesn't
have a resource type"), and so does a user who may not list them; then the list is asked again
without DeviceTaintRules (served only where device taints are: ``v1alpha3`` from 1.33,
``v1beta2`` from 1.36, behind the ``DRADeviceTaints`` gate), and then the four core kinds alone.
Isolated here so that the diagnosis runs on files in tests.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence

#: The kinds every cluster has, and those of Dynamic Resource Allocation (``resource.k8s.io``).
CORE_KINDS = "nodes,pods,daemonsets,events"
DRA_KINDS = "resourceclaims,resourceslices,deviceclasses"
#: Device taints' cluster-wide rules (KEP-5055), a kind of their own since few clusters serve it.
TAINT_KINDS = "devicetaintrules"
#: What ``doctor`` reads, and what a user records with ``kubectl ... > state.json``.
ARGS = ("get", f"{CORE_KINDS},{DRA_KINDS},{TAINT_KINDS}", "-A", "-o", "json")
#: The same without DeviceTaintRules, for clusters that serve DRA but not device taints.
DRA_ARGS = ("get", f"{CORE_KINDS},{DRA_KINDS}", "-A", "-o", "json")
#: The same without DRA, for clusters that do not serve ``resource.k8s.io``.
CORE_ARGS = ("get", CORE_KINDS, "-A", "-o", "json")
#: kubectl's words for a kind the API server does not serve.
_NOT_SERVED = "doesn't have a resource type"
#: The API group of the DRA kinds, as a refusal to list them names it ("resourceclaims.resource.
#: k8s.io is forbidden: User ... cannot list resource ...").
_DRA_GROUP = "resource.k8s.io"


def _without_dra(stderr: str) -> bool:
    """Whether kubectl failed only because of the DRA kinds: not served, or not permitted."""
    return _NOT_SERVED in stderr or (_DRA_GROUP in stderr and "forbidden" in stderr)


class KubectlError(Exception):
    """kubectl is missing, failed or timed out; the message says which, in one line."""


def fetch(
    kubectl: str = "kubectl",
    extra: Sequence[str] = (),
    timeout: float = 60,
    *,
    dra: bool = True,
) -> str:
    """The cluster's state as JSON text (``extra``: e.g. ``--context``, ``--kubeconfig``);
    ``dra=False`` reads the core kinds only, for a caller that needs no claims (and so no list
    permission on them)."""
    args = ARGS if dra else CORE_ARGS
    binary = shutil.which(kubectl)
    if binary is None:
        raise KubectlError(
            f"{kubectl} not found on PATH; record the state elsewhere with "
            f"`kubectl {' '.join(args)} > state.json` and pass --state state.json"
        )
    done = _run([binary, *extra, *args], timeout)
    for fallback in (DRA_ARGS, CORE_ARGS) if dra else ():
        if done.returncode == 0 or not _without_dra(done.stderr):
            break
        done = _run([binary, *extra, *fallback], timeout)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise KubectlError(f"kubectl failed (exit {done.returncode}): {last}")
    return done.stdout


def _run(argv: Sequence[str], timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise KubectlError(f"kubectl did not answer within {timeout:.0f} s") from None
