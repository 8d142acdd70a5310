"""What a ServiceAccount may do, as the API server's authorizer answers it.

Expected rules come from the components' declared API access (the same constants the constructs
synthesize the Roles from and the docs render their tables from, each rule with the upstream
call that needs it); the live answer comes from a SelfSubjectRulesReview made as the
ServiceAccount (impersonated by the admin), minus what any ServiceAccount gets (discovery, self
reviews), so "nothing more" is checked as well as "enough".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

from gpustack.constructs import common, dra_driver, driver_manager, mig_manager, nfd
from gpustack.constructs.rbac import Access
from tests.e2e.controlplane import ControlPlane
from tests.e2e.folder import Folder


def declared(folder: Folder) -> dict[tuple[str, str], tuple[Access, ...]]:
    """(kind, name) of each role gpustack may synthesize -> the rules its component declares
    for the release the profile runs (the driver and MIG managers' rules depend on it)."""
    p = folder.profile
    return {
        ("ClusterRole", driver_manager.CLUSTER_ROLE): driver_manager.rules(
            p.driver.upgrade.version
        ),
        ("Role", nfd.WORKER_ROLE): nfd.WORKER_RULES,
        ("ClusterRole", nfd.MASTER_ROLE): nfd.MASTER_RULES,
        ("ClusterRole", nfd.GC_ROLE): nfd.GC_RULES,
        ("ClusterRole", mig_manager.CLUSTER_ROLE): mig_manager.cluster_rules(p.mig_manager.version),
        ("Role", mig_manager.ROLE): mig_manager.RULES,
        # OpenShift: every ServiceAccount of the namespace may use the privileged SCC
        ("Role", common.SCC_ROLE): common.SCC_RULES,
        # NVIDIA's DRA driver: the kubelet plugin, ComputeDomain controller and IMEX daemons
        ("ClusterRole", dra_driver.KUBELET_PLUGIN_CLUSTER_ROLE): dra_driver.KUBELET_PLUGIN_RULES,
        (
            "ClusterRole",
            dra_driver.KUBELET_PLUGIN_CD_CLUSTER_ROLE,
        ): dra_driver.KUBELET_PLUGIN_CD_RULES,
        ("Role", dra_driver.KUBELET_PLUGIN_ROLE): dra_driver.KUBELET_PLUGIN_CD_NAMESPACED,
        ("ClusterRole", dra_driver.CONTROLLER_CLUSTER_ROLE): dra_driver.CONTROLLER_RULES,
        ("Role", dra_driver.CONTROLLER_ROLE): dra_driver.CONTROLLER_NAMESPACED,
        ("ClusterRole", dra_driver.DAEMON_CLUSTER_ROLE): dra_driver.DAEMON_RULES,
    }


#: A ServiceAccount no folder binds: what every account may do anyway.
NOBODY: Final = "gpustack-e2e-nobody"

Grant = tuple[str, str, str, str]  # (api group, resource, verb, resource name or "")


def expand(rules: Iterable[Mapping[str, Any]]) -> set[Grant]:
    out: set[Grant] = set()
    for r in rules:
        for g in r.get("apiGroups", [""]):
            for res in r.get("resources", []):
                for v in r.get("verbs", []):
                    for n in r.get("resourceNames") or [""]:
                        out.add((g, res, v, n))
    return out


def declared_grants(rules: Iterable[Access]) -> set[Grant]:
    return expand(a.as_manifest() for a in rules)


def expected(folder: Folder) -> dict[tuple[str, str], dict[str, set[Grant]]]:
    """(namespace, ServiceAccount) -> {"cluster": grants everywhere, "namespace": grants in its
    own namespace only}, for every ServiceAccount of the folder."""
    out: dict[tuple[str, str], dict[str, set[Grant]]] = {
        (sa["metadata"]["namespace"], sa["metadata"]["name"]): {
            "cluster": set(),
            "namespace": set(),
        }
        for sa in folder.of_kind("ServiceAccount")
    }
    roles = declared(folder)
    for kind in ("ClusterRoleBinding", "RoleBinding"):
        for binding in folder.of_kind(kind):
            ref = binding["roleRef"]
            rules = roles[(ref["kind"], ref["name"])]
            scope = "cluster" if kind == "ClusterRoleBinding" else "namespace"
            for subject in binding["subjects"]:
                if subject["kind"] == "ServiceAccount":
                    account = (subject["namespace"], subject["name"])
                    out[account][scope] |= declared_grants(rules)
    return out


def namespace_grants(folder: Folder) -> dict[str, set[Grant]]:
    """Namespace -> what a RoleBinding to the group ``system:serviceaccounts:<namespace>``
    gives every account there (OpenShift's SCC grant). The baseline account has it too, so
    :func:`expected` leaves it out and the test asks for it with ``can-i`` instead."""
    roles = declared(folder)
    prefix = "system:serviceaccounts:"
    out: dict[str, set[Grant]] = {}
    for binding in folder.of_kind("RoleBinding"):
        for subject in binding["subjects"]:
            if subject["kind"] == "Group" and subject["name"].startswith(prefix):
                ref = binding["roleRef"]
                grants = declared_grants(roles[(ref["kind"], ref["name"])])
                out.setdefault(subject["name"][len(prefix) :], set()).update(grants)
    return out


def live(cp: ControlPlane, namespace: str, account: str, in_namespace: str) -> set[Grant]:
    """The grants ``account`` has in ``in_namespace`` (cluster-wide ones included)."""
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": in_namespace},
    }
    user = f"system:serviceaccount:{namespace}:{account}"
    out = cp.kubectl(
        "create", f"--as={user}", "--validate=false", "-o", "json", "-f", "-",
        stdin=json.dumps(review),
    )  # fmt: skip
    status = json.loads(out)["status"]
    assert not status.get("incomplete"), status.get("evaluationError")
    return expand(status["resourceRules"])


def can_i(cp: ControlPlane, namespace: str, account: str, grant: Grant, where: str) -> bool:
    """``kubectl auth can-i`` as the ServiceAccount, for one grant."""
    group, resource, verb, name = grant
    base, _, sub = resource.partition("/")
    target = f"{base}.{group}" if group else base
    if name:
        target += f"/{name}"
    args = ["auth", "can-i", verb, target, "-n", where]
    args += [f"--as=system:serviceaccount:{namespace}:{account}"]
    if sub:
        args.append(f"--subresource={sub}")
    done = cp.run(*args)
    return done.stdout.strip() == "yes"
