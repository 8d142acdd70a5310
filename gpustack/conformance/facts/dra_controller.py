"""A data table, and reads as one: each row is one property of NVIDIA's rendering of the
DRA driver's ComputeDomain controller, the file it was read from, and the check that holds
gpustack's output to it."""

from __future__ import annotations

from typing import Final

from gpustack.conformance import checks as c
from gpustack.conformance.row import (
    CD_GROUP,
    DRA_CONTROLLER,
    DRA_GOLDEN,
    Fact,
)
from gpustack.constructs import dra_driver as dra
from gpustack.kube.labels import CONTROL_PLANE


def _controller_image(r: c.Rendered) -> str | None:
    """IMAGE_NAME is the controller's own image: the IMEX daemons it starts run it."""
    ctr = r.container("compute-domain") or {}
    return c.env("compute-domain", "IMAGE_NAME", ctr.get("image", ""))(r)


FACTS: Final[tuple[Fact, ...]] = (
    # --- DRA driver: ComputeDomain controller -----------------------------------------------
    Fact(DRA_CONTROLLER, "containers", "one compute-domain container running"
         " compute-domain-controller", DRA_GOLDEN,
         c.command("compute-domain", "compute-domain-controller")),
    Fact(DRA_CONTROLLER, "replicas", "one replica", DRA_GOLDEN,
         c.workload_field(("spec", "replicas"), 1)),
    Fact(DRA_CONTROLLER, "env", "LEADER_ELECTION_ENABLED=false: one replica needs no lease",
         DRA_GOLDEN, c.env("compute-domain", "LEADER_ELECTION_ENABLED", "false")),
    Fact(DRA_CONTROLLER, "env", "IMAGE_NAME is the driver image: the IMEX daemon DaemonSets it"
         " creates run it", DRA_GOLDEN, _controller_image),
    Fact(DRA_CONTROLLER, "env", "NVIDIA_VISIBLE_DEVICES=void", DRA_GOLDEN,
         c.env("compute-domain", "NVIDIA_VISIBLE_DEVICES", "void")),
    Fact(DRA_CONTROLLER, "env", "POD_NAME and NAMESPACE from the downward API (the namespace"
         " it creates the daemons in)", DRA_GOLDEN, c.env("compute-domain", "NAMESPACE")),
    Fact(DRA_CONTROLLER, "env", "LOG_VERBOSITY_CD_DAEMON: the daemons' log level", DRA_GOLDEN,
         c.env("compute-domain", "LOG_VERBOSITY_CD_DAEMON", "4")),
    Fact(DRA_CONTROLLER, "env", "metrics at HTTP_ENDPOINT :8080", DRA_GOLDEN,
         c.env("compute-domain", "HTTP_ENDPOINT", ":8080")),
    Fact(DRA_CONTROLLER, "node selection", "prefers control-plane nodes and tolerates their"
         " taint and CriticalAddonsOnly", DRA_GOLDEN, c.prefers_node(CONTROL_PLANE)),
    Fact(DRA_CONTROLLER, "node selection", "tolerates the control-plane taint", DRA_GOLDEN,
         c.tolerates(CONTROL_PLANE)),
    Fact(DRA_CONTROLLER, "priority", "priorityClassName system-node-critical", DRA_GOLDEN,
         c.pod_field("priorityClassName", "system-node-critical")),
    Fact(DRA_CONTROLLER, "RBAC", f"runs as ServiceAccount {dra.CONTROLLER}", DRA_GOLDEN,
         c.pod_field("serviceAccountName", dra.CONTROLLER)),
    Fact(DRA_CONTROLLER, "RBAC", "reconciles ComputeDomains (update, status update)",
         DRA_GOLDEN, c.granted("ClusterRole", dra.CONTROLLER_CLUSTER_ROLE, CD_GROUP,
                               "computedomains/status", "update")),
    Fact(DRA_CONTROLLER, "RBAC", "creates each domain's ResourceClaimTemplates", DRA_GOLDEN,
         c.granted("ClusterRole", dra.CONTROLLER_CLUSTER_ROLE, "resource.k8s.io",
                   "resourceclaimtemplates", "create")),
    Fact(DRA_CONTROLLER, "RBAC", "removes a domain's labels from nodes (nodes update)",
         DRA_GOLDEN, c.granted("ClusterRole", dra.CONTROLLER_CLUSTER_ROLE, "", "nodes",
                               "update")),
    Fact(DRA_CONTROLLER, "RBAC", "creates one IMEX daemon DaemonSet per domain in its"
         " namespace (a Role, daemonsets create)", DRA_GOLDEN,
         c.granted("Role", dra.CONTROLLER_ROLE, "apps", "daemonsets", "create")),
    Fact(DRA_CONTROLLER, "RBAC", "updates the cliques of its domains (a Role)", DRA_GOLDEN,
         c.granted("Role", dra.CONTROLLER_ROLE, CD_GROUP, "computedomaincliques", "update")),
    Fact(DRA_CONTROLLER, "RBAC", f"the IMEX daemons' ServiceAccount {dra.DAEMON_SA} (the name"
         " is fixed in the image's daemon pod template)", DRA_GOLDEN,
         c.has_object("ServiceAccount", dra.DAEMON_SA)),
    Fact(DRA_CONTROLLER, "RBAC", "the IMEX daemons create and update their cliques", DRA_GOLDEN,
         c.granted("ClusterRole", dra.DAEMON_CLUSTER_ROLE, CD_GROUP, "computedomaincliques",
                   "create")),
)  # fmt: skip
