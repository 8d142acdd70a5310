"""Where the pods are: the pod specs inside each kind of workload, and what their containers ask.

Core workloads keep the pod template at a fixed path; Kubeflow's ``PyTorchJob``/``MPIJob`` keep
one per replica type (``Master``, ``Worker``, ``Launcher``), Ray's ``RayCluster`` one for the
head and one per worker group, and a ``RayJob`` the same inside ``rayClusterSpec`` plus the
submitter's. Every rule sees a :class:`PodSite`: the spec, its JSON path in the object and how
to read its containers' resources, so no rule knows where a kind keeps its pods.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpustack.kube.manifests import Manifest
from gpustack.kube.quantity import add, quantity
from gpustack.profile.document import JsonPath

#: kind -> path of its pod template (``spec`` of a Pod is the pod spec itself).
TEMPLATE_PATHS: dict[str, JsonPath] = {
    "Deployment": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "DaemonSet": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
    "PodTemplate": ("template",),
}
#: Kubeflow training operator kinds -> the key holding their replica specs.
KUBEFLOW_REPLICAS: dict[str, str] = {
    "PyTorchJob": "pytorchReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
    "TFJob": "tfReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
}
#: Annotation that states the CUDA release of a pod's images when their tags do not.
CUDA_ANNOTATION = "gpustack.dev/cuda-version"


@dataclass(frozen=True)
class Container:
    """One container of a pod spec: its data and its JSON path in the object."""

    data: dict[str, Any]
    path: JsonPath
    init: bool

    @property
    def name(self) -> str:
        name = self.data.get("name")
        return name if isinstance(name, str) else "?"

    @property
    def image(self) -> str:
        image = self.data.get("image")
        return image if isinstance(image, str) else ""

    def resources(self, section: str) -> dict[str, Any]:
        """``requests`` or ``limits`` (empty when absent or malformed)."""
        res = self.data.get("resources")
        found = res.get(section) if isinstance(res, dict) else None
        return found if isinstance(found, dict) else {}

    def words(self) -> list[str]:
        """Command, args and env values as one list of strings (for telling what it runs)."""
        out: list[str] = []
        for field in ("command", "args"):
            value = self.data.get(field)
            if isinstance(value, list):
                out += [str(v) for v in value]
        for var in listed(self.data.get("env")):
            if isinstance(var, dict):
                out.append(f"{var.get('name')}={var.get('value', '')}")
        return out


@dataclass(frozen=True)
class PodSite:
    """A pod spec inside an object: ``path`` is the spec's JSON path, ``meta_path`` that of the
    template's metadata (``None`` for a bare Pod, whose metadata is the object's)."""

    manifest: Manifest
    path: JsonPath
    spec: dict[str, Any]
    meta_path: JsonPath
    role: str | None = None

    @property
    def where(self) -> str:
        """``Job/train`` or ``PyTorchJob/bert (Worker)``, for messages."""
        role = f" ({self.role})" if self.role else ""
        return f"{self.manifest.kind}/{self.manifest.name}{role}"

    def containers(self, *, init: bool = True) -> list[Container]:
        sections = ("initContainers", "containers") if init else ("containers",)
        out = []
        for section in sections:
            items = self.spec.get(section)
            for i, c in enumerate(items if isinstance(items, list) else ()):
                if isinstance(c, dict):
                    out.append(Container(c, (*self.path, section, i), section != "containers"))
        return out

    def annotation(self, name: str) -> tuple[str, JsonPath] | None:
        """An annotation of the pod template, else of the object, with its path."""
        for meta_path in (self.meta_path, ("metadata",)):
            meta = _get(self.manifest.data, meta_path)
            notes = meta.get("annotations") if isinstance(meta, dict) else None
            value = notes.get(name) if isinstance(notes, dict) else None
            if value is not None:
                return str(value), (*meta_path, "annotations", name)
        return None


def listed(value: Any) -> list[Any]:
    """``value`` if it is a list, else no items: a field of the wrong type (``tolerations:
    NoSchedule``) is the API server's to refuse; a rule reads it as absent, never raises."""
    return value if isinstance(value, list) else []


def _get(data: Any, path: JsonPath) -> Any:
    for part in path:
        if isinstance(part, int):
            data = data[part] if isinstance(data, list) and part < len(data) else None
        else:
            data = data.get(part) if isinstance(data, dict) else None
    return data


def _template(m: Manifest, path: JsonPath, role: str | None = None) -> Iterator[PodSite]:
    spec = _get(m.data, (*path, "spec"))
    if isinstance(spec, dict):
        yield PodSite(m, (*path, "spec"), spec, (*path, "metadata"), role)


