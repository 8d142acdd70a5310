"""Which component gets which ServiceAccount and RBAC rules, read from the constructs' own
declarations, and the tables the README and ``docs/reference/api-access.md`` show of them.

The rules are the tuples the constructs synthesize the (Cluster)Roles from (with the default
releases of the driver and MIG managers, whose rules depend on the release); the names are the
constructs' constants. Nothing here is restated: a rule added to a construct appears here.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpustack.constructs import common, dra_driver, driver, driver_manager, mig_manager, nfd
from gpustack.constructs.rbac import Access, markdown_table
from gpustack.profile.model import DriverUpgrade, MigManager


@dataclass(frozen=True)
class Grant:
    """One (Cluster)Role gpustack synthesizes and the ServiceAccount it is bound to."""

    component: str
    service_account: str
    kind: str  # ClusterRole or Role
    role: str
    rules: tuple[Access, ...]


def grants() -> tuple[Grant, ...]:
    """Every role gpustack may synthesize, in the order the docs show them."""
    stack_accounts = "all of the stack's namespace (group `system:serviceaccounts:<namespace>`)"
    return (
        Grant(
            "driver manager (driver pod's init containers)",
            f"`{driver.NAME}`",
            "ClusterRole",
            driver_manager.CLUSTER_ROLE,
            driver_manager.rules(DriverUpgrade().version),
        ),
        Grant("NFD worker", f"`{nfd.WORKER}`", "Role", nfd.WORKER_ROLE, nfd.WORKER_RULES),
        Grant("NFD master", f"`{nfd.MASTER}`", "ClusterRole", nfd.MASTER_ROLE, nfd.MASTER_RULES),
        Grant("NFD garbage collector", f"`{nfd.GC}`", "ClusterRole", nfd.GC_ROLE, nfd.GC_RULES),
        Grant(
            "MIG manager",
            f"`{mig_manager.NAME}`",
            "ClusterRole",
            mig_manager.CLUSTER_ROLE,
            mig_manager.cluster_rules(MigManager().version),
        ),
        Grant(
            "MIG manager",
            f"`{mig_manager.NAME}`",
            "Role",
            mig_manager.ROLE,
            mig_manager.RULES,
        ),
        Grant("OpenShift only", stack_accounts, "Role", common.SCC_ROLE, common.SCC_RULES),
        *_dra_grants(),
    )


def _dra_grants() -> tuple[Grant, ...]:
    """NVIDIA's DRA driver (``dra``): the kubelet plugin's roles, then the ComputeDomain
    controller's and the IMEX daemons' (those only with ``dra.computeDomains``)."""
    d = dra_driver
    plugin, domains = "DRA kubelet plugin", "DRA kubelet plugin, ComputeDomains only"
    plugin_sa = f"`{d.KUBELET_PLUGIN_SA}`"
    controller = "DRA ComputeDomain controller"
    daemon = "DRA IMEX daemons (ComputeDomains only)"
    return (
        Grant(
            plugin, plugin_sa, "ClusterRole", d.KUBELET_PLUGIN_CLUSTER_ROLE, d.KUBELET_PLUGIN_RULES
        ),
        Grant(
            domains,
            plugin_sa,
            "ClusterRole",
            d.KUBELET_PLUGIN_CD_CLUSTER_ROLE,
            d.KUBELET_PLUGIN_CD_RULES,
        ),
        Grant(domains, plugin_sa, "Role", d.KUBELET_PLUGIN_ROLE, d.KUBELET_PLUGIN_CD_NAMESPACED),
        Grant(
            controller,
            f"`{d.CONTROLLER}`",
            "ClusterRole",
            d.CONTROLLER_CLUSTER_ROLE,
            d.CONTROLLER_RULES,
        ),
        Grant(controller, f"`{d.CONTROLLER}`", "Role", d.CONTROLLER_ROLE, d.CONTROLLER_NAMESPACED),
        Grant(daemon, f"`{d.DAEMON_SA}`", "ClusterRole", d.DAEMON_CLUSTER_ROLE, d.DAEMON_RULES),
    )


def _compact(rules: tuple[Access, ...]) -> str:
    parts = []
    for r in rules:
        group = f"{r.api_group}/" if r.api_group else ""
        names = f" ({', '.join(r.names)})" if r.names else ""
        many = len(r.resources) > 1
        listed = ",".join(r.resources)
        resources = f"{group}{{{listed}}}" if many else f"{group}{listed}"
        parts.append(f"`{resources}`{names}: {', '.join(r.verbs)}")
    return "; ".join(parts)


def readme_table() -> str:
    """The README's compact table: component, ServiceAccount, role, its rules in one cell."""
    lines = [
        "| Component | ServiceAccount | Role | Rules |",
        "|---|---|---|---|",
    ]
    for g in grants():
        role = f"{g.kind} `{g.role}`"
        lines.append(f"| {g.component} | {g.service_account} | {role} | {_compact(g.rules)} |")
    return "\n".join(lines)


def section_key(g: Grant) -> str:
    """The marker name of ``g``'s table on the API access page (kind and name: the MIG
    manager's ClusterRole and Role share their name)."""
    return f"{g.kind.lower()}/{g.role}"


def page_table(g: Grant) -> str:
    """``g``'s detailed table (API group, resources, verbs, why) for the API access page."""
    return markdown_table(g.rules)
