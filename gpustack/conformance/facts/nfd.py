"""A data table, and reads as one: each row is one property of NVIDIA's rendering of Node
Feature Discovery's worker, the file it was read from, and the check that holds gpustack's output
to it."""

from __future__ import annotations

from typing import Final

from gpustack.conformance import checks as c
from gpustack.conformance.row import (
    FEATURES_D,
    NFD,
    NFD_OPERAND,
    NFD_WORKER,
    Fact,
    src,
)

FACTS: Final[tuple[Fact, ...]] = (
    # --- Node Feature Discovery worker ----------------------------------------------------
    Fact(NFD_OPERAND, "node selection", "the worker runs on every node: a node is"
         " known to have a GPU only after it ran there", NFD_WORKER, c.no_node_selection()),
    Fact(NFD_OPERAND, "host paths", "the host's /sys, /boot, /etc/os-release,"
         " /usr/lib and /lib (read-only feature sources)", NFD_WORKER,
         c.host_path(NFD, "/sys", at="/host-sys")),
    Fact(NFD_OPERAND, "host paths", "features.d, read-only (GFD's labels)",
         NFD_WORKER, c.host_path(NFD, FEATURES_D)),
    Fact(NFD_OPERAND, "env", "POD_NAME and POD_UID: the NodeFeature's owner"
         " references (default pod and ds from v0.19.0)", NFD_WORKER, c.env(NFD, "POD_UID")),
    Fact(NFD_OPERAND, "probes", "liveness on /healthz", NFD_WORKER,
         c.probe(NFD, "livenessProbe", path="/healthz")),
    Fact(NFD_OPERAND, "RBAC", "the worker creates and updates its NodeFeature",
         src("deployments/gpu-operator/charts/node-feature-discovery/templates/role.yaml"),
         c.granted("Role", "gpustack-nfd-worker", "nfd.k8s-sigs.io", "nodefeatures", "update")),
)  # fmt: skip