def _ray_cluster(m: Manifest, at: JsonPath) -> Iterator[PodSite]:
    yield from _template(m, (*at, "headGroupSpec", "template"), "head")
    groups = _get(m.data, (*at, "workerGroupSpecs"))
    for i, group in enumerate(groups if isinstance(groups, list) else ()):
        name = group.get("groupName") if isinstance(group, dict) else None
        yield from _template(m, (*at, "workerGroupSpecs", i, "template"), f"{name or i} workers")


def pod_sites(m: Manifest) -> Iterator[PodSite]:
    """Every pod spec of the object (none for kinds that run no pods)."""
    kind = m.kind
    if kind == "Pod":
        spec = m.data.get("spec")
        if isinstance(spec, dict):
            yield PodSite(m, ("spec",), spec, ("metadata",))
    elif kind in TEMPLATE_PATHS:
        yield from _template(m, TEMPLATE_PATHS[kind])
    elif kind in KUBEFLOW_REPLICAS:
        key = KUBEFLOW_REPLICAS[kind]
        replicas = _get(m.data, ("spec", key))
        for role in replicas if isinstance(replicas, dict) else ():
            yield from _template(m, ("spec", key, role, "template"), role)
    elif kind == "RayCluster":
        yield from _ray_cluster(m, ("spec",))
    elif kind == "RayJob":
        yield from _ray_cluster(m, ("spec", "rayClusterSpec"))
        yield from _template(m, ("spec", "submitterPodTemplate"), "submitter")


# --- resources ---------------------------------------------------------------------------------

_GPU_WORDS = re.compile(r"nvidia|gpu|(^|/)mig-", re.IGNORECASE)
#: An init container with this restartPolicy is a sidecar: it keeps running beside the main
#: containers (KEP-753, Kubernetes 1.29+).
SIDECAR_POLICY = "Always"


def looks_like_gpu(name: str, known: frozenset[str] = frozenset()) -> bool:
    """A resource meant as a GPU: one the profile knows, or one naming NVIDIA, GPUs or MIG."""
    return name in known or bool(_GPU_WORDS.search(name))


def asked(c: Container, name: str) -> Decimal | None:
    """What a container gets of ``name``: its limit, else its request (extended resources are
    never overcommitted, so the two must agree; ``gpu-requests-match-limits`` checks it)."""
    for section in ("limits", "requests"):
        value = c.resources(section).get(name)
        if value is not None:
            return quantity(value)
    return None


def is_sidecar(container: Any) -> bool:
    """An init container that runs beside the main ones (``restartPolicy: Always``)."""
    return isinstance(container, dict) and container.get("restartPolicy") == SIDECAR_POLICY


def effective(main: Iterable[Decimal], inits: Iterable[tuple[Decimal, bool]]) -> Decimal:
    """What a pod needs of one resource, as the scheduler and the kubelet count it
    (k8s.io/component-helpers ``resource.PodRequests``, KEP-753 "exposing pod resource
    requirements"): main containers and sidecars run together, so they add up; each regular init
    container runs alone, but beside the sidecars declared before it; the pod needs the larger.

    ``main``: the main containers' amounts; ``inits``: each init container's amount and whether
    it is a sidecar, in declaration order.
    """
    running = add(*main)
    sidecars = Decimal(0)
    peak = Decimal(0)  # the largest need while init containers start
    for amount, sidecar in inits:
        if sidecar:
            sidecars = add(sidecars, amount)
            running = add(running, amount)
            peak = max(peak, sidecars)
        else:
            peak = max(peak, add(amount, sidecars))
    return max(running, peak)


def per_pod(site: PodSite, name: str) -> Decimal:
    """What the pod needs of ``name`` (:func:`effective` of its containers)."""
    main = [asked(c, name) or Decimal(0) for c in site.containers(init=False)]
    inits = [
        (asked(c, name) or Decimal(0), is_sidecar(c.data)) for c in site.containers() if c.init
    ]
    return effective(main, inits)


def show(amount: Decimal) -> str:
    """A quantity for messages: ``12``, ``0.5`` (never ``1.2E+1`` or ``1.000``)."""
    if amount == amount.to_integral_value():
        return str(int(amount))
    return format(amount.normalize(), "f")


def gpu_names(site: PodSite, known: frozenset[str] = frozenset()) -> list[str]:
    """GPU resources any container of the pod requests or limits, in first-seen order."""
    names: dict[str, None] = {}
    for c in site.containers():
        for section in ("limits", "requests"):
            names.update(dict.fromkeys(n for n in c.resources(section) if looks_like_gpu(n, known)))
    return list(names)
