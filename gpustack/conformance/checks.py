"""The checks a conformance row runs against one synthesized operand.

Why a module of small checks: each row of :mod:`gpustack.conformance.tables` states one fact of
NVIDIA's rendering in words and names the check that holds gpustack's output to it, so a row is
data and the test that runs every row over every example profile stays a loop. A check returns
``None`` when the fact holds and one line saying what is missing when it does not.

Checks read plain manifests (the dicts ``synth`` writes) and the typed profile: no cdk8s here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpustack.profile.model import Profile

Manifest = Mapping[str, Any]


@dataclass(frozen=True)
class Rendered:
    """One operand as synthesized for one profile: its workload, and every object of the stack
    (for RBAC)."""

    profile: Profile
    workload: Manifest
    objects: Sequence[Manifest]

    @property
    def pod(self) -> Manifest:
        spec: Manifest = self.workload["spec"]["template"]["spec"]
        return spec

    def container(self, name: str) -> Manifest | None:
        for key in ("containers", "initContainers"):
            for c in self.pod.get(key, []):
                if c["name"] == name:
                    found: Manifest = c
                    return found
        return None

    def host_paths(self) -> dict[str, str]:
        """Volume name -> host path, for the pod's hostPath volumes."""
        return {
            v["name"]: v["hostPath"]["path"] for v in self.pod.get("volumes", []) if "hostPath" in v
        }


Check = Callable[[Rendered], str | None]


def mounted_config_map(r: Rendered, container: str, mount_path: str) -> Manifest | None:
    """The ConfigMap ``container`` mounts at ``mount_path`` (for rows about a file's content)."""
    ctr = r.container(container) or {}
    volume = next(
        (m["name"] for m in ctr.get("volumeMounts", []) if m["mountPath"] == mount_path), None
    )
    name = next(
        (
            v["configMap"]["name"]
            for v in r.pod.get("volumes", [])
            if v["name"] == volume and "configMap" in v
        ),
        None,
    )
    for o in r.objects:
        if o.get("kind") == "ConfigMap" and o["metadata"]["name"] == name:
            return o
    return None


#: A value a check expects: fixed, or derived from the profile.
Value = str | Callable[[Profile], str | None]


def _value(value: Value, profile: Profile) -> str | None:
    return value(profile) if callable(value) else value


def runtime_class(expected: Value) -> Check:
    """The pod runs with this RuntimeClass (``None`` from the profile: no class at all)."""

    def check(r: Rendered) -> str | None:
        want, got = _value(expected, r.profile), r.pod.get("runtimeClassName")
        return None if got == want else f"runtimeClassName is {got!r}, expected {want!r}"

    return check


def _on_container(container: str, test: Callable[[Rendered, Manifest], str | None]) -> Check:
    """A check of one container's spec (``test``); a missing container fails it, named."""

    def check(r: Rendered) -> str | None:
        c = r.container(container)
        return f"no container {container!r}" if c is None else test(r, c)

    return check


def env(container: str, name: str, value: Value | None = None) -> Check:
    """The container sets ``name`` (to ``value`` when given; a fieldRef counts as set)."""

    def check(r: Rendered, c: Manifest) -> str | None:
        found = {e["name"]: e for e in c.get("env", [])}
        if name not in found:
            return f"{container}: env {name} is not set"
        want = _value(value, r.profile) if value is not None else None
        if want is not None and found[name].get("value") != want:
            return f"{container}: env {name}={found[name].get('value')!r}, expected {want!r}"
        return None

    return _on_container(container, check)


def host_path(
    container: str, path: Value, *, propagation: str | None = None, at: Value | None = None
) -> Check:
    """The container mounts the host's ``path`` (at ``at``, with ``propagation``, when given)."""

    def check(r: Rendered, c: Manifest) -> str | None:
        want = _value(path, r.profile)
        paths = r.host_paths()
        mounts = [m for m in c.get("volumeMounts", []) if paths.get(m["name"]) == want]
        if not mounts:
            return f"{container}: host path {want} is not mounted"
        where = _value(at, r.profile) if at is not None else None
        if where is not None and all(m["mountPath"] != where for m in mounts):
            return f"{container}: host path {want} is not mounted at {where}"
        if propagation is not None and all(
            m.get("mountPropagation") != propagation for m in mounts
        ):
            return f"{container}: host path {want} is mounted without {propagation} propagation"
        return None

    return _on_container(container, check)


def privileged(container: str) -> Check:
    def check(r: Rendered, c: Manifest) -> str | None:
        ok = (c.get("securityContext") or {}).get("privileged") is True
        return None if ok else f"{container}: not privileged"

    return _on_container(container, check)


def not_privileged(container: str) -> Check:
    def check(r: Rendered, c: Manifest) -> str | None:
        bad = (c.get("securityContext") or {}).get("privileged") is True
        return f"{container}: privileged" if bad else None

    return _on_container(container, check)


def capability(container: str, cap: str) -> Check:
    """The container is privileged or adds ``cap``."""

    def check(r: Rendered, c: Manifest) -> str | None:
        sc = c.get("securityContext") or {}
        added = (sc.get("capabilities") or {}).get("add") or []
        ok = sc.get("privileged") is True or cap in added
        return None if ok else f"{container}: neither privileged nor given {cap}"

    return _on_container(container, check)


def pod_field(field: str, expected: Any) -> Check:
    """A pod-level field (``hostPID``, ``hostIPC``, ``automountServiceAccountToken``)."""

    def check(r: Rendered) -> str | None:
        got = r.pod.get(field)
        return None if got == expected else f"{field} is {got!r}, expected {expected!r}"

    return check


