"""Why a controller could not create its pods: the API server's refusal, read from the
``FailedCreate`` events the DaemonSet, Job or ReplicaSet controller records.

Why: a pod the API server refuses never exists, so no pod status and no scheduler message says
anything; the controller's event is the only place the cause is written (a ResourceQuota, a
RuntimeClass that is not there yet, PodSecurity, an OpenShift SecurityContextConstraint, an
admission webhook). The messages matched here are the API server's own (``k8s.io/apiserver``
admission errors, ``plugin/pkg/admission/resourcequota``, ``.../runtimeclass``,
``.../security/podsecurity``).

Node findings use :func:`refusal` to say why a stack DaemonSet has no pod on a node;
``pods-not-created`` (:func:`diagnose_refusals`) reports every other controller still refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from gpustack.doctor.finding import Diagnosis
from gpustack.kube.labels import COMPONENT_LABEL, PART_OF, PART_OF_LABEL
from gpustack.kube.state import JSON, ClusterState, get, items, labels, name
from gpustack.profile import components
from gpustack.profile.model import Profile

FAILED_CREATE = "FailedCreate"


@dataclass(frozen=True)
class Refusal:
    """One controller's last refusal: what the API server said, the cause and what to do."""

    message: str
    cause: str
    hint: str


def _short(message: str) -> str:
    """The API server's reason, without ``Error creating: pods "x" is forbidden:``."""
    text = message.strip()
    for lead in ("is forbidden: ", "Error creating: "):
        if lead in text:
            text = text.split(lead, 1)[1]
    return text


def explain(message: str, namespace: str, profile: Profile) -> tuple[str, str]:
    """(cause, hint) for one FailedCreate message in ``namespace``."""
    text = _short(message)
    ns = namespace
    if "insufficient quota to match these scopes" in text:
        stack = ns == profile.cluster.namespace
        cls = profile.cluster.priority_class_name if stack else "their priority class"
        return (
            f"the API server admits pods of {cls} in namespace {ns} only with a ResourceQuota "
            "whose scopeSelector names that class, and there is none (GKE limits "
            "system-node-critical and system-cluster-critical this way)",
            "on GKE set cluster.platform: gke, so gpustack writes that ResourceQuota"
            if stack
            else f"add a ResourceQuota with a PriorityClass scopeSelector to namespace {ns}",
        )
    if "exceeded quota" in text:
        quota = re.search(r"exceeded quota: ([^,]+)", text)
        which = quota.group(1) if quota else "a ResourceQuota"
        return (
            f"ResourceQuota {which} of namespace {ns} is used up: {text}",
            f"kubectl -n {ns} describe resourcequota {quota.group(1) if quota else ''}".rstrip()
            + "; raise the quota or free pods",
        )
    runtime = re.search(r'RuntimeClass "([^"]+)" not found', text)
    if runtime:
        rc = runtime.group(1)
        return (
            f"RuntimeClass {rc} does not exist",
            f"apply the cluster folder's RuntimeClasses (kubectl get runtimeclass {rc}); "
            "the controller retries by itself once it exists",
        )
    if "violates PodSecurity" in text:
        level = re.search(r'violates PodSecurity "([a-z]+)', text)
        return (
            f"PodSecurity {level.group(1) if level else ''} enforced on namespace {ns} refuses "
            f"it: {text}".replace("  ", " "),
            f"kubectl label namespace {ns} pod-security.kubernetes.io/enforce=privileged "
            "(the folder's Namespace carries it: was the namespace made before?)",
        )
    if "security context constraint" in text:
        return (
            f"no OpenShift SecurityContextConstraint admits it: {text}",
            "grant the pod's ServiceAccount an SCC that allows it (oc adm policy add-scc-to-user "
            f"privileged -z <serviceaccount> -n {ns})",
        )
    webhook = re.search(r'admission webhook "([^"]+)" denied the request', text)
    if webhook:
        return (
            f"admission webhook {webhook.group(1)} refuses it: {text}",
            f"exempt namespace {ns} from the webhook's policy, or change the policy",
        )
    account = re.search(r'serviceaccount "([^"]+)" not found', text)
    if account:
        return (
            f"ServiceAccount {account.group(1)} does not exist in namespace {ns}",
            "apply the whole cluster folder (kubectl apply -k)",
        )
    return (f"the API server refuses it: {text}", f"kubectl -n {ns} get events")


def _failed(state: ClusterState, kind: str, namespace: str, obj: str) -> list[JSON]:
    found = [
        e
        for e in state.events
        if e.get("reason") == FAILED_CREATE
        and get(e, "involvedObject", "kind") == kind
        and get(e, "involvedObject", "name") == obj
        and (get(e, "involvedObject", "namespace") or get(e, "metadata", "namespace")) == namespace
    ]
    return sorted(found, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or ""))


def refusal(
    state: ClusterState, profile: Profile, kind: str, namespace: str, obj: str
) -> Refusal | None:
    """The last FailedCreate of ``kind`` ``namespace/obj``, explained; ``None`` if none."""
    failed = _failed(state, kind, namespace, obj)
    if not failed:
        return None
    message = str(failed[-1].get("message") or "")
    cause, hint = explain(message, namespace, profile)
    return Refusal(message, cause, hint)


def _owned(state: ClusterState, kind: str, namespace: str, obj: str) -> bool:
    """Whether a pod of the controller exists now (its refusal is then history)."""
    for pod in state.pods:
        if get(pod, "metadata", "namespace") != namespace:
            continue
        if kind == "Job" and labels(pod).get("job-name") == obj:
            return True
        for ref in items(pod, "metadata", "ownerReferences"):
            if isinstance(ref, dict) and ref.get("kind") == kind and ref.get("name") == obj:
                return True
    return False


def _staged_daemonset(state: ClusterState, profile: Profile, namespace: str, obj: str) -> bool:
    """A DaemonSet of one of the stack's readiness stages: the node findings explain it."""
    staged = {c.name for c, _ in components.readiness_stages()}
    return namespace == profile.cluster.namespace and any(
        name(d) == obj
        and labels(d).get(PART_OF_LABEL) == PART_OF
        and labels(d).get(COMPONENT_LABEL) in staged
        for d in state.daemonsets
    )


def diagnose_refusals(state: ClusterState, profile: Profile) -> Iterator[Diagnosis]:
    """``pods-not-created``: each controller whose last FailedCreate still stands (none of its
    pods exists), but the DaemonSets of the stack's readiness stages, which the node findings
    explain per node."""
    seen: set[tuple[str, str, str]] = set()
    for event in state.events:
        if event.get("reason") != FAILED_CREATE:
            continue
        kind = str(get(event, "involvedObject", "kind") or "")
        obj = str(get(event, "involvedObject", "name") or "")
        ns = str(
            get(event, "involvedObject", "namespace") or get(event, "metadata", "namespace") or ""
        )
        if not kind or not obj or (kind, ns, obj) in seen:
            continue
        seen.add((kind, ns, obj))
        if kind == "DaemonSet" and _staged_daemonset(state, profile, ns, obj):
            continue
        if _owned(state, kind, ns, obj):
            continue
        found = refusal(state, profile, kind, ns, obj)
        if found is not None:
            yield Diagnosis(
                f"{kind.lower()}/{ns}/{obj}",
                "pods-not-created",
                f"no pod could be created: {found.cause}",
                found.hint,
            )
