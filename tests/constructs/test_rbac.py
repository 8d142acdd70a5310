"""API access is documented: each (Cluster)Role gpustack synthesizes has exactly the rules of its
component's table, and the docs show that very table (rendered from the same constant)."""

from __future__ import annotations

import pytest

from gpustack.constructs import common, dra_driver, driver_manager, mig_manager, nfd
from gpustack.constructs.rbac import Access, markdown_table
from gpustack.docsite import access
from gpustack.docsite.pages import API_ACCESS
from gpustack.profile.model import DriverUpgrade, MigManager

from .conftest import Synth, find, profile

#: Every role name gpustack may synthesize -> the rules its component declares.
DOCUMENTED: dict[str, tuple[Access, ...]] = {
    driver_manager.CLUSTER_ROLE: driver_manager.rules(DriverUpgrade().version),
    nfd.WORKER_ROLE: nfd.WORKER_RULES,
    nfd.MASTER_ROLE: nfd.MASTER_RULES,
    nfd.GC_ROLE: nfd.GC_RULES,
    mig_manager.CLUSTER_ROLE: mig_manager.cluster_rules(MigManager().version),
    mig_manager.ROLE: mig_manager.RULES,
    common.SCC_ROLE: common.SCC_RULES,
    dra_driver.KUBELET_PLUGIN_CLUSTER_ROLE: dra_driver.KUBELET_PLUGIN_RULES,
    dra_driver.KUBELET_PLUGIN_CD_CLUSTER_ROLE: dra_driver.KUBELET_PLUGIN_CD_RULES,
    dra_driver.KUBELET_PLUGIN_ROLE: dra_driver.KUBELET_PLUGIN_CD_NAMESPACED,
    dra_driver.CONTROLLER_CLUSTER_ROLE: dra_driver.CONTROLLER_RULES,
    dra_driver.CONTROLLER_ROLE: dra_driver.CONTROLLER_NAMESPACED,
    dra_driver.DAEMON_CLUSTER_ROLE: dra_driver.DAEMON_RULES,
}


@pytest.mark.parametrize("role", list(DOCUMENTED))
def test_docs_document_each_role_table(role: str) -> None:
    """The API access page and the README's table are generated from ``access.grants()``
    (tests/docs/test_site.py keeps them current); here: those grants are the roles synthesized."""
    page = API_ACCESS.read_text(encoding="utf-8")
    found = [g for g in access.grants() if g.role == role and g.rules == DOCUMENTED[role]]
    assert found, f"gpustack.docsite.access.grants() has no {role} with the synthesized rules"
    assert all(markdown_table(g.rules) in page for g in found)
    assert {g.role for g in access.grants()} == set(DOCUMENTED)


def test_markdown_table_renders_every_rule() -> None:
    rules = (
        Access("", ("nodes",), ("get",), "read"),
        Access("coordination.k8s.io", ("leases",), ("get", "update"), "lead", names=("x",)),
    )
    assert markdown_table(rules).splitlines()[2:] == [
        "| core | `nodes` | get | read |",
        "| `coordination.k8s.io` | `leases` (`x`) | get, update | lead |",
    ]


@pytest.mark.parametrize("distribution", ["openshift", "generic"])
def test_openshift_lets_the_stack_use_the_privileged_scc(synth: Synth, distribution: str) -> None:
    """Issue 19 item 3: without a `use` grant of an SCC that allows them, OpenShift's admission
    refuses every privileged or hostPath pod (the operator grants each operand `privileged`)."""
    runtime = {"name": "crio", "distribution": distribution}
    objects = synth(profile(cluster={"runtime": runtime}))
    roles = [o for o in objects if o.kind in ("Role", "RoleBinding") and o.name == common.SCC_ROLE]
    if distribution != "openshift":
        assert roles == []
        return
    assert find(objects, "Role", common.SCC_ROLE)["rules"] == [
        r.as_manifest() for r in common.SCC_RULES
    ]
    binding = find(objects, "RoleBinding", common.SCC_ROLE)
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                                    "name": "system:serviceaccounts:gpustack-system"}]  # fmt: skip
    assert binding["metadata"]["namespace"] == "gpustack-system"
    namespaces = {o.manifest["metadata"].get("namespace") for o in objects if o.kind == "DaemonSet"}
    assert namespaces == {"gpustack-system"}  # every host daemon is covered by the group
