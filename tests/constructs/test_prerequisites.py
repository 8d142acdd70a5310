"""Each cluster folder states its prerequisites, and the statement is what its objects need
(issue 20, item 4).

The statement (the ``gpustack-prerequisites`` ConfigMap, :mod:`gpustack.profile.prerequisites`)
is held to the folder's own objects: every kind they use that is neither Kubernetes' own (the
core group, a group without a dot, a ``*.k8s.io`` group) nor defined by a CRD of the folder is
stated with its CRD, and nothing else is; every file a pod waits for that no pod of the folder
writes is stated; and the folder creates no custom resource of a CRD it ships itself (kubectl
cannot create it in the call that creates the CRD, so the folder would not apply in one pass).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpustack.constructs.common import PREREQUISITES, PREREQUISITES_KEY
from tests.constructs.conftest import REPO, Synth, profile
from tests.constructs.test_readiness_files import folder_manifests, manifest_files

VARIANTS: dict[str, dict[str, Any]] = {
    "own-nfd": profile(nodeFeatureDiscovery={"enabled": False}),
    "own-nfd-no-rule": profile(nodeFeatureDiscovery={"enabled": False, "gpuNodeRule": False}),
    "service-monitor": profile(dcgmExporter={"enabled": True, "serviceMonitor": {"enabled": True}}),
    "mofed": profile(driver={"rdma": {"enabled": True}}),
    "host-mofed": profile(driver={"rdma": {"enabled": True, "useHostMofed": True}}),
}


def builtin(group: str) -> bool:
    return "." not in group or group.endswith(".k8s.io")


def stated(manifests: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, str]]]:
    (config_map,) = [
        m for m in manifests if m["kind"] == "ConfigMap" and m["metadata"]["name"] == PREREQUISITES
    ]
    statement: dict[str, list[dict[str, str]]] = yaml.safe_load(
        config_map["data"][PREREQUISITES_KEY]
    )
    return statement


def check(manifests: Sequence[Mapping[str, Any]]) -> dict[str, list[dict[str, str]]]:
    statement = stated(manifests)
    assert set(statement) == {"crds", "files", "applyFirst", "owns"}
    shipped = {
        (m["spec"]["group"], m["spec"]["names"]["kind"]): m["metadata"]["name"]
        for m in manifests
        if m["kind"] == "CustomResourceDefinition"
    }
    used = {(m["apiVersion"].rpartition("/")[0], m["kind"]) for m in manifests}
    # a custom resource of a CRD the folder ships is applied in one pass only after that CRD,
    # which the statement names (and only then)
    first = {c["name"] for c in statement["applyFirst"]}
    assert {shipped[k] for k in used & set(shipped)} == first, "not one pass, and not stated"
    # the folder names every CRD it ships as its own (each is also another project's: NFD's,
    # NVIDIA's DRA driver's), with the chart that must then be installed without it
    assert sorted(c["name"] for c in statement["owns"]) == sorted(shipped.values())
    assert all(c["alsoShippedBy"] and c["because"] for c in statement["owns"])
    external = {(g, k) for g, k in used if not builtin(g)} - set(shipped)
    assert {(c["apiVersion"].rpartition("/")[0], c["kind"]) for c in statement["crds"]} == external
    for crd in statement["crds"]:
        group = crd["apiVersion"].rpartition("/")[0]
        assert crd["name"].endswith(f".{group}") and crd["from"] and crd["because"]
    files = manifest_files(manifests)
    waits = set().union(*(w for w, _ in files.values()))
    writes = set().union(*(w for _, w in files.values()))
    assert {f["name"] for f in statement["files"]} == waits - writes
    return statement


def example_folders() -> list[Path]:
    return sorted(p for p in (REPO / "dist" / "clusters").iterdir() if p.is_dir())


@pytest.mark.parametrize("folder", example_folders(), ids=lambda p: p.name)
def test_every_example_states_what_it_needs(folder: Path) -> None:
    check(folder_manifests(folder.name))


@pytest.mark.parametrize("name", list(VARIANTS))
def test_every_variant_states_what_it_needs(synth: Synth, name: str) -> None:
    statement = check([o.manifest for o in synth(VARIANTS[name])])
    # each variant states something, or nothing, for the reason it exists
    expected = {
        "own-nfd": (["nodefeaturerules.nfd.k8s-sigs.io"], []),
        "own-nfd-no-rule": ([], []),
        "service-monitor": (["servicemonitors.monitoring.coreos.com"], []),
        "mofed": ([], ["/run/mellanox/drivers/.driver-ready"]),
        "host-mofed": ([], []),
    }[name]
    assert ([c["name"] for c in statement["crds"]], [f["name"] for f in statement["files"]]) == (
        expected
    )


@pytest.mark.parametrize("folder", example_folders(), ids=lambda p: p.name)
def test_every_object_of_a_folder_has_one_owner(folder: Path) -> None:
    """Issue #35 item 4: no object of a folder is shipped twice (two components writing one
    object would fight over it on every sync), and each names the one gpustack component that
    owns it."""
    seen: dict[tuple[str, str, str, str], str] = {}
    for m in folder_manifests(folder.name):
        meta = m["metadata"]
        key = (
            m["apiVersion"].rpartition("/")[0],
            m["kind"],
            meta.get("namespace", ""),
            meta["name"],
        )
        component = meta["labels"]["app.kubernetes.io/component"]
        assert key not in seen, f"{key} shipped by {seen[key]} and {component}"
        seen[key] = component
    assert seen