def probe(container: str, kind: str, *, path: str | None = None) -> Check:
    """The container has a ``kind`` probe (``startupProbe``...), on HTTP ``path`` when given."""

    def check(r: Rendered, c: Manifest) -> str | None:
        found = c.get(kind)
        if not found:
            return f"{container}: no {kind}"
        if path is not None and (found.get("httpGet") or {}).get("path") != path:
            return f"{container}: {kind} does not probe {path}"
        return None

    return _on_container(container, check)


def init_container(name: str) -> Check:
    def check(r: Rendered) -> str | None:
        names = [c["name"] for c in r.pod.get("initContainers", [])]
        return None if name in names else f"no init container {name!r} (has {names})"

    return check


def selects_on(key: Value) -> Check:
    """The pod's node selection names the label ``key`` (nodeSelector or required affinity)."""

    def check(r: Rendered) -> str | None:
        want = _value(key, r.profile)
        if want in (r.pod.get("nodeSelector") or {}):
            return None
        required = (
            ((r.pod.get("affinity") or {}).get("nodeAffinity") or {}).get(
                "requiredDuringSchedulingIgnoredDuringExecution"
            )
            or {}
        ).get("nodeSelectorTerms") or []
        keys = {e["key"] for t in required for e in t.get("matchExpressions", [])}
        return None if want in keys else f"node selection does not name {want}"

    return check


def no_node_selection() -> Check:
    """The pod runs on every node (no nodeSelector, no required node affinity)."""

    def check(r: Rendered) -> str | None:
        aff = (r.pod.get("affinity") or {}).get("nodeAffinity") or {}
        if r.pod.get("nodeSelector") or aff.get("requiredDuringSchedulingIgnoredDuringExecution"):
            return "the pod is restricted to some nodes"
        return None

    return check


def granted(kind: str, role: str, group: str, resource: str, verb: str) -> Check:
    """The ``kind`` (ClusterRole or Role) named ``role`` grants ``verb`` on ``resource``."""

    def check(r: Rendered) -> str | None:
        for o in r.objects:
            if o.get("kind") != kind or o["metadata"]["name"] != role:
                continue
            for rule in o.get("rules", []):
                if (
                    group in rule.get("apiGroups", [])
                    and resource in rule.get("resources", [])
                    and verb in rule.get("verbs", [])
                ):
                    return None
            return f"{kind} {role} does not grant {verb} on {resource}"
        return f"no {kind} {role}"

    return check


def not_granted(kind: str, role: str, group: str, resource: str, verb: str) -> Check:
    """The role does not grant ``verb`` on ``resource`` (absent role: nothing granted)."""
    grant = granted(kind, role, group, resource, verb)

    def check(r: Rendered) -> str | None:
        return f"{kind} {role} grants {verb} on {resource}" if grant(r) is None else None

    return check


def grpc_probe(container: str, kind: str, port: int, **fields: int) -> Check:
    """The container has a ``kind`` gRPC probe on ``port`` asking for the ``liveness`` service,
    with the given timing ``fields`` (``periodSeconds``, ``failureThreshold``...)."""

    def check(r: Rendered, c: Manifest) -> str | None:
        found = c.get(kind) or {}
        grpc = found.get("grpc") or {}
        if grpc.get("port") != port or grpc.get("service") != "liveness":
            return f"{container}: no {kind} on gRPC port {port} (service liveness)"
        wrong = [f"{k}={found.get(k)!r}" for k, v in fields.items() if found.get(k) != v]
        return f"{container}: {kind} has {', '.join(wrong)}, expected {fields}" if wrong else None

    return _on_container(container, check)


def command(container: str, program: str) -> Check:
    """The container runs ``program`` itself (its command's first word)."""

    def check(r: Rendered, c: Manifest) -> str | None:
        got = (c.get("command") or [None])[0]
        return None if got == program else f"{container}: runs {got!r}, expected {program!r}"

    return _on_container(container, check)


def workload_field(path: tuple[str, ...], expected: Any) -> Check:
    """A field of the workload (``spec.replicas``, ``spec.updateStrategy...``)."""

    def check(r: Rendered) -> str | None:
        got: Any = r.workload
        for key in path:
            got = got.get(key) if isinstance(got, Mapping) else None
        where = ".".join(path)
        return None if got == expected else f"{where} is {got!r}, expected {expected!r}"

    return check


def pod_label(key: str, value: str) -> Check:
    """The pod template carries the label ``key: value``."""

    def check(r: Rendered) -> str | None:
        labels = r.workload["spec"]["template"].get("metadata", {}).get("labels") or {}
        got = labels.get(key)
        return None if got == value else f"pod label {key} is {got!r}, expected {value!r}"

    return check


def tolerates(key: str) -> Check:
    """The pod tolerates the taint ``key`` (any effect)."""

    def check(r: Rendered) -> str | None:
        keys = {t.get("key") for t in r.pod.get("tolerations") or []}
        return None if key in keys else f"no toleration of {key}"

    return check


def prefers_node(key: str) -> Check:
    """The pod's preferred node affinity names the label ``key``."""

    def check(r: Rendered) -> str | None:
        preferred = ((r.pod.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "preferredDuringSchedulingIgnoredDuringExecution"
        ) or []
        keys = {e["key"] for t in preferred for e in t["preference"].get("matchExpressions", [])}
        return None if key in keys else f"no preferred node affinity on {key}"

    return check


def no_host_path(path: str) -> Check:
    """The pod mounts nothing of the host at ``path``."""

    def check(r: Rendered) -> str | None:
        return f"host path {path} is mounted" if path in r.host_paths().values() else None

    return check


def has_object(kind: str, name: str) -> Check:
    """The stack holds a ``kind`` named ``name``."""

    def check(r: Rendered) -> str | None:
        found = any(o.get("kind") == kind and o["metadata"]["name"] == name for o in r.objects)
        return None if found else f"no {kind} {name}"

    return check
