"""Where each synthesized object goes inside ``dist/clusters/<cluster>/``, and in which order.

Layout rules (the contract GitOps tools and reviewers rely on):

* one object per file: ``<component>/<kind-lowercase>-<metadata.name>.yaml``;
* ``kustomization.yaml`` at the cluster root lists every file, in the stable object order;
* the stable order is: component (the order of :data:`gpustack.profile.components.REGISTRY`), then
  kind (the install order of :data:`KIND_ORDER`, unknown kinds after it alphabetically), then
  namespace, then name. Documents never depend on the order constructs happened to create them in.

A component that is not registered is refused rather than sorted somewhere: the registry is the
one list of components, so an object from outside it is a bug, not a folder to invent.

The namespace is not part of a file name, so two objects of one kind and name in different
namespaces (or a kind from two API groups) would share a file: that is reported as an error
instead of silently overwriting one of them. Names are checked to be plain DNS names, so no
object can ever make the writer step outside its cluster folder.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import yaml

from gpustack.profile import components
from gpustack.synth.errors import SynthError
from gpustack.synth.serialize import dump_yaml

#: Install order of kinds (adapted from Helm's and Tanka's kind sorters, plus the cluster-scoped
#: kinds the GPU stack uses). Kinds not listed sort after these, alphabetically.
KIND_ORDER = (
    "Namespace",
    "PriorityClass",
    "RuntimeClass",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
)

KUSTOMIZATION_FILE = "kustomization.yaml"

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
_KIND = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
_COMPONENT = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
#: Longest file name (bytes) common filesystems (ext4, xfs, btrfs, tmpfs) accept.
_NAME_MAX = 255


class SynthObjectLike(Protocol):
    """What the constructs hand over: one Kubernetes object and the component it belongs to."""

    @property
    def component(self) -> str: ...

    @property
    def manifest(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Head:
    """Who a file's object is: what the GitOps objects read of every object (the AppProject's
    kinds and namespaces, Flux's health checks), kept from rendering so that a cluster
    synthesized in this run is not parsed back from its own YAML."""

    api_version: str
    kind: str
    name: str
    #: ``""`` for a cluster-scoped object
    namespace: str

    @classmethod
    def of(cls, manifest: Mapping[str, Any]) -> Head:
        meta = manifest["metadata"]
        return cls(
            manifest["apiVersion"], manifest["kind"], meta["name"], meta.get("namespace") or ""
        )


class Stored(Protocol):
    """A file's bytes kept elsewhere than in memory (a fleet's spool: :mod:`.spool`)."""

    def read(self) -> bytes: ...


@dataclass(frozen=True, eq=False, slots=True)
class ManifestFile:
    """One file of a cluster folder: its path relative to the folder, and its exact bytes.

    ``head`` is the object's :class:`Head` when this run rendered it (``None`` for the
    kustomization and for files read back from disk); it is not part of a file's equality.
    ``stored`` is the bytes, or where they are kept until written (:class:`Stored`):
    ``content`` reads them either way."""

    path: str
    stored: bytes | Stored
    head: Head | None = None

    @property
    def content(self) -> bytes:
        stored = self.stored
        return stored if isinstance(stored, bytes) else stored.read()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ManifestFile):
            return NotImplemented
        return self.path == other.path and self.content == other.content

    def __hash__(self) -> int:
        return hash((self.path, self.content))


class Files(Protocol):
    """A cluster's files kept elsewhere, made into :class:`ManifestFile` objects when asked
    (a fleet's spool keeps ~37 per cluster in a few hundred bytes: :mod:`.spool`)."""

    def files(self) -> tuple[ManifestFile, ...]: ...


class ClusterOutput:
    """Everything that goes into ``clusters/<name>/``: manifests first, kustomization last.

    ``files`` is the tuple itself, or a :class:`Files` that makes it on each access: 10,000
    clusters held as ~370,000 file objects until the write took ~60 MB (issue #37)."""

    __slots__ = ("name", "_files")

    def __init__(self, name: str, files: tuple[ManifestFile, ...] | Files) -> None:
        self.name = name
        self._files = files

    @property
    def files(self) -> tuple[ManifestFile, ...]:
        files = self._files
        return files if isinstance(files, tuple) else files.files()

    def paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClusterOutput):
            return NotImplemented
        return self.name == other.name and self.files == other.files

    def __hash__(self) -> int:
        return hash((self.name, self.files))

    def __repr__(self) -> str:
        return f"ClusterOutput(name={self.name!r}, files={self.files!r})"

    def __reduce__(self) -> tuple[type[ClusterOutput], tuple[str, tuple[ManifestFile, ...]]]:
        return (ClusterOutput, (self.name, self.files))


@dataclass(frozen=True)
class _Placed:
    sort_key: tuple[int, int, str, str, str]
    identity: tuple[str, str, str, str]
    path: str
    manifest: Mapping[str, Any]


def check_cluster_name(name: str) -> None:
    """Cluster names become folder names: only DNS labels (no ``/``, no ``..``, no dots)."""
    if not _DNS_LABEL.fullmatch(name):
        raise SynthError(
            f"cluster name {name!r} can't be a folder name: use a DNS label "
            "(lowercase letters, digits and '-', at most 63 characters)"
        )


def _rank(value: str, order: Sequence[str]) -> int:
    return order.index(value) if value in order else len(order)


