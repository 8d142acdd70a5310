"""What no sync does by itself: the manual steps of a plan, each with its commands.

* An object on the base side only is deleted only by a sync that prunes (Argo CD's
  ``prune``, Flux's ``prune: true``); a moved (another namespace) or renamed one is a new object
  next to the old, and a DaemonSet then runs twice on each node until the old one goes.
* A CustomResourceDefinition that drops a version refuses the update while objects are stored
  at it (``status.storedVersions``); one that drops a field prunes it from stored objects.
* A workload whose selector changes cannot be updated (the selector is immutable).
* An ``OnDelete`` workload's pods keep the old template until deleted: per node, at one's pace.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from gpustack.plan.model import EVICTS, ManualStep, Ref, Rollout
from gpustack.plan.objects import Obj, Pairs
from gpustack.plan.workloads import WORKLOADS

CRD = "CustomResourceDefinition"


def delete(ref: Ref, *flags: str) -> str:
    """The ``kubectl delete`` of one object."""
    where = f"-n {ref.namespace} " if ref.namespace else ""
    return " ".join([f"kubectl {where}delete {ref.kind.lower()} {ref.name}", *flags])


def steps(
    pairs: Pairs, base: Mapping[Ref, Obj], head: Mapping[Ref, Obj], rollouts: tuple[Rollout, ...]
) -> tuple[ManualStep, ...]:
    """Every manual step the change needs, in a stable order."""
    found = [
        *(_left(old, new, "namespace-move") for old, new in pairs.moved),
        *(_left(old, new, "rename") for old, new in pairs.renamed),
        *(
            ManualStep(
                "prune",
                ref,
                "no longer rendered: only a sync with pruning deletes it",
                (delete(ref),),
            )
            for ref in pairs.removed
        ),
    ]
    for ref in pairs.both:
        if ref.kind == CRD:
            found += _crd(ref, base[ref], head[ref])
        elif ref.kind in WORKLOADS and _selector(base[ref]) != _selector(head[ref]):
            why = "its selector changed, which the API server refuses to update"
            found.append(
                ManualStep("recreate", ref, why, (delete(ref, "--cascade=orphan"), "sync again"))
            )
    found += [_pods(r) for r in rollouts if r.strategy == "OnDelete"]
    return tuple(found)


def _selector(obj: Obj) -> Any:
    return (obj.get("spec") or {}).get("selector")


def _left(old: Ref, new: Ref, kind: str) -> ManualStep:
    why = f"now {new}: the old object stays until a pruning sync deletes it"
    if old.kind in WORKLOADS:
        why += "; both run until then"
    return ManualStep(kind, old, why, (delete(old),))


def _pods(r: Rollout) -> ManualStep:
    ns = r.ref.namespace
    what = (
        "its pods keep the old template until deleted; a new pod evicts the node's GPU pods "
        "and reinstalls the driver"
        if EVICTS in r.effects
        else "its pods keep the old template until deleted"
    )
    return ManualStep(
        "delete-pods",
        r.ref,
        what,
        (
            f"kubectl -n {ns} get pods -l {r.selector} -o wide",
            f"kubectl -n {ns} delete pod -l {r.selector} --field-selector spec.nodeName=<node>",
        ),
    )


def _crd(ref: Ref, old: Obj, new: Obj) -> Iterator[ManualStep]:
    was, now = _versions(old), _versions(new)
    dropped = sorted(was.keys() - now.keys())
    if dropped:
        yield ManualStep(
            "crd-version-dropped",
            ref,
            f"drops {', '.join(dropped)}: the update is refused while objects are stored at it",
            (f"kubectl get crd {ref.name} -o jsonpath='{{.status.storedVersions}}'",),
        )
    for version in sorted(was.keys() & now.keys()):
        gone = sorted(_fields(was[version]) - _fields(now[version]))
        if gone:
            yield ManualStep(
                "crd-fields-dropped",
                ref,
                f"{version} drops {', '.join(gone)}: stored objects lose those values",
                (f"kubectl get {ref.name} -A -o yaml",),
            )


def _versions(obj: Obj) -> dict[str, Any]:
    versions = (obj.get("spec") or {}).get("versions") or ()
    return {str(v.get("name")): v for v in versions if isinstance(v, dict)}


def _fields(version: Mapping[str, Any]) -> set[str]:
    """Dotted paths of every property of the version's schema."""
    schema = (version.get("schema") or {}).get("openAPIV3Schema") or {}
    found: set[str] = set()
    stack: list[tuple[str, Any]] = [("", schema)]
    while stack:
        prefix, node = stack.pop()
        if not isinstance(node, dict):
            continue
        for name, sub in (node.get("properties") or {}).items():
            found.add(f"{prefix}{name}")
            stack.append((f"{prefix}{name}.", sub))
        if isinstance(node.get("items"), dict):
            stack.append((f"{prefix}[].", node["items"]))
    return found
