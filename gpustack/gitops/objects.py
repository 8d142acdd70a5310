"""Build the Argo CD and Flux objects that deliver each cluster folder.

Everything a tool needs is derived, not configured twice: the folder paths from the output
layout (``<gitops.path>/clusters/<name>``), the kinds an AppProject allows from the manifests
the cluster really holds, and Flux's health checks from its DaemonSets.

With ``gitops.argocd.render: plugin`` an Application does not apply the committed folder: Argo CD
renders the cluster from its profile with gpustack's config management plugin
(:mod:`~gpustack.gitops.argocd_plugin`), named with the plugin's version, its source path the
folder holding the profile and its ``profile`` parameter the file's name. Where that folder is
inside the repository is derived from where the files are (:mod:`gpustack.gitops.repository`).

Honest health: gpustack's driver DaemonSet updates ``OnDelete`` (a node keeps its driver until
it is drained), so after a driver bump its pods never all run the new template by themselves.
Flux's ``wait: true`` would then keep the Kustomization not-Ready forever; instead
``healthChecks`` names every DaemonSet that rolls by itself, and leaves out the ``OnDelete``
ones. Argo CD needs a resource health customization for the same DaemonSet (the docs' GitOps page).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpustack.gitops import argocd_plugin
from gpustack.profile.model import Profile
from gpustack.synth.errors import SynthError
from gpustack.synth.header import with_header
from gpustack.synth.layout import (
    KUSTOMIZATION_FILE,
    ClusterOutput,
    Head,
    ManifestFile,
    kustomization,
)
from gpustack.synth.plan import CLUSTERS_DIR
from gpustack.synth.serialize import dump_yaml

ARGOCD_API = "argoproj.io/v1alpha1"
FLUX_SOURCE_API = "source.toolkit.fluxcd.io/v1"
FLUX_KUSTOMIZE_API = "kustomize.toolkit.fluxcd.io/v1"
#: Name of the per-cluster Flux objects (each cluster's Flux has its own).
FLUX_NAME = "gpustack"
GITOPS_DIR = "gitops"


@dataclass(frozen=True)
class Delivered:
    """One cluster to deliver: its profile and the manifests synthesized for it."""

    profile: Profile
    output: ClusterOutput
    #: The profile file's path from the repository root, for a cluster Argo CD renders with
    #: the plugin (:func:`plugin_source`); ``None`` for the others.
    source: str | None = None
    #: With the plugin: the repository paths of every file the profile is read from (itself,
    #: then each base), which its Application's manifest-generate-paths annotation names.
    inputs: tuple[str, ...] = ()
    #: How the generated-file header names the profile (:func:`gpustack.synth.header.
    #: source_name`).
    origin: str = ""


def cluster_path(profile: Profile) -> str:
    """The cluster folder inside the repository: ``<gitops.path>/clusters/<name>``."""
    return posixpath.join(profile.gitops.path, CLUSTERS_DIR, profile.metadata.name)


def renders_with_plugin(profile: Profile) -> bool:
    argo = profile.gitops.argocd
    return argo.enabled and argo.render == "plugin"


def plugin_source(profile: Profile, file: Path, out: Path) -> str | None:
    """:attr:`Delivered.source` of a cluster: its profile's place in the repository when the
    plugin renders it (:mod:`gpustack.gitops.repository`), else ``None`` (nothing to check)."""
    if not renders_with_plugin(profile):
        return None
    from gpustack.gitops.repository import profile_in_repository

    return profile_in_repository(profile, file, out)


def plugin_inputs(profile: Profile, files: Sequence[Path], out: Path) -> tuple[str, ...]:
    """:attr:`Delivered.inputs` of a cluster: the repository paths of the files its profile is
    read from when the plugin renders it; empty for the others."""
    if not renders_with_plugin(profile):
        return ()
    from gpustack.gitops.repository import profile_in_repository

    return tuple(profile_in_repository(profile, f, out) for f in files)


#: The annotation that tells Argo CD which paths an Application's manifests depend on: a
#: commit that touches none of them does not make the repo-server generate them again (Argo CD
#: docs, operator-manual/high_availability.md, "Manifest Paths Annotation"; ``;`` separates
#: paths, ``/`` starts one at the repository root, others are relative to ``source.path``).
GENERATE_PATHS = "argocd.argoproj.io/manifest-generate-paths"
#: Argo CD compares through a server-side apply dry run (the "Server-Side Diff" strategy, stable
#: since Argo CD 3.1, chosen per Application by this annotation): the live object is compared
#: with what the API server would make of the folder's object, defaults and all, which is what
#: the e2e tier proves empty for every example folder (``kubectl diff --server-side``). Without
#: it, ``ServerSideApply=true`` selects the structured-merge diff that Argo CD's diff-strategies
#: page calls discontinued, with known false diffs for CRDs that declare defaults.
COMPARE_OPTIONS = ("argocd.argoproj.io/compare-options", "ServerSideDiff=true")


def _parse(content: bytes) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.load(
        content, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    )
    return loaded


def _heads(output: ClusterOutput) -> list[tuple[Head, ManifestFile]]:
    """Each object file of ``output`` with its object's :class:`Head`: kept from rendering, or
    parsed from the file (a cluster read back from disk)."""
    return [
        (f.head or Head.of(_parse(f.content)), f)
        for f in output.files
        if f.path != KUSTOMIZATION_FILE
    ]


def _group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0]


def _argocd(delivered: Sequence[Delivered]) -> dict[str, bytes]:
    """One ApplicationSet and one AppProject per (namespace, project); clusters in one must
    share the repository, revision and output path (one git generator reads them)."""
    groups: dict[tuple[str, str], list[Delivered]] = {}
    for d in delivered:
        a = d.profile.gitops.argocd
        groups.setdefault((a.namespace, a.project), []).append(d)
    files: dict[str, bytes] = {}
    for (namespace, project), members in sorted(groups.items()):
        shared = _shared(members[0].profile)
        for m in members[1:]:
            if _shared(m.profile) != shared:
                raise SynthError(
                    f"clusters {members[0].profile.metadata.name!r} and "
                    f"{m.profile.metadata.name!r} share Argo CD project {project!r} but not "
                    "gitops.repoURL, revision, path and argocd.render and cluster.namespace "
                    "(one ApplicationSet reads them); give them the same, or another "
                    "gitops.argocd.project"
                )
        name = "gpustack" if project == "gpustack" else f"gpustack-{project}"
        origins = [m.origin for m in members]
        files[f"argocd/applicationset-{project}.yaml"] = with_header(
            dump_yaml(_application_set(name, namespace, project, members)), origins
        )
        files[f"argocd/appproject-{project}.yaml"] = with_header(
            dump_yaml(_app_project(namespace, project, members)), origins
        )
    return files


def _shared(p: Profile) -> tuple[str | None, str, str, str, str]:
    """What the clusters of one ApplicationSet must agree on."""
    g = p.gitops
    return (g.repo_url, g.revision, g.path, g.argocd.render, p.cluster.namespace)


def _generator_and_source(
    members: Sequence[Delivered],
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """The generator, the template's source and the template's cluster name parameter.

    Committed: a git generator over the cluster folders, each Application applying one.
    Plugin: a list generator with each cluster's profile folder and file, each Application
    rendering its profile with the plugin at the same revision.
    """
    g = members[0].profile.gitops
    ordered = sorted(members, key=lambda m: m.profile.metadata.name)
    source: dict[str, Any] = {"repoURL": g.repo_url, "targetRevision": g.revision}
    if g.argocd.render == "plugin":
        elements = []
        for m in ordered:
            assert m.source is not None, "plugin-rendered clusters carry their profile's path"
            folder, file = posixpath.split(m.source)
            elements.append(
                {
                    "cluster": m.profile.metadata.name,
                    "path": folder or ".",
                    "profile": file,
                    # the profile and its bases: the plugin's output depends on nothing else
                    # in the repository (gpustack itself is in the plugin's name)
                    "generatePaths": ";".join("/" + p for p in m.inputs),
                }
            )
        source["path"] = "{{.path}}"
        source["plugin"] = {
            "name": argocd_plugin.plugin_name(),
            "parameters": [{"name": argocd_plugin.PARAMETER, "string": "{{.profile}}"}],
        }
        return {"list": {"elements": elements}}, source, "{{.cluster}}"
    directories = [{"path": cluster_path(m.profile)} for m in ordered]
    source["path"] = "{{.path.path}}"
    generator = {"git": {"repoURL": g.repo_url, "revision": g.revision, "directories": directories}}
    return generator, source, "{{.path.basename}}"


def _application_set(
    name: str, namespace: str, project: str, members: Sequence[Delivered]
) -> dict[str, Any]:
    generator, source, cluster = _generator_and_source(members)
    # committed: the cluster folder (source.path) is all an Application deploys
    paths = "{{.generatePaths}}" if "list" in generator else "."
    return {
        "apiVersion": ARGOCD_API,
        "kind": "ApplicationSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "goTemplate": True,
            "goTemplateOptions": ["missingkey=error"],
            "generators": [generator],
            "template": {
                "metadata": {
                    "name": f"gpustack-{cluster}",
                    "annotations": {GENERATE_PATHS: paths, COMPARE_OPTIONS[0]: COMPARE_OPTIONS[1]},
                },
                "spec": {
                    "project": project,
                    "source": source,
                    # The cluster as registered in Argo CD, named like its profile.
                    "destination": {
                        "name": cluster,
                        "namespace": members[0].profile.cluster.namespace,
                    },
                    "syncPolicy": {
                        "automated": {"prune": True, "selfHeal": True},
                        "syncOptions": ["ServerSideApply=true"],
                    },
                },
            },
            # A folder that leaves git deletes its Application, never the running GPU stack.
            "syncPolicy": {"preserveResourcesOnDeletion": True},
        },
    }


def _app_project(namespace: str, project: str, members: Sequence[Delivered]) -> dict[str, Any]:
    cluster_kinds: set[tuple[str, str]] = set()
    namespaced_kinds: set[tuple[str, str]] = set()
    destinations: set[tuple[str, str]] = set()
    for m in members:
        for head, _ in _heads(m.output):
            kind = (_group_of(head.api_version), head.kind)
            ns = head.namespace
            if ns:
                namespaced_kinds.add(kind)
                destinations.add((m.profile.metadata.name, ns))
            else:
                cluster_kinds.add(kind)
    g = members[0].profile.gitops
    return {
        "apiVersion": ARGOCD_API,
        "kind": "AppProject",
        "metadata": {"name": project, "namespace": namespace},
        "spec": {
            "description": "gpustack GPU stacks: only their repository, clusters and kinds",
            "sourceRepos": [g.repo_url],
            "destinations": [{"name": c, "namespace": ns} for c, ns in sorted(destinations)],
            "clusterResourceWhitelist": [
                {"group": gr, "kind": k} for gr, k in sorted(cluster_kinds)
            ],
            "namespaceResourceWhitelist": [
                {"group": gr, "kind": k} for gr, k in sorted(namespaced_kinds)
            ],
        },
    }


def health_checks(output: ClusterOutput) -> list[dict[str, str]]:
    """Every DaemonSet that rolls out by itself (not ``OnDelete``): what Flux waits for."""
    checks = []
    for head, file in _heads(output):
        if head.kind != "DaemonSet":
            continue
        spec = _parse(file.content).get("spec", {})
        if spec.get("updateStrategy", {}).get("type", "RollingUpdate") == "OnDelete":
            continue
        checks.append(
            {
                "apiVersion": head.api_version,
                "kind": "DaemonSet",
                "name": head.name,
                "namespace": head.namespace,
            }
        )
    return checks


def _flux(d: Delivered) -> dict[str, bytes]:
    p = d.profile
    g, f = p.gitops, p.gitops.flux
    meta = {"name": FLUX_NAME, "namespace": f.namespace}
    if f.source == "oci":
        source: dict[str, Any] = {
            "apiVersion": FLUX_SOURCE_API,
            "kind": "OCIRepository",
            "metadata": meta,
            "spec": {"interval": f.interval, "url": f.oci_url, "ref": {"tag": g.revision}},
        }
        # The artifact holds the output folder (`flux push artifact --path=<gitops.path>`).
        path = posixpath.join(".", CLUSTERS_DIR, p.metadata.name)
    else:
        source = {
            "apiVersion": FLUX_SOURCE_API,
            "kind": "GitRepository",
            "metadata": meta,
            "spec": {
                "interval": f.interval,
                "url": g.repo_url,
                "ref": {"branch": g.revision},
                "sparseCheckout": [cluster_path(p)],
            },
        }
        path = "./" + cluster_path(p)
    kustomize = {
        "apiVersion": FLUX_KUSTOMIZE_API,
        "kind": "Kustomization",
        "metadata": meta,
        "spec": {
            "interval": f.interval,
            "sourceRef": {"kind": source["kind"], "name": FLUX_NAME},
            "path": path,
            "prune": True,
            # Not `wait`: the driver DaemonSet (OnDelete) would keep it not-Ready after a bump.
            "wait": False,
            "healthChecks": health_checks(d.output),
            "timeout": f.timeout,
        },
    }
    folder = f"flux/{p.metadata.name}"
    source_file = f"{source['kind'].lower()}-{FLUX_NAME}.yaml"
    flux_file = f"kustomization-{FLUX_NAME}.yaml"
    return {
        f"{folder}/{source_file}": with_header(dump_yaml(source), (d.origin,)),
        f"{folder}/{flux_file}": with_header(dump_yaml(kustomize), (d.origin,)),
        f"{folder}/{KUSTOMIZATION_FILE}": with_header(
            kustomization([source_file, flux_file]), (d.origin,)
        ),
    }


def gitops_files(delivered: Iterable[Delivered]) -> dict[str, bytes]:
    """Every file of ``<out>/gitops/`` by path relative to it (empty: no tool enabled)."""
    todo = list(delivered)
    argo = [d for d in todo if d.profile.gitops.argocd.enabled]
    files = _argocd(argo) if argo else {}
    for d in todo:
        if d.profile.gitops.flux.enabled:
            files.update(_flux(d))
    return dict(sorted(files.items()))


def objects(files: Mapping[str, bytes]) -> list[dict[str, Any]]:
    """The Argo CD and Flux objects among ``files`` (for tests and tools)."""
    return [
        yaml.safe_load(content)
        for path, content in files.items()
        if posixpath.basename(path) != KUSTOMIZATION_FILE
    ]