def _place(obj: SynthObjectLike, where: str) -> _Placed:
    component = obj.component
    if not _COMPONENT.fullmatch(component):
        raise SynthError(f"{where}: component {component!r} is not a lowercase folder name")
    try:
        component_rank = components.order(component)
    except KeyError as exc:
        raise SynthError(f"{where}: {exc.args[0]}") from exc
    manifest = obj.manifest
    if not isinstance(manifest, Mapping):
        raise SynthError(f"{where}: manifest is {type(manifest).__name__}, not a mapping")
    api_version = manifest.get("apiVersion")
    kind = manifest.get("kind")
    metadata = manifest.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    namespace = (metadata.get("namespace") if isinstance(metadata, Mapping) else None) or ""
    if not isinstance(api_version, str) or not api_version:
        raise SynthError(f"{where}: object has no apiVersion")
    if not isinstance(kind, str) or not _KIND.fullmatch(kind):
        raise SynthError(f"{where}: object has no valid kind (got {kind!r})")
    if not isinstance(name, str) or not _DNS_SUBDOMAIN.fullmatch(name):
        raise SynthError(
            f"{where}: {kind} has no valid metadata.name (got {name!r}); "
            "set an explicit DNS-subdomain name"
        )
    group = api_version.rpartition("/")[0]
    filename = f"{kind.lower()}-{name}.yaml"
    if len(filename.encode()) > _NAME_MAX:
        raise SynthError(
            f"{where}: file name {filename[:40]}... is longer than {_NAME_MAX} bytes; "
            f"shorten the {kind}'s metadata.name"
        )
    path = f"{component}/{filename}"
    return _Placed(
        sort_key=(
            component_rank,
            _rank(kind, KIND_ORDER),
            kind,
            str(namespace),
            name,
        ),
        identity=(group, kind, str(namespace), name),
        path=path,
        manifest=manifest,
    )


def _describe(p: _Placed) -> str:
    group, kind, namespace, name = p.identity
    gk = f"{kind}.{group}" if group else kind
    return f"{gk} {namespace + '/' if namespace else ''}{name}"


def kustomization(paths: Iterable[str]) -> bytes:
    """The cluster's ``kustomization.yaml``: every file, in the order given, kept in that order.

    Why ``sortOptions: fifo``: kustomize's default (legacy) order puts kinds it does not know
    (RuntimeClass, NodeFeatureRule...) after the DaemonSets and Jobs, so on a fresh cluster every
    pod naming the ``nvidia`` RuntimeClass was refused once (a FailedCreate per DaemonSet and Job)
    before the class existed. Our order (:data:`KIND_ORDER`) already installs RuntimeClasses and
    CRDs before the pods that need them; fifo makes ``kubectl apply -k`` keep it (kustomize 5+).
    """
    return dump_yaml(
        {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "sortOptions": {"order": "fifo"},
            "resources": list(paths),
        }
    )


#: Manifests serialized lately, by identity: the constructs' render cache
#: (:mod:`gpustack.constructs.memo`) hands the same read-only dict to every cluster with equal
#: props, and it is serialized once. Each entry pins its dict, so an id is never reused for
#: another object while it is here. 2048 manifests (~16 MiB) are ~50 distinct clusters' worth.
_SERIALIZED: OrderedDict[int, tuple[Mapping[str, Any], bytes]] = OrderedDict()
_SERIALIZED_MAX = 2048


def _serialized(manifest: Mapping[str, Any]) -> bytes:
    """``dump_yaml(manifest)``, once per manifest object (and each of its nested maps and
    lists once per object: :func:`gpustack.synth.yaml_text.emit`'s ``shared``)."""
    found = _SERIALIZED.get(id(manifest))
    if found is not None and found[0] is manifest:
        _SERIALIZED.move_to_end(id(manifest))
        return found[1]
    content = dump_yaml(manifest, shared=True)
    _SERIALIZED[id(manifest)] = (manifest, content)
    if len(_SERIALIZED) > _SERIALIZED_MAX:
        _SERIALIZED.popitem(last=False)
    return content


def layout_cluster(name: str, objects: Iterable[SynthObjectLike]) -> ClusterOutput:
    """Place and serialize one cluster's objects; raises :class:`SynthError` on any conflict."""
    check_cluster_name(name)
    placed: list[_Placed] = []
    for i, obj in enumerate(objects):
        placed.append(_place(obj, f"cluster {name!r}, object #{i + 1}"))
    placed.sort(key=lambda p: p.sort_key)

    by_identity: dict[tuple[str, str, str, str], _Placed] = {}
    by_path: dict[str, _Placed] = {}
    files: list[ManifestFile] = []
    for p in placed:
        twin = by_identity.get(p.identity)
        if twin is not None:
            raise SynthError(
                f"cluster {name!r}: {_describe(p)} is synthesized twice "
                f"({twin.path} and {p.path}); each object must come from one component"
            )
        clash = by_path.get(p.path)
        if clash is not None:
            raise SynthError(
                f"cluster {name!r}: {_describe(clash)} and {_describe(p)} would both be "
                f"written to {p.path}; give them different names"
            )
        by_identity[p.identity] = p
        by_path[p.path] = p
        try:
            content = _serialized(p.manifest)
        except yaml.YAMLError as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise SynthError(
                f"cluster {name!r}: {_describe(p)} can't be written as YAML: {first}"
            ) from exc
        files.append(ManifestFile(p.path, content, Head.of(p.manifest)))
    if not files:
        raise SynthError(f"cluster {name!r}: the profile synthesizes no objects")
    files.append(ManifestFile(KUSTOMIZATION_FILE, kustomization(f.path for f in files)))
    return ClusterOutput(name=name, files=tuple(files))
